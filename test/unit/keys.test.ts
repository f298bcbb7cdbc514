import { describe, expect, it } from "vitest";
import { judgeKey, keyLive } from "../../src/rules/keys";
import { HOUR_MS, toHour } from "../../src/rules/sessions";

/** Contract section 2's key verdict as a table (src/rules/keys.ts), without a clock or storage. */

const T0 = Date.UTC(2026, 10, 27, 9, 30);
const ok = { blocked: false };
const key = { keyId: "k1", expiresAt: null };

describe("judgeKey: the stored, unexpired key of an unblocked owner; last used moved at most once an hour", () => {
  it.each<[string, Parameters<typeof judgeKey>, ReturnType<typeof judgeKey>]>([
    ["no account", [undefined, key, "k1", null, T0], { valid: false, reason: "no_account" }],
    ["the owner is blocked", [{ blocked: true }, key, "k1", null, T0], { valid: false, reason: "blocked" }],
    ["no key stored (revoked)", [ok, undefined, "k1", null, T0], { valid: false, reason: "unknown" }],
    [
      "another key stored (regenerated)",
      [ok, { keyId: "k2", expiresAt: null }, "k1", null, T0],
      { valid: false, reason: "unknown" },
    ],
    ["expired at this instant", [ok, { keyId: "k1", expiresAt: T0 }, "k1", null, T0], { valid: false, reason: "expired" }],
    ["one ms before expiry", [ok, { keyId: "k1", expiresAt: T0 + 1 }, "k1", null, T0], { valid: true, lastUsed: toHour(T0) }],
    ["never used: this hour is recorded", [ok, key, "k1", null, T0], { valid: true, lastUsed: toHour(T0) }],
    ["used this hour already: nothing to record", [ok, key, "k1", toHour(T0), T0 + 60_000], { valid: true, lastUsed: null }],
    ["used last hour: the new hour", [ok, key, "k1", toHour(T0) - HOUR_MS, T0], { valid: true, lastUsed: toHour(T0) }],
  ])("%s", (_name, args, expected) => {
    expect(judgeKey(...args)).toEqual(expected);
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
