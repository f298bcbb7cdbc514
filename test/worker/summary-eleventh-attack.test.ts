import { describe, expect, it, vi } from "vitest";
import { DURATION_BUCKET_BOUNDS, durationBucket } from "../../src/rules/duration-buckets";
import { SUMMARY_LIMITS, summarizeGroupings } from "../../src/storage/analytics-summary";
import { SORTED_ROW_MIN } from "../../src/storage/summary-medians";
import { postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr } from "./summary-attack-data";
import { adminGetOf, agrees, groupingsOf, summaryOrg, type Window } from "./summary-attack-http";
import type { ExportRow } from "./summary-reference";
import { spans } from "./summary-span-helpers";

/**
 * An outside review's attacks on the eleventh session's summary change (issue 31, contract section
 * 12): a span's bucket row of every group together of at
 * least SORTED_ROW_MIN values, stored sorted, and the totals' median read through a window of it
 * (`rankThroughWindow`). Every summary is compared over HTTP with the export's rows, three passes
 * (the second builds the span, the third reads it).
 */

vi.setConfig({ testTimeout: 120_000 });

const MIN = 60_000;
const HOUR = 3_600_000;
const FEB = Date.parse("2026-02-01T00:00:00Z");
const MAY_END = Date.parse("2026-05-31T23:59:59.999Z");
const SPAN: Window = { start: FEB, end: MAY_END };
const LOW = DURATION_BUCKET_BOUNDS.find((b) => b >= HOUR) as number;
/** Three merge durations, one bucket. */
const M = [LOW + 10_000, LOW + 20_000, LOW + 30_000];
/** Two review durations, one bucket (about 30 minutes). */
const RLOW = DURATION_BUCKET_BOUNDS.find((b) => b >= 30 * MIN) as number;
const R = [RLOW + 5_000, RLOW + 6_000];
const AUTHORS = ["alice", "Bob", "carol", "dave", "Erin"];
const REPOS = ["api", "web", "docs"];

const medianIndex = (n: number) => Math.floor((n - 1) / 2);

/** Shuffled list of `counts[i]` copies of `values[i]`. */
function tied(random: () => number, values: number[], counts: number[]): number[] {
  const out = values.flatMap((v, i) => Array.from({ length: counts[i] as number }, () => v));
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as number, out[i] as number];
  }
  return out;
}

/** Merge times every `stepMin` minutes from `from` to `to`. */
function times(from: number, to: number, stepMin: number): number[] {
  const out: number[] = [];
  for (let at = from + 2 * HOUR; at < to - HOUR; at += stepMin * MIN) out.push(at);
  return out;
}

/** Pull requests merged at `at`, with merge durations `merges` and review durations `reviews` (ties). */
function prsAt(at: number[], merges: number[], reviews: number[], n0: number, authors = AUTHORS, repos = REPOS): Pr[] {
  return at.map((merged, i) => {
    const created = merged - (merges[i] as number);
    const n = n0 + i;
    return {
      repo: repos[n % repos.length] as string,
      n,
      author: authors[n % authors.length],
      created,
      merged,
      reviews: [created + (reviews[i] as number)],
    };
  });
}

/** The counts of n values split so that the value at floor((n-1)/2) is the last of the first value. */
const lastOfFirst = (n: number) => [medianIndex(n) + 1, n - medianIndex(n) - 1];
/** ... the first of the second. */
const firstOfSecond = (n: number) => [medianIndex(n), n - medianIndex(n)];

async function sortedRows(org: string) {
  const db = await shardDb(org);
  const head = await db
    .prepare("SELECT sorted_from AS f FROM summary_group_span_heads WHERE org_key = ?1 AND sorted_from IS NOT NULL")
    .bind(org)
    .all<{ f: number }>();
  const { results } = await db
    .prepare(
      `SELECT metric, bucket, length(sorted) / 13 AS n FROM summary_group_span_buckets
WHERE org_key = ?1 AND group_key = '' AND length(sorted) >= ?2 * 13`,
    )
    .bind(org, SORTED_ROW_MIN)
    .all<{ metric: number; bucket: number; n: number }>();
  return { heads: head.results.length, rows: results };
}

/** Own check of the export's totals medians (the reference's, recomputed). */
function totalsOf(rows: ExportRow[]) {
  const r = rows as unknown as { createdAt: string; mergedAt: string; serviceFirstReviewedAt: string | null }[];
  const at = (v: number[]) => [...v].sort((a, b) => a - b)[medianIndex(v.length)];
  return {
    merge: at(r.map((x) => Date.parse(x.mergedAt) - Date.parse(x.createdAt))),
    review: at(
      r
        .filter((x) => x.serviceFirstReviewedAt)
        .map((x) => Date.parse(x.serviceFirstReviewedAt as string) - Date.parse(x.createdAt)),
    ),
  };
}

/** Bucket values read with spans and without (the window of a sorted row reads far fewer). */
async function valuesRead(org: string, w: Window, g: "author" | "repo") {
  const db = await shardDb(org);
  const spanned = await summarizeGroupings(db, groupingsOf(org, w, [g]));
  const plain = await summarizeGroupings(db, groupingsOf(org, w, [g]), { ...SUMMARY_LIMITS, groupSpans: false });
  expect(spanned.groupings[0]?.totals).toEqual(plain.groupings[0]?.totals);
  return { spanned: spanned.bucketValues, plain: plain.bucketValues, fromGroupMonths: spanned.fromGroupMonths };
}

describe("summary eleventh attack: sorted span rows read through a window", () => {
  it("exact ties in the big sorted bucket, the median at a tie boundary (author and repo)", async () => {
    const { org, get } = await summaryOrg("atk11a", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    expect(new Set(M.map(durationBucket)).size).toBe(1);
    expect(new Set(R.map(durationBucket)).size).toBe(1);
    const random = seededRandom(1101);
    const at = times(FEB, MAY_END, 70);
    const n = at.length;
    expect(n).toBeGreaterThan(SORTED_ROW_MIN + 200);
    // Merge: last of M[0] at the median's rank; review: first of R[1].
    const merges = tied(random, [M[0] as number, M[1] as number], lastOfFirst(n));
    const reviews = tied(random, R, firstOfSecond(n));
    await postEventsOk(eventsOf(org, prsAt(at, merges, reviews, 1)));
    for (const g of ["author", "repo"] as const) {
      const rows = await agrees(get, org, SPAN, `ties ${g}`, [g], { passes: 3 });
      expect(rows.length).toBe(n);
      expect(totalsOf(rows)).toEqual({ merge: M[0], review: R[1] });
    }
    const read = await valuesRead(org, SPAN, "author");
    console.log("attack 1 values read", read);
    expect(read.plain - read.spanned).toBeGreaterThan(SORTED_ROW_MIN);
    const s = await sortedRows(org);
    expect(s.heads).toBeGreaterThan(0);
    expect(s.rows.length).toBeGreaterThan(0);
  });

  it("a window cutting into the span's months, straddlers and findings at both edges (ties equal to the window's edges)", async () => {
    const { org, get } = await summaryOrg("atk11b", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    const random = seededRandom(1102);
    const w: Window = { start: Date.parse("2026-01-25T13:00:00Z"), end: Date.parse("2026-06-03T11:00:00Z") };
    // The span's months: ties of three durations; the edge days: the same durations.
    const at = times(FEB, MAY_END, 70);
    const merges = tied(random, M, [
      Math.floor(at.length / 2),
      Math.floor(at.length / 4),
      at.length - Math.floor(at.length / 2) - Math.floor(at.length / 4),
    ]);
    const reviews = tied(random, R, firstOfSecond(at.length));
    const prs = prsAt(at, merges, reviews, 1);
    const edgeAt = [
      ...times(Date.parse("2026-01-25T12:00:00Z"), FEB, 90),
      ...times(Date.parse("2026-06-01T00:00:00Z"), w.end + 6 * HOUR, 90),
    ];
    prs.push(
      ...prsAt(
        edgeAt,
        edgeAt.map((_, i) => M[i % 3] as number),
        edgeAt.map((_, i) => R[i % 2] as number),
        10_000,
      ),
    );
    // Straddlers: merged in the span's first/last days, reviewed before the window (or at its first
    // days) too; findings before, inside and after the window.
    let n = 20_000;
    for (let i = 0; i < 240; i++) {
      const firstDays = i % 2 === 0;
      const merged = firstDays ? FEB + 3 * HOUR + i * 17 * MIN : MAY_END - 3 * HOUR - i * 17 * MIN;
      const d = M[i % 3] as number;
      const created = merged - d;
      const outside = firstDays
        ? i % 4 === 0
          ? Date.parse("2026-01-20T10:00:00Z") + i * MIN // before the window: serviceFirstReviewedAt outside
          : Date.parse("2026-01-28T10:00:00Z") + i * MIN // edge days, inside the window
        : i % 4 === 1
          ? Date.parse("2026-06-05T10:00:00Z") + i * MIN // after the window
          : Date.parse("2026-06-02T10:00:00Z") + i * MIN; // edge days inside
      const reviews = [created + (R[i % 2] as number), outside];
      prs.push({
        repo: REPOS[i % 3] as string,
        n: n++,
        author: AUTHORS[i % 5],
        created,
        merged,
        reviews,
        findings: [
          { at: Date.parse("2026-01-24T10:00:00Z") + i * MIN, fixed: i % 2 === 0 },
          { at: Date.parse("2026-01-26T10:00:00Z") + i * MIN, fixed: true },
          { at: merged - MIN, fixed: i % 3 === 0 },
          { at: Date.parse("2026-06-02T10:00:00Z") + i * MIN, fixed: false },
          { at: Date.parse("2026-06-04T10:00:00Z") + i * MIN, fixed: true },
        ],
      });
    }
    await postEventsOk(eventsOf(org, prs));
    for (const g of ["author", "repo"] as const) await agrees(get, org, w, `cut ${g}`, [g], { passes: 3 });
    // And the span's months exactly, then a window of one day off on each side.
    await agrees(get, org, SPAN, "span exactly", ["author"], { passes: 3 });
    await agrees(get, org, { start: FEB + 86_400_000, end: MAY_END - 86_400_000 }, "one day in", ["author", "repo"], {
      passes: 3,
    });
    const s = await sortedRows(org);
    expect(s.rows.length).toBeGreaterThan(0);
    console.log("attack 2 values read", await valuesRead(org, w, "author"), await valuesRead(org, w, "repo"), s);
  });

  it("a write after the span is built (re-versioned pull requests moving the median across a tie, new reviews, new pull requests)", async () => {
    const { org, get } = await summaryOrg("atk11c", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    const random = seededRandom(1103);
    const at = times(FEB, MAY_END, 70);
    const n = at.length;
    const merges = tied(random, [M[0] as number, M[1] as number], lastOfFirst(n));
    const reviews = tied(random, R, firstOfSecond(n));
    const prs = prsAt(at, merges, reviews, 1);
    await postEventsOk(eventsOf(org, prs));
    const before = await agrees(get, org, SPAN, "before", ["author"], { passes: 3 });
    expect(totalsOf(before)).toEqual({ merge: M[0], review: R[1] });
    expect((await sortedRows(org)).rows.length).toBeGreaterThan(0);
    // Re-version 3 pull requests of M[0] to M[2] (the median moves to the first M[1]), one of R[1] gets an earlier review (R[0]).
    const moved = prs.filter((p) => p.merged - p.created === M[0]).slice(0, 3);
    const later = "2026-11-02T00:00:00.000Z";
    const changed: Pr[] = moved.map((p) => ({
      ...p,
      created: p.merged - (M[2] as number),
      reviews: [p.merged - (M[2] as number) + (R[1] as number)],
      version: later,
    }));
    const earlier = prs.filter((p) => p.reviews[0] !== undefined && (p.reviews[0] as number) - p.created === R[1]).slice(0, 2);
    const reReviewed: Pr[] = earlier.map((p) => ({ ...p, reviews: [...p.reviews, p.created + (R[0] as number) - 1000] }));
    await postEventsOk(eventsOf(org, [...changed, ...reReviewed]));
    const after = await agrees(get, org, SPAN, "after re-version", ["author", "repo"], { passes: 3 });
    expect(after.length).toBe(n);
    expect(totalsOf(after).merge).toBe(M[1]);
    // New pull requests in March (the span's middle): two of M[0], median back to the last M[0]? n+2.
    const extra = prsAt(
      [
        Date.parse("2026-03-10T10:00:00Z"),
        Date.parse("2026-03-10T11:00:00Z"),
        Date.parse("2026-03-10T12:00:00Z"),
        Date.parse("2026-03-10T13:00:00Z"),
        Date.parse("2026-03-10T14:00:00Z"),
        Date.parse("2026-03-10T15:00:00Z"),
      ],
      Array(6).fill(M[0]),
      Array(6).fill(R[0]),
      50_000,
    );
    await postEventsOk(eventsOf(org, extra));
    const more = await agrees(get, org, SPAN, "after new", ["author", "repo"], { passes: 3 });
    expect(more.length).toBe(n + 6);
    console.log("attack 3 values read", await valuesRead(org, SPAN, "repo"), await sortedRows(org));
  });

  it("totals over many small groups (no group's row sorted, the totals' is), and a member who cannot see a private repository", async () => {
    const { org, get } = await summaryOrg("atk11d", "member", {
      api: { private: false },
      web: { private: false },
      vault: { private: true },
    });
    const random = seededRandom(1104);
    const at = times(FEB, MAY_END, 65);
    const n = at.length;
    const authors = Array.from({ length: 300 }, (_, i) => `dev-${i}`);
    const merges = tied(random, [M[0] as number, M[1] as number], lastOfFirst(n));
    const reviews = tied(random, R, lastOfFirst(n));
    // The private repository holds a third of them: the member's totals must not count them.
    await postEventsOk(eventsOf(org, prsAt(at, merges, reviews, 1, authors, ["api", "web", "vault"])));
    for (const g of ["author", "repo"] as const) {
      const rows = await agrees(get, org, SPAN, `member ${g}`, [g], { passes: 3 });
      expect(rows.every((r) => (r as unknown as { repo: string }).repo !== "vault")).toBe(true);
    }
    // An admin of the same organization: everything.
    const admin = await adminGetOf(org);
    for (const g of ["author", "repo"] as const) {
      const rows = await agrees(admin, org, SPAN, `admin ${g}`, [g], { passes: 3 });
      expect(rows.length).toBe(n);
      // A repository filter over the same span: the totals must not be the span's row of every repository.
      const api = await agrees(admin, org, SPAN, `admin ${g} repo=api`, [g], { passes: 3, extra: "&repo=api" });
      expect(api.length).toBeLessThan(n);
    }
    expect((await spans(org)).length).toBeGreaterThan(0);
    console.log("attack 4 values read", await valuesRead(org, SPAN, "author"));
    expect((await sortedRows(org)).rows.length).toBeGreaterThan(0);
  });
});
