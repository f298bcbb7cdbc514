import { describe, expect, it } from "vitest";
import { nextPullRequestState, supersedes } from "../../src/rules/pull-request-state";

const state = (updatedAt: number, mergedAt: number | null, author: string) => ({ updatedAt, mergedAt, author });

describe("the merge rule (contract section 17)", () => {
  it.each([
    ["newer replaces", state(1, null, "a"), state(2, null, "b"), state(2, null, "b")],
    ["older changes nothing", state(2, null, "a"), state(1, null, "b"), state(2, null, "a")],
    ["equal versions keep the first", state(1, null, "a"), state(1, null, "b"), state(1, null, "a")],
    ["equal merged versions keep the first", state(1, 5, "a"), state(1, 6, "b"), state(1, 5, "a")],
    ["a merge beats an unmerged state of the same version", state(1, null, "a"), state(1, 5, "b"), state(1, 5, "b")],
    ["an unmerged state of the same version does not beat a merge", state(1, 5, "a"), state(1, null, "b"), state(1, 5, "a")],
    ["a newer unmerged state keeps the merge, takes the rest", state(1, 5, "a"), state(2, null, "b"), state(2, 5, "b")],
    ["a newer merged state takes its own merge time", state(1, 5, "a"), state(2, 6, "b"), state(2, 6, "b")],
    ["an older merge merges a newer unmerged state, nothing else", state(2, null, "a"), state(1, 5, "b"), state(2, 5, "a")],
    ["an older merge leaves a newer merge alone", state(2, 6, "a"), state(1, 5, "b"), state(2, 6, "a")],
  ])("%s", (_name, held, incoming, kept) => {
    expect(nextPullRequestState(held, incoming)).toEqual(kept);
  });

  it("supersedes: newer, or the same version merging an unmerged state", () => {
    expect(supersedes(state(2, null, ""), state(1, 5, ""))).toBe(true);
    expect(supersedes(state(1, 5, ""), state(1, null, ""))).toBe(true);
    expect(supersedes(state(1, null, ""), state(1, 5, ""))).toBe(false);
    expect(supersedes(state(1, 5, ""), state(1, 6, ""))).toBe(false);
  });
});
