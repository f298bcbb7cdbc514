import { describe, expect, it } from "vitest";
import { decideKeyCreation, judgeKey, keyLive, nameKeyOf } from "../../src/rules/keys";
import { HOUR_MS, toHour } from "../../src/rules/sessions";

/** Contract sections 2 and 18's key verdict and creation as tables (src/rules/keys.ts), without a clock or storage. */

const T0 = Date.UTC(2026, 10, 27, 9, 30);
const ok = { blocked: false };
const key = { expiresAt: null, allowedNetworks: [] };
const office = { expiresAt: null, allowedNetworks: ["192.0.2.0/24", "2001:db8::/32"] };

describe("judgeKey: a stored, unexpired key of an unblocked owner, from an allowed address; last used at most once an hour", () => {
  it.each<[string, Parameters<typeof judgeKey>, ReturnType<typeof judgeKey>]>([
    ["no account", [undefined, key, null, "192.0.2.1", T0], { valid: false, reason: "no_account" }],
    ["the owner is blocked", [{ blocked: true }, key, null, "192.0.2.1", T0], { valid: false, reason: "blocked" }],
    [
      "no key with this hash (revoked or regenerated)",
      [ok, undefined, null, "192.0.2.1", T0],
      { valid: false, reason: "unknown" },
    ],
    ["expired at this instant", [ok, { ...key, expiresAt: T0 }, null, "192.0.2.1", T0], { valid: false, reason: "expired" }],
    [
      "expired and from outside its networks: the key's verdict comes first",
      [ok, { ...office, expiresAt: T0 }, null, "198.51.100.1", T0],
      { valid: false, reason: "expired" },
    ],
    [
      "one ms before expiry",
      [ok, { ...key, expiresAt: T0 + 1 }, null, "192.0.2.1", T0],
      { valid: true, ipAllowed: true, lastUsed: toHour(T0) },
    ],
    ["never used: this hour is recorded", [ok, key, null, null, T0], { valid: true, ipAllowed: true, lastUsed: toHour(T0) }],
    [
      "used this hour already: nothing to record",
      [ok, key, toHour(T0), "192.0.2.1", T0 + 60_000],
      { valid: true, ipAllowed: true, lastUsed: null },
    ],
    [
      "used last hour: the new hour",
      [ok, key, toHour(T0) - HOUR_MS, "192.0.2.1", T0],
      { valid: true, ipAllowed: true, lastUsed: toHour(T0) },
    ],
    [
      "inside an allowed IPv4 range",
      [ok, office, null, "192.0.2.200", T0],
      { valid: true, ipAllowed: true, lastUsed: toHour(T0) },
    ],
    [
      "inside an allowed IPv6 range",
      [ok, office, null, "2001:db8:1::5", T0],
      { valid: true, ipAllowed: true, lastUsed: toHour(T0) },
    ],
    [
      "outside every range: refused, not a use",
      [ok, office, null, "198.51.100.1", T0],
      { valid: true, ipAllowed: false, lastUsed: null },
    ],
    [
      "no address reported, networks set: refused",
      [ok, office, null, null, T0],
      { valid: true, ipAllowed: false, lastUsed: null },
    ],
  ])("%s", (_name, args, expected) => {
    expect(judgeKey(...args)).toEqual(expected);
  });
});

describe("decideKeyCreation: a taken name regenerates, a new one needs room", () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ nameKey: `key ${i}` }));
  it.each<[string, Parameters<typeof decideKeyCreation>, ReturnType<typeof decideKeyCreation>]>([
    ["no keys yet", [[], "default", 10], { kind: "create" }],
    ["9 keys: room for a tenth", [keys(9), "new", 10], { kind: "create" }],
    ["10 keys: a new name is refused", [keys(10), "new", 10], { kind: "limit_reached" }],
    ["10 keys: a taken name regenerates", [keys(10), "key 3", 10], { kind: "regenerate", existing: { nameKey: "key 3" } }],
  ])("%s", (_name, args, expected) => {
    expect(decideKeyCreation(...args)).toEqual(expected);
  });

  it("names are compared case-insensitively", () => {
    expect(nameKeyOf("Nightly JOB")).toBe(nameKeyOf("nightly job"));
  });
});

describe("keyLive: only unexpired keys get a KV lookup", () => {
  it.each<[number | null, boolean]>([
    [null, true],
    [T0 + 1, true],
    [T0, false],
    [T0 - 1, false],
  ])("expiresAt %s at T0 → %s", (expiresAt, live) => {
    expect(keyLive({ expiresAt }, T0)).toBe(live);
  });
});
