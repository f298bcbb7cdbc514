import { describe, expect, it } from "vitest";
import { AccessGuesses } from "../../src/analytics/access-guess";
import type { AnalyticsAccess } from "../../src/rules/analytics-access";

const access = (repos: number | null): AnalyticsAccess => ({
  homeKey: "acme",
  installedAt: 0,
  accessibleRepoKeys: repos === null ? null : Array.from({ length: repos }, (_, i) => `r${i}`),
  reposMustHaveEvents: [],
  excludedRepoKeys: [],
});
const ok = (value: AnalyticsAccess) => ({ ok: true as const, value });

describe("access guesses: kept only for callers let through, bounded in entries and size", () => {
  it("one key per folded organization, caller and list of folded repositories", () => {
    expect(AccessGuesses.key("Acme", "1", ["API"])).toBe(AccessGuesses.key("acme", "1", ["api"]));
    expect(AccessGuesses.key("acme", "1", undefined)).not.toBe(AccessGuesses.key("acme", "2", undefined));
    // A list is one entry whatever its order and case; another list (or none) is another entry.
    expect(AccessGuesses.key("acme", "1", ["Web", "api"])).toBe(AccessGuesses.key("acme", "1", ["API", "web"]));
    expect(AccessGuesses.key("acme", "1", ["api", "web"])).not.toBe(AccessGuesses.key("acme", "1", ["api"]));
    expect(AccessGuesses.key("acme", "1", ["api"])).not.toBe(AccessGuesses.key("acme", "1", undefined));
    // Names cannot run into each other: a list of two is not one name holding the separator.
    expect(AccessGuesses.key("acme", "1", ["a", "b"])).not.toBe(AccessGuesses.key("acme", "1", ["a\u0000b"]));
  });

  it("a refused verdict or a refused access drops the guess", () => {
    const guesses = new AccessGuesses();
    guesses.record("k", ok(access(null)), true);
    expect(guesses.get("k")).toEqual(access(null));
    guesses.record("k", ok(access(null)), false);
    expect(guesses.get("k")).toBeUndefined();
    guesses.record("k", ok(access(null)), true);
    guesses.record("k", { ok: false, code: "org_not_found", message: "", details: [] } as never, true);
    expect(guesses.get("k")).toBeUndefined();
  });

  it("the oldest entry goes first; an access naming too many repositories is not kept", () => {
    const guesses = new AccessGuesses(2, 3);
    guesses.record("a", ok(access(1)), true);
    guesses.record("b", ok(access(1)), true);
    guesses.record("c", ok(access(1)), true);
    expect([guesses.get("a"), guesses.get("b"), guesses.get("c")].map(Boolean)).toEqual([false, true, true]);
    guesses.record("d", ok(access(4)), true);
    expect(guesses.get("d")).toBeUndefined();
  });
});
