import { describe, expect, it } from "vitest";
import { throttleKey } from "../../src/auth/flood";

describe("throttleKey: whom a failed authentication is counted against", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    ["2001:db8:7:64::1", "2001:db8:7:64::/64"],
    ["2001:0DB8:0007:0064:ffff:1:2:3", "2001:db8:7:64::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    // An IPv4 address in IPv6 clothing is that IPv4 address.
    ["::ffff:198.51.100.9", "198.51.100.9"],
  ])("%s → %s", (address, key) => {
    expect(throttleKey(address)).toBe(key);
  });

  it("anything unparsable is counted as itself (never merged with others)", () => {
    expect(throttleKey("not an address")).toBe("not an address");
    expect(throttleKey("1:2:3:4:5:6:7:8:9")).toBe("1:2:3:4:5:6:7:8:9");
  });
});
