import { describe, expect, it } from "vitest";
import {
  type MergedPullRequestQuery,
  mergedPullRequestsQuery,
  PLAN_LIMITS,
  pagePlan,
  type Statement,
} from "../../src/storage/analytics";
import { LAST_GAP_TIER } from "../../src/storage/review-span";
import { env } from "./helpers";

const DAY = 86_400_000;
const now = Date.parse("2026-11-21T00:00:00Z");
const base: MergedPullRequestQuery = {
  orgKey: "bigco",
  repoKeys: null,
  authorKeys: null,
  accessibleRepoKeys: null,
  start: now - 30 * DAY,
  end: now,
  after: null,
  limit: 101,
  now,
};
const cursor = { mergedAt: now - 10 * DAY, id: 123456 };
const past = { start: now - 230 * DAY, end: now - 200 * DAY };
const narrow = { start: now - 200 * DAY, end: now - 200 * DAY + 3_600_000 };
const repos = (n: number) => Array.from({ length: n }, (_, i) => `repo-${String(i * 7).padStart(3, "0")}`);

async function plan(q: MergedPullRequestQuery): Promise<string[]> {
  return planOf(mergedPullRequestsQuery(q));
}

async function planOf({ sql, params }: Statement): Promise<string[]> {
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

const count = (lines: string[], pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;

/** Every shape of the statement: windows, cursors, repositories, access lists, authors. */
const CASES: [string, MergedPullRequestQuery][] = [
  ["default window", base],
  ["one-year window", { ...base, start: now - 365 * DAY }],
  ["a month in the past", { ...base, ...past }],
  ["a month in the past, deep", { ...base, ...past, after: cursor }],
  ["deep page (cursor)", { ...base, start: now - 365 * DAY, after: cursor }],
  ["default window, the cursor before it", { ...base, after: { mergedAt: now - 40 * DAY, id: 5 } }],
  ["a month in the past, the cursor inside it", { ...base, ...past, after: { mergedAt: now - 210 * DAY, id: 5 } }],
  ["a month in the past, the cursor before it", { ...base, ...past, after: { mergedAt: now - 300 * DAY, id: 5 } }],
  ["one repository", { ...base, repoKeys: ["repo-042"] }],
  ["one repository, deep", { ...base, repoKeys: ["repo-042"], after: cursor }],
  ["restricted repository access", { ...base, accessibleRepoKeys: ["repo-001", "repo-002"] }],
  ["restricted repository access, in the past", { ...base, ...past, accessibleRepoKeys: ["repo-001", "repo-002"] }],
  ["narrow window", { ...base, ...narrow }],
  ["narrow window ending now", { ...base, start: now - 3_600_000 }],
  ["a month that ended an hour ago", { ...base, start: now - 31 * DAY, end: now - 3_600_000 }],
  ["a month that ended two days ago", { ...base, start: now - 32 * DAY, end: now - 2 * DAY }],
  ["narrow window, one repository, deep", { ...base, ...narrow, repoKeys: ["repo-042"], after: cursor }],
  ["narrow window, restricted access, deep", { ...base, ...narrow, accessibleRepoKeys: ["repo-001"], after: cursor }],
  ["few repositories of many", { ...base, start: now - 365 * DAY, accessibleRepoKeys: repos(13) }],
  ["few repositories of many, in the past, deep", { ...base, ...past, accessibleRepoKeys: repos(13), after: cursor }],
  [
    "as many repositories as get walks of their own, in the past, deep",
    {
      ...base,
      ...past,
      accessibleRepoKeys: repos(PLAN_LIMITS.maxRepoWalks),
      after: cursor,
    },
  ],
  ["one repository more than that", { ...base, ...past, accessibleRepoKeys: repos(PLAN_LIMITS.maxRepoWalks + 1) }],
  ["few repositories of many, narrow window", { ...base, ...narrow, accessibleRepoKeys: repos(13) }],
  ["one repository among restricted access", { ...base, repoKeys: ["repo-007"], accessibleRepoKeys: repos(13) }],
  ["no repository", { ...base, accessibleRepoKeys: [] }],
  // Contract section 21: a list of repositories walks each one's merges in the window through
  // (org, repo, merged) and merges the walks; the authors filter the candidates after the merge.
  ["three repositories", { ...base, start: now - 365 * DAY, repoKeys: ["repo-007", "repo-042", "repo-099"] }],
  ["three repositories, in the past, deep", { ...base, ...past, repoKeys: ["repo-007", "repo-042", "repo-099"], after: cursor }],
  ["twenty repositories, narrow window", { ...base, ...narrow, repoKeys: repos(20) }],
  ["three repositories among restricted access", { ...base, repoKeys: repos(3), accessibleRepoKeys: repos(13) }],
  ["two authors", { ...base, authorKeys: ["ada", "grace"] }],
  ["two authors, narrow window, deep", { ...base, ...narrow, authorKeys: ["ada", "grace"], after: cursor }],
  ["three repositories and an author", { ...base, ...past, repoKeys: repos(3), authorKeys: ["ada"] }],
  ["one repository and an author", { ...base, repoKeys: ["repo-042"], authorKeys: ["ada"] }],
];

/**
 * The plan of every shape of the statement (docs/performance.md explains it): index ranges only,
 * one per gap tier on each side of the window, no full scan, no sort of a walk. Running it through
 * D1 also proves the text within D1's limits (5 terms per compound SELECT, 100 parameters).
 */
describe("analytics query plan", () => {
  it.each(CASES)("%s: index ranges only", async (_name, q) => {
    const details = await plan(q);
    const byReviews = q.end - q.start <= PLAN_LIMITS.maxSpanMs;
    const endsRecently = q.end >= q.now - DAY; // the walk over the window goes on past its end
    const repoWalks =
      q.repoKeys !== null
        ? q.repoKeys.length
        : q.accessibleRepoKeys !== null && q.accessibleRepoKeys.length <= PLAN_LIMITS.maxRepoWalks
          ? q.accessibleRepoKeys.length
          : 0;

    // Merged inside the window: the organization's walk, or the repository's, or one walk per
    // accessible repository when the caller sees only a few.
    const orgWalk = /SEARCH p USING COVERING INDEX pull_requests_merged_walk \(org_key=\? AND merged_at>\? AND merged_at<\?\)/;
    const repoWalk =
      /SEARCH p USING COVERING INDEX pull_requests_repo_merged_walk \(org_key=\? AND repo_key=\? AND merged_at>\? AND merged_at<\?\)/;
    expect(count(details, orgWalk)).toBe(q.repoKeys === null && repoWalks === 0 && q.accessibleRepoKeys?.length !== 0 ? 1 : 0);
    expect(count(details, repoWalk)).toBe(repoWalks);
    // Before the window, and after it unless it ended less than a day ago: one bounded range per
    // gap tier (the last tier is open-ended before the window).
    expect(
      count(
        details,
        /SEARCH p USING COVERING INDEX pull_requests_after_merge_walk \(org_key=\? AND after_merge_tier=\? AND merged_at>\? AND merged_at<\?\)/,
      ),
    ).toBe(LAST_GAP_TIER);
    expect(
      count(
        details,
        /SEARCH p USING COVERING INDEX pull_requests_after_merge_walk \(org_key=\? AND after_merge_tier=\? AND merged_at<\?\)/,
      ),
    ).toBe(1);
    expect(
      count(
        details,
        /SEARCH p USING COVERING INDEX pull_requests_before_merge_walk \(org_key=\? AND before_merge_tier=\? AND merged_at>\? AND merged_at<\?\)/,
      ),
    ).toBe(endsRecently ? 0 : LAST_GAP_TIER + 1);
    // The ranges are merged, not collected and sorted. Only the narrow-window shape sorts: the
    // review side's at most PLAN_LIMITS.maxReviews pull requests, and the two plans' pages
    // (one of them empty); its count runs once.
    expect(count(details, /MERGE \(UNION ALL\)/)).toBeGreaterThan(0);
    expect(count(details, /USE TEMP B-TREE FOR ORDER BY/)).toBe(byReviews ? 2 : 0);
    expect(count(details, /^MATERIALIZE plan$/)).toBe(byReviews ? 1 : 0);
    expect(
      count(
        details,
        /SEARCH r USING COVERING INDEX reviews_completed_by_time \(org_key=\? AND completed_at>\? AND completed_at<\?\)/,
      ),
    ).toBe(byReviews ? 2 : 0);
    // A candidate's reviews are looked at once, after the merge, through the per-pull-request index.
    expect(
      count(
        details,
        /SEARCH r USING COVERING INDEX reviews_completed_by_pr \(pr_id=\? AND completed_at>\? AND completed_at<\?\)/,
      ),
    ).toBe(1);
    // The access list, a list of repositories and the authors are each read once per plan, after
    // the merge, not once per range (one repository filters inside the ranges instead).
    const lists = [q.accessibleRepoKeys, (q.repoKeys?.length ?? 1) > 1 ? q.repoKeys : null, q.authorKeys];
    const listed = lists.filter((list) => list !== null).length;
    expect(count(details, /SCAN json_each/)).toBe(listed * (byReviews ? 2 : 1));
    // An author is looked up by the candidate's id (the rowid), once per plan.
    expect(count(details, /SEARCH w USING INTEGER PRIMARY KEY \(rowid=\?\)/)).toBe(q.authorKeys === null ? 0 : byReviews ? 2 : 1);
    // The merge of the walks is not collected and sorted: no sort of a walk (above), and no list
    // of repositories turned into one sorted range.
    expect(count(details, /USE TEMP B-TREE FOR ORDER BY/)).toBe(byReviews ? 2 : 0);
    // Metrics of the page rows from their figures: the findings of a row whose findings straddle
    // an edge of the window in one range of a covering index, the AI records never.
    expect(count(details, /SEARCH fi USING COVERING INDEX findings_posted_by_pr_outcome \(pr_id=\?\)/)).toBe(1);
    expect(count(details, /findings AS f\b|SEARCH f USING/)).toBe(0);
    expect(count(details, /ai_authorship/)).toBe(0);
    // No full scan of the big tables.
    for (const line of details) expect(line).not.toMatch(/^SCAN (p|pull_requests|r|reviews|f|findings|a|ai_authorship)\b/);
  });

  /** Each index range of a plan, with the index it walks and the bounds it takes. */
  const ranges = (details: string[]) =>
    details.filter((line) => /^SEARCH p USING COVERING INDEX pull_requests_/.test(line)).sort();

  // `pagePlan`: a window walked by its merges is read by the ranges up to the window's start first,
  // and only when they leave the page short by every range again (one read); each group the
  // cursor has passed is left out. The statements walk the one statement's ranges, less those the
  // cursor leaves out, each in order.
  it.each(CASES)("%s: the page plan's statements walk its ranges, in order", async (_name, q) => {
    const { first, whenShort } = pagePlan(q);
    const narrow = q.end - q.start <= PLAN_LIMITS.maxSpanMs;
    const nothing = q.accessibleRepoKeys?.length === 0 || q.repoKeys?.length === 0;
    const firstPlan = await planOf(first);
    const whole = await plan(q);
    if (narrow || nothing) {
      expect(whenShort).toBeNull();
      expect(firstPlan).toEqual(whole);
      return;
    }
    const cursorBeyondLater = q.after !== null && q.after.mergedAt <= q.end;
    const cursorBeforeWindow = q.after !== null && q.after.mergedAt < q.start;
    // The whole statement's ranges, less those of a group the cursor has passed (a window that
    // ended recently has no ranges after it in either).
    const kept = ranges(whole).filter(
      (line) =>
        !(cursorBeyondLater && /pull_requests_before_merge_walk/.test(line)) &&
        !(cursorBeforeWindow && /pull_requests_(repo_)?merged_walk/.test(line)),
    );
    const earlier = (line: string) => /pull_requests_after_merge_walk/.test(line);
    const plans = [firstPlan];
    if (cursorBeforeWindow) {
      // The merges before the window alone, one range per gap tier.
      expect(whenShort).toBeNull();
      expect(ranges(firstPlan)).toEqual(kept);
      expect(ranges(firstPlan)).toHaveLength(LAST_GAP_TIER + 1);
      expect(ranges(firstPlan).every(earlier)).toBe(true);
    } else {
      // First the groups up to the window's start; when short, all of the kept ones in one read.
      expect(whenShort).not.toBeNull();
      const againPlan = await planOf(whenShort as Statement);
      plans.push(againPlan);
      expect(ranges(firstPlan)).toEqual(kept.filter((line) => !earlier(line)));
      expect(ranges(againPlan)).toEqual(kept);
      expect(kept.filter(earlier)).toHaveLength(LAST_GAP_TIER + 1);
    }
    for (const details of plans) {
      expect(count(details, /USE TEMP B-TREE FOR ORDER BY/)).toBe(0);
      for (const line of details) expect(line).not.toMatch(/^SCAN (p|pull_requests|r|reviews|f|findings|a|ai_authorship)\b/);
    }
  });
});
