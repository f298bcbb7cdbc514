import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addressAllowed, parseNetwork } from "../../src/lib/networks";

/**
 * Allowed networks (contract section 18, src/lib/networks.ts) against an independent reference:
 * addresses as BigInts, a range as its first address and prefix, membership by shifting.
 */

const v4 = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join(".");
const v6 = (n: bigint) => Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(":");
const inRange = (address: bigint, network: bigint, prefix: number, width: number) =>
  address >> BigInt(width - prefix) === network >> BigInt(width - prefix);

const ipv4 = fc.bigInt({ min: 0n, max: (1n << 32n) - 1n });
const ipv6 = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });

describe("addressAllowed agrees with the reference", () => {
  it("IPv4 addresses and ranges", () => {
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 0, max: 32 }), (address, network, prefix) => {
        const parsed = parseNetwork(`${v4(network)}/${prefix}`);
        if (!parsed.ok) throw new Error(parsed.message);
        expect(addressAllowed(v4(address), [parsed.cidr])).toBe(inRange(address, network, prefix, 32));
      }),
      { numRuns: 2000 },
    );
  });

  it("IPv6 addresses and ranges (also near the range: the address shares the network's top bits)", () => {
    fc.assert(
      fc.property(ipv6, ipv6, fc.integer({ min: 0, max: 128 }), fc.boolean(), (random, network, prefix, near) => {
        const keep = BigInt(128 - prefix);
        const address = near ? ((network >> keep) << keep) | ((random & ((1n << keep) - 1n)) ^ (random & 1n)) : random;
        const parsed = parseNetwork(`${v6(network)}/${prefix}`);
        if (!parsed.ok) throw new Error(parsed.message);
        expect(addressAllowed(v6(address), [parsed.cidr])).toBe(inRange(address, network, prefix, 128));
      }),
      { numRuns: 2000 },
    );
  });

  it("a list allows what any of its ranges allows; the empty list every address", () => {
    fc.assert(
      fc.property(ipv4, fc.array(fc.tuple(ipv4, fc.integer({ min: 8, max: 32 })), { maxLength: 20 }), (address, ranges) => {
        const cidrs = ranges.map(([n, p]) => {
          const parsed = parseNetwork(`${v4(n)}/${p}`);
          if (!parsed.ok) throw new Error(parsed.message);
          return parsed.cidr;
        });
        const expected = ranges.length === 0 || ranges.some(([n, p]) => inRange(address, n, p, 32));
        expect(addressAllowed(v4(address), cidrs)).toBe(expected);
      }),
    );
  });

  it("an IPv4 range never admits an IPv6 address, nor the reverse; an IPv4-mapped IPv6 address is its IPv4", () => {
    expect(addressAllowed("2001:db8::1", ["0.0.0.0/0"])).toBe(false);
    expect(addressAllowed("192.0.2.1", ["::/0"])).toBe(false);
    expect(addressAllowed("::ffff:192.0.2.1", ["192.0.2.0/24"])).toBe(true);
    // The same address is also the IPv6 address it is written as (a property run found ::ffff:0:0 refused by ::/80).
    expect(addressAllowed("::ffff:0:0", ["::/80"])).toBe(true);
    expect(addressAllowed("::ffff:192.0.2.1", ["::ffff:0:0/96"])).toBe(true);
    expect(addressAllowed("::ffff:192.0.2.1", ["2001:db8::/32", "198.51.100.0/24"])).toBe(false);
    expect(addressAllowed(null, ["0.0.0.0/0"])).toBe(false);
    expect(addressAllowed("not an address", ["0.0.0.0/0"])).toBe(false);
  });
});

describe("parseNetwork: strict notations, written canonically", () => {
  it.each([
    ["10.1.2.3/8", "10.0.0.0/8"],
    ["192.0.2.7", "192.0.2.7/32"],
    ["2001:DB8::1/32", "2001:db8::/32"],
    ["2001:db8::1", "2001:db8::1/128"],
    ["0.0.0.0/0", "0.0.0.0/0"],
  ])("%s → %s", (input, cidr) => {
    expect(parseNetwork(input)).toEqual({ ok: true, cidr });
  });

  it.each([
    "10.0.0.0/33",
    "2001:db8::/129",
    "127.1",
    "0x7f.0.0.1/8",
    "fe80::1%eth0/64",
    "10.0.0.0/",
    "10.0.0.0/8/8",
    "",
    "example.com/24",
    "10.0.0.0/-1",
    "10.0.0.0/ 8",
  ])("%j is refused", (input) => {
    expect(parseNetwork(input).ok).toBe(false);
  });
});
