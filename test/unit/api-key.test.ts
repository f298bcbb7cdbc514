import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateApiKey, parseApiKey, parseBearer } from "../../src/auth/api-key";

/**
 * Key parsing and its checksum, and the bearer header: plain functions (src/auth/api-key.ts).
 * Authentication over HTTP, with real keys in real stores, is test/worker/api-keys.test.ts.
 */

describe("key format", () => {
  it("is the prefix plus 40 base62 characters", () => {
    expect(generateApiKey("analytics")).toMatch(/^cak_[0-9A-Za-z]{40}$/);
    expect(generateApiKey("members")).toMatch(/^cbk_[0-9A-Za-z]{40}$/);
  });

  it("parses its own keys with the right kind", () => {
    expect(parseApiKey(generateApiKey("analytics"))).toMatchObject({ kind: "key", keyKind: "analytics" });
    expect(parseApiKey(generateApiKey("members"))).toMatchObject({ kind: "key", keyKind: "members" });
  });

  it("never repeats (CSPRNG)", () => {
    const keys = new Set(Array.from({ length: 500 }, () => generateApiKey("analytics")));
    expect(keys.size).toBe(500);
  });

  it.each([
    ["too short", (k: string) => k.slice(0, -1)],
    ["too long", (k: string) => `${k}a`],
    ["unknown prefix", (k: string) => `cxk_${k.slice(4)}`],
    ["prefix swapped (checksum covers it)", (k: string) => `cbk_${k.slice(4)}`],
    ["non-base62 character", (k: string) => `${k.slice(0, 10)}-${k.slice(11)}`],
    ["checksum changed", (k: string) => k.slice(0, -1) + (k.endsWith("0") ? "1" : "0")],
  ])("refuses a key with %s", (_name, mutate) => {
    expect(parseApiKey(mutate(generateApiKey("analytics")))).toEqual({ kind: "malformed" });
  });

  it("property: any single-character change of a valid key is refused by the checksum", () => {
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    fc.assert(
      fc.property(fc.constantFrom("analytics" as const, "members" as const), fc.nat(39), fc.nat(61), (kind, index, pick) => {
        const key = generateApiKey(kind);
        const at = 4 + index;
        const replacement = alphabet[pick] === key[at] ? alphabet[(pick + 1) % 62] : alphabet[pick];
        const mutated = key.slice(0, at) + replacement + key.slice(at + 1);
        expect(parseApiKey(mutated)).toEqual({ kind: "malformed" });
      }),
      { numRuns: 500 },
    );
  });

  it("property: the parser never throws, whatever it is given", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.anything()), (input) => {
        const parsed = parseApiKey(input);
        expect(["malformed", "key"]).toContain(parsed.kind);
        if (typeof input !== "string") expect(parsed.kind).toBe("malformed");
      }),
      { numRuns: 1000 },
    );
  });

  it("property: the bearer parser never throws", () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: "binary" })), (header) => {
        expect(["missing", "malformed", "token"]).toContain(parseBearer(header).kind);
      }),
      { numRuns: 1000 },
    );
  });
});
