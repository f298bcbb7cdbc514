import { describe, expect, it } from "vitest";
import { DURATION_BUCKET_BOUNDS, durationBucket, durationBucketSql } from "../../src/rules/duration-buckets";
import { type GroupingsQuery, SUMMARY_LIMITS, summarizeGroupings } from "../../src/storage/analytics-summary";

/** Medians from the buckets however few pull requests the blocks hold (the default reads a small window's durations). */
const BUCKETS = { ...SUMMARY_LIMITS, bucketsFrom: 0, bucketsPerBlock: 0 };

import { createOrg, ev, postEventsOk, scopeOf, seededRandom, shardDb, unique } from "./helpers";
import { lowerMedian } from "./summary-reference";

/**
 * Medians from the day blocks' counts per duration bucket (rules/duration-buckets.ts, issue 31): an
 * unfiltered time grouping reads each served block's counts, finds each median's bucket and reads
 * only that bucket's values. Checked against medians computed here by sorting the durations the
 * events carry, and against the walk without blocks.
 */
const DAY = 86_400_000;

describe("medians from duration buckets", () => {
  it("the database's bucket of a duration is the Worker's, at every bound and either side of it", async () => {
    const values = [-5_000, -1, 0, 1, 999, ...DURATION_BUCKET_BOUNDS.flatMap((b) => [b - 1, b, b + 1]), 2 ** 50];
    const org = await createOrg(unique("sumk"), { plan: "pro" });
    const db = await shardDb(org);
    const { results } = await db
      .prepare(`SELECT value AS v, ${durationBucketSql("value")} AS b FROM json_each(?1) ORDER BY key`)
      .bind(JSON.stringify(values))
      .all<{ v: number; b: number }>();
    expect(results.map((r) => r.b)).toEqual(values.map(durationBucket));
    // And the Worker's is the count of bounds at most the value.
    expect(values.map(durationBucket)).toEqual(values.map((v) => DURATION_BUCKET_BOUNDS.filter((b) => b <= v).length));
  });

  it("served from counts and one bucket's values, every median equals the sorted durations' and the walk's", async () => {
    const org = await createOrg(unique("sumk"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    const next = seededRandom(31);
    // Durations near the bounds (either side and on them), repeated, so medians fall on ties and edges.
    const near = DURATION_BUCKET_BOUNDS.filter((b) => b < 2 * DAY).flatMap((b) => [b - 1, b, b + 1]);
    const pick = (max: number) => {
      const fitting = near.filter((v) => v <= max);
      return fitting[Math.floor(next() * fitting.length)] as number;
    };
    type Made = { merged: number; tf: number; tm: number };
    const made: Made[] = [];
    const events: unknown[] = [];
    // Oct 5-8 (one ISO week) and Oct 13-14 (the next): Oct 14 has a pull request reviewed again in
    // November: its block still serves the day, corrected for that pull request (its findings and
    // reviews in the window are counted as the window sees them, here the same), and the whole week
    // comes from blocks.
    for (const [d, count] of [
      [5, 30],
      [6, 1],
      [7, 25],
      [8, 40],
      [13, 35],
      [14, 20],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const n = made.length + 1;
        const merged = Date.UTC(2026, 9, d, 12) + i * 1_000;
        const tm = pick(2 * DAY);
        const tf = pick(tm);
        made.push({ merged, tf, tm });
        const created = merged - tm;
        events.push(
          ev.pr(org, n, { createdAt: new Date(created).toISOString(), mergedAt: new Date(merged).toISOString() }),
          ev.review(org, n, `r${n}`, { completedAt: new Date(created + tf).toISOString() }),
        );
        if (d === 14 && i === 0) events.push(ev.review(org, n, `r${n}-late`, { completedAt: "2026-11-02T10:00:00Z" }));
      }
    }
    await postEventsOk(events);
    const db = await shardDb(org);
    const q: GroupingsQuery = { ...scopeOf(org), groupBys: ["week", "day"] };
    const walked = await summarizeGroupings(db, q); // builds the blocks
    expect(walked.fromBlocks).toBe(0);
    // Few pull requests: by default one statement reads the blocks' durations, no bucket.
    const small = await summarizeGroupings(db, q);
    expect([small.fromBlocks, small.bucketValues]).toEqual([30 + 1 + 25 + 40 + 35 + 20, 0]);
    const served = await summarizeGroupings(db, q, BUCKETS);
    expect(served.fromBlocks).toBe(30 + 1 + 25 + 40 + 35 + 20);
    // Only the medians' buckets were read, not every duration.
    expect(served.bucketValues).toBeGreaterThan(0);
    expect(served.bucketValues).toBeLessThan(made.length * 2);

    const mondayOf = (ms: number) => {
      const day = Math.floor(ms / DAY);
      return day - ((day + 3) % 7);
    };
    const expected = (keyOf: (m: Made) => string) => {
      const groups = new Map<string, Made[]>();
      for (const m of made) groups.set(keyOf(m), [...(groups.get(keyOf(m)) ?? []), m]);
      return [...groups.entries()]
        .map(([key, rows]) => ({
          key,
          pullRequests: rows.length,
          medianMsToFirstReview: lowerMedian(rows.map((r) => r.tf)),
          medianMsToMerge: lowerMedian(rows.map((r) => r.tm)),
        }))
        .sort((a, b) => (a.key < b.key ? -1 : 1));
    };
    const iso = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);
    const shape = (figures: typeof served) =>
      figures.groupings.map(({ groups }) =>
        groups
          .map(({ key, pullRequests, medianMsToFirstReview, medianMsToMerge }) => ({
            key,
            pullRequests,
            medianMsToFirstReview,
            medianMsToMerge,
          }))
          .sort((a, b) => (a.key < b.key ? -1 : 1)),
      );
    const oracle = [expected((m) => iso(mondayOf(m.merged))), expected((m) => iso(Math.floor(m.merged / DAY)))];
    expect(shape(served)).toEqual(oracle);
    expect(shape(small)).toEqual(oracle);
    expect(shape(walked)).toEqual(oracle);
    expect(served.groupings[0]?.totals).toMatchObject({
      pullRequests: made.length,
      medianMsToFirstReview: lowerMedian(made.map((m) => m.tf)),
      medianMsToMerge: lowerMedian(made.map((m) => m.tm)),
    });
    // Every other figure too: the groups in key order, and the totals.
    const inOrder = (figures: typeof served) =>
      figures.groupings.map((g) => ({ ...g, groups: [...g.groups].sort((a, b) => (a.key < b.key ? -1 : 1)) }));
    expect(inOrder(served)).toEqual(inOrder(walked));
    // Without corrections Oct 14 is walked whole: the same figures.
    const whole = await summarizeGroupings(db, q, { ...BUCKETS, corrections: false });
    expect(whole.fromBlocks).toBe(30 + 1 + 25 + 40 + 35);
    expect(inOrder(whole)).toEqual(inOrder(served));
    // Blocks read in slices before the walk (a window of more than blockSliceDays full days): the same.
    const sliced = await summarizeGroupings(db, q, { ...BUCKETS, blockSliceDays: 2, countSliceDays: 2, countWholeDays: 2 });
    expect([sliced.fromBlocks, shape(sliced), sliced.groupings[0]?.totals]).toEqual([
      served.fromBlocks,
      oracle,
      served.groupings[0]?.totals,
    ]);

    // A write after the counts are read and before the buckets' values are: the block is gone, so the
    // whole is read again, and the answer counts the write.
    let calls = 0;
    const raced = await summarizeGroupings(db, q, BUCKETS, {
      beforeMedians: async () => {
        if (calls++ === 0) await postEventsOk([ev.review(org, 1, "r1-again", { completedAt: "2026-10-20T10:00:00Z" })]);
      },
    });
    expect(calls).toBe(2);
    expect(raced.fromBlocks).toBe(served.fromBlocks - 30); // Oct 5's block was deleted by the write
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
    const after = await summarizeGroupings(db, q);
    expect(after.fromBlocks).toBe(0);
    expect(inOrder(raced)).toEqual(inOrder(after));

    // A write before every reading of the values: the third attempt reads no block at all.
    await summarizeGroupings(db, q); // every day has its block again
    let writes = 0;
    const unlucky = await summarizeGroupings(db, q, BUCKETS, {
      beforeMedians: async () => {
        writes++;
        // Pull request 33 merged on Oct 7, then 60 on Oct 8: each a day whose block the attempt served.
        if (writes <= 2)
          await postEventsOk([
            ev.review(org, writes === 1 ? 33 : 60, `r-unlucky-${writes}`, { completedAt: "2026-10-21T10:00:00Z" }),
          ]);
      },
    });
    expect(writes).toBe(3);
    expect([unlucky.fromBlocks, unlucky.bucketValues]).toEqual([0, 0]);
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
    expect(inOrder(unlucky)).toEqual(inOrder(await summarizeGroupings(db, q)));
  });
});
