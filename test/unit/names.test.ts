import { describe, expect, it } from "vitest";
import { foldName } from "../../src/lib/names";

describe("foldName: ASCII letters fold, nothing else does (contract section 5)", () => {
  it.each([
    ["Acme", "acme"],
    ["ACME-Corp", "acme-corp"],
    ["already-folded", "already-folded"],
    // The Kelvin sign would fold to "k" under toLowerCase: a name GitHub never issues must alias nothing.
    ["\u212Acme", "\u212Acme"],
    ["ÄCME", "Äcme"],
  ])("%s → %s", (name, key) => {
    expect(foldName(name)).toBe(key);
  });
});
