import { describe, expect, it } from "vitest";
import { foldName, repoKey } from "../../src/lib/names";

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

describe("repoKey: one fold for every repository key (the object's, D1's, the export's access)", () => {
  it.each([
    ["API", "api"],
    ["My.Repo_2-x", "my.repo_2-x"],
  ])("%s → %s", (name, key) => {
    expect(repoKey(name)).toBe(key);
  });
});
