import { describe, expect, it } from "vitest";
import { SORTED_OFFSET } from "../../src/rules/duration-buckets";
import { type GroupingsQuery, SUMMARY_LIMITS, type SummaryLimits, summarizeGroupings } from "../../src/storage/analytics-summary";
import { BLOCK_MAX_BYTES, BLOCKS_MAX_PULL_REQUESTS, buildSummaryDays } from "../../src/storage/summary-days";
import { createOrg, ev, postEventsOk, scopeOf, shardDb, unique } from "./helpers";

/**
 * The bounds of the summary's day blocks (storage/summary-days.ts, issue 31): what happens at
 * `BLOCKS_MAX_PULL_REQUESTS` (the most a request reads from blocks) and at `BLOCK_MAX_PULL_REQUESTS`
 * (the most one block holds).
 */
const DAY = 86_400_000;
const day = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY;

describe("day blocks at their bounds", () => {
  it("a long window whose blocks hold more than BLOCKS_MAX_PULL_REQUESTS is walked, each pull request counted once", async () => {
    const org = await createOrg(unique("sumb"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk(
      ["05", "06"].flatMap((d, i) => [
        ev.pr(org, i + 1, { createdAt: `2026-10-${d}T08:00:00Z`, mergedAt: `2026-10-${d}T10:00:00Z` }),
        ev.review(org, i + 1, `r${i + 1}`, { completedAt: `2026-10-${d}T09:00:00Z` }),
      ]),
    );
    const db = await shardDb(org);
    const q: GroupingsQuery = { ...scopeOf(org), groupBys: ["week"] };
    const walked = await summarizeGroupings(db, q); // builds the window's blocks
    expect(walked.groupings[0]?.totals.pullRequests).toBe(2);
    // The second day's block stands in for a day that brings the window's blocks over the bound
    // (750,001 pull requests are too many to store in a test): only the bound reads this count.
    await db
      .prepare("UPDATE summary_days SET pull_requests = ?3 WHERE org_key = ?1 AND day = ?2")
      .bind(org, day("2026-10-06"), BLOCKS_MAX_PULL_REQUESTS + 1)
      .run();
    // One statement: over the bound, no block served, every day walked.
    const whole = await summarizeGroupings(db, q);
    expect([whole.fromBlocks, whole.groupings[0]?.totals]).toEqual([0, walked.groupings[0]?.totals]);
    // Blocks read in slices of one day (as a window of more than 92 full days reads them): the
    // same. The first day's block was already added up when the second crossed the bound.
    const sliced = await summarizeGroupings(db, q, {
      ...SUMMARY_LIMITS,
      blockSliceDays: 1,
      countSliceDays: 1,
      countWholeDays: 1,
    });
    expect([sliced.fromBlocks, sliced.groupings[0]?.totals]).toEqual([0, walked.groupings[0]?.totals]);
  });

  it("edges exactly on a block's lo and hi, merges at midnight and a millisecond before: served figures equal the walk's", async () => {
    const org = await createOrg(unique("sumb"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk([
      // Day 5: merged at its first millisecond, reviewed at it (the block's lo is the window's start).
      ev.pr(org, 1, { createdAt: "2026-10-04T20:00:00Z", mergedAt: "2026-10-05T00:00:00.000Z", author: "Alice" }),
      ev.review(org, 1, "r1", { completedAt: "2026-10-05T00:00:00.000Z" }),
      // Day 5 too: merged a millisecond before midnight, a review before the merge; a failed review
      // and an unposted finding outside the window count for nothing.
      ev.pr(org, 2, { createdAt: "2026-10-05T01:00:00Z", mergedAt: "2026-10-05T23:59:59.999Z", author: "alice", repo: "web" }),
      ev.review(org, 2, "r2", { completedAt: "2026-10-05T12:00:00Z", repo: "web" }),
      ev.review(org, 2, "r2-failed", { status: "failed", completedAt: "2026-11-20T12:00:00Z", repo: "web" }),
      ev.finding(org, 2, "f2-draft", { posted: false, createdAt: "2026-11-20T12:00:00Z", repo: "web" }),
      // Day 6: merged at its first millisecond, a posted finding at the window's last (hi = end).
      ev.pr(org, 3, { createdAt: "2026-10-06T00:00:00Z", mergedAt: "2026-10-06T00:00:00.000Z", author: "bob", linesAdded: null }),
      ev.review(org, 3, "r3", { completedAt: "2026-10-06T08:00:00Z" }),
      ev.finding(org, 3, "f3", { createdAt: "2026-10-06T23:59:59.999Z", aiAddressed: true }),
      ev.ai(org, 3, "a3", 500),
    ]);
    const db = await shardDb(org);
    const q = (start: string, end: string): GroupingsQuery => ({
      ...scopeOf(org, start, end),
      groupBys: ["day", "repo", "author"],
    });
    const exact = q("2026-10-05T00:00:00.000Z", "2026-10-06T23:59:59.999Z");
    const walked = await summarizeGroupings(db, exact); // builds both days
    expect(walked.fromBlocks).toBe(0);
    expect(walked.groupings[0]?.totals).toMatchObject({ pullRequests: 3, serviceIssuesFlagged: 1, serviceIssuesFixed: 1 });
    const cases: [Partial<GroupingsQuery>, SummaryLimits][] = [
      [{}, SUMMARY_LIMITS],
      [{}, { ...SUMMARY_LIMITS, blockSliceDays: 1, countSliceDays: 1, countWholeDays: 1 }],
      [{ authorKeys: ["alice"] }, SUMMARY_LIMITS],
      [{ accessibleRepoKeys: ["api"] }, { ...SUMMARY_LIMITS, blockSliceDays: 1, countSliceDays: 1, countWholeDays: 1 }],
    ];
    for (const [scope, limits] of cases) {
      const served = await summarizeGroupings(db, { ...exact, ...scope }, limits);
      await db.prepare("DELETE FROM summary_days WHERE org_key = ?1").bind(org).run();
      const plain = await summarizeGroupings(db, { ...exact, ...scope }, limits);
      expect(served.fromBlocks).toBe(plain.groupings[0]?.totals.pullRequests);
      expect(served.groupings).toEqual(plain.groupings);
      await summarizeGroupings(db, { ...exact, ...scope }); // builds them again
    }
    // A millisecond less at either edge: that day is no longer full (walked), the other day's block
    // still serves, and the figures follow the export (pull request 1 leaves; finding f3 leaves).
    for (const [start, end, fromBlocks, pullRequests, flagged] of [
      ["2026-10-05T00:00:00.001Z", "2026-10-06T23:59:59.999Z", 1, 2, 1],
      ["2026-10-05T00:00:00.000Z", "2026-10-06T23:59:59.998Z", 2, 3, 0],
    ] as const) {
      const edge = await summarizeGroupings(db, q(start, end));
      expect(edge.fromBlocks).toBe(fromBlocks);
      expect(edge.groupings[0]?.totals).toMatchObject({ pullRequests, serviceIssuesFlagged: flagged });
    }
  });

  it("a day whose block would pass BLOCK_MAX_BYTES (a mass update across as many repositories) gets an empty marker and is walked", async () => {
    // A dependency update merged in every repository of a large organization on one day (one
    // pull request per repository, names of 20 characters): about 125 bytes of block per pull
    // request, so 12,000 of them would pass D1's 1,000,000 bytes per row (local D1 does not
    // enforce it). A sample of 400 against a budget of a tenth of its size stands in for it.
    const org = await createOrg(unique("sumb"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    const sample = 400;
    const repo = (i: number) => `payments-service-${String(i).padStart(3, "0")}`;
    await postEventsOk(
      Array.from({ length: sample }, (_, i) => [
        ev.pr(org, 1, {
          repo: repo(i),
          author: "renovate-bot",
          createdAt: "2026-10-05T01:00:00Z",
          mergedAt: "2026-10-05T15:00:00Z",
          linesAdded: 2,
          linesDeleted: 2,
        }),
        ev.review(org, 1, `r${i}`, { repo: repo(i), completedAt: "2026-10-05T03:00:00Z" }),
      ]).flat(),
    );
    const db = await shardDb(org);
    const block = () =>
      db
        .prepare(
          "SELECT pull_requests AS n, lo, length(CAST(totals AS BLOB)) + length(CAST(counts AS BLOB)) + length(sorted) + length(CAST(repos AS BLOB)) + length(CAST(authors AS BLOB)) + length(CAST(repo_of AS BLOB)) + length(CAST(author_of AS BLOB)) + length(CAST(figures AS BLOB)) + length(CAST(durations AS BLOB)) AS bytes FROM summary_days WHERE org_key = ?1",
        )
        .bind(org)
        .first<{ n: number; lo: number | null; bytes: number | null }>();
    await buildSummaryDays(db, org, [day("2026-10-05")]);
    const full = await block();
    expect(full?.n).toBe(sample);
    expect(full?.bytes ?? 0).toBeGreaterThan(sample * 115); // about 125 bytes each: 12,000 would not fit
    expect(full?.bytes ?? 0).toBeLessThanOrEqual(BLOCK_MAX_BYTES);
    // A build keeps a stored block (it is exact): the block goes first, as a write to its day would delete it.
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?1").bind(org).run();
    await buildSummaryDays(db, org, [day("2026-10-05")], { maxBytes: Math.floor((full?.bytes ?? 0) / 10) });
    expect(await block()).toEqual({ n: sample, lo: null, bytes: null });
    const q: GroupingsQuery = { ...scopeOf(org), groupBys: ["repo"] };
    const walked = await summarizeGroupings(db, q, { ...SUMMARY_LIMITS, dayBlockMaxBytes: Math.floor((full?.bytes ?? 0) / 10) });
    expect(walked.fromBlocks).toBe(0);
    expect(walked.groupings[0]?.totals.pullRequests).toBe(sample);
    expect(walked.groupings[0]?.groups).toHaveLength(sample);
    expect(await block()).toEqual({ n: sample, lo: null, bytes: null }); // a marker is not built again
  });

  it("a build that fails does not fail the summary that already has its answer", async () => {
    const org = await createOrg(unique("sumb"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk([
      ev.pr(org, 1, { createdAt: "2026-10-05T08:00:00Z", mergedAt: "2026-10-05T10:00:00Z" }),
      ev.review(org, 1, "r1", { completedAt: "2026-10-05T09:00:00Z" }),
    ]);
    const db = await shardDb(org);
    const q: GroupingsQuery = { ...scopeOf(org), groupBys: ["week"] };
    // The database refuses every block (as D1 would refuse a statement past its limits).
    await db
      .prepare("CREATE TRIGGER refuse_blocks BEFORE INSERT ON summary_days BEGIN SELECT RAISE(ABORT, 'refused'); END")
      .run();
    try {
      const answered = await summarizeGroupings(db, q);
      expect([answered.fromBlocks, answered.groupings[0]?.totals.pullRequests]).toEqual([0, 1]);
      expect(await db.prepare("SELECT count(*) AS n FROM summary_days WHERE org_key = ?1").bind(org).first("n")).toBe(0);
    } finally {
      await db.prepare("DROP TRIGGER refuse_blocks").run();
    }
    expect((await summarizeGroupings(db, q)).groupings[0]?.totals.pullRequests).toBe(1); // and builds them now
    expect((await summarizeGroupings(db, q)).fromBlocks).toBe(1);
  });

  it("a day with a duration too far from zero to encode in its sorted values gets an empty marker and is walked", async () => {
    const org = await createOrg(unique("sumb"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk(
      [1, 2, 3].flatMap((n) => [
        ev.pr(org, n, { createdAt: "2026-10-05T08:00:00Z", mergedAt: `2026-10-05T1${n}:00:00Z` }),
        ev.review(org, n, `r${n}`, { completedAt: "2026-10-05T09:00:00Z" }),
      ]),
    );
    const db = await shardDb(org);
    // No event can carry such a creation time (2^51 ms is 71,000 years); the database could.
    // Merged at 11:00, so its duration to merge is exactly SORTED_OFFSET.
    const created = Date.parse("2026-10-05T11:00:00Z") - SORTED_OFFSET;
    await db.prepare("UPDATE pull_requests SET created_at = ?2 WHERE org_key = ?1 AND pr_number = 1").bind(org, created).run();
    const q: GroupingsQuery = { ...scopeOf(org), groupBys: ["week"] };
    const walked = await summarizeGroupings(db, q); // builds the day: a marker
    const marker = await db
      .prepare("SELECT pull_requests AS n, lo, sorted FROM summary_days WHERE org_key = ?1")
      .bind(org)
      .first<{ n: number; lo: number | null; sorted: string | null }>();
    expect(marker).toEqual({ n: 3, lo: null, sorted: null });
    const again = await summarizeGroupings(db, q);
    expect(again.fromBlocks).toBe(0);
    expect(again.groupings).toEqual(walked.groupings);
    // The median to merge is the middle of the three (4 h, 5 h and the far one): 5 h.
    expect(again.groupings[0]?.totals.medianMsToMerge).toBe(5 * 3_600_000);
    // A millisecond nearer zero, it encodes: the block serves, the same figures.
    await db
      .prepare("UPDATE pull_requests SET created_at = ?2 WHERE org_key = ?1 AND pr_number = 1")
      .bind(org, created + 1)
      .run();
    await summarizeGroupings(db, q);
    const served = await summarizeGroupings(db, q, { ...SUMMARY_LIMITS, bucketsFrom: 0, bucketsPerBlock: 0 });
    expect([served.fromBlocks, served.groupings[0]?.totals.medianMsToMerge]).toEqual([
      3,
      again.groupings[0]?.totals.medianMsToMerge,
    ]);
    expect(served.bucketValues).toBeGreaterThan(0);
  });
});
