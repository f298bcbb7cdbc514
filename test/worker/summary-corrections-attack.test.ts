import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { DURATION_BUCKET_BOUNDS } from "../../src/rules/duration-buckets";
import type { AnalyticsScope } from "../../src/storage/analytics";
import { type GroupingsQuery, SUMMARY_LIMITS, type SummaryLimits, summarizeGroupings } from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import { EdgeCache } from "../../src/storage/summary-edges";
import { appCall, signIn } from "./app-helpers";
import { moveToOtherShard, postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr, VERSION } from "./summary-attack-data";
import {
  adminGetOf,
  agrees as agreesOverHttp,
  expectedGroupings,
  type Get,
  getWithKey,
  scopeOf,
  shapeOf,
  summaryOrg,
  type Window,
  windowQuery,
} from "./summary-attack-http";
import { type ExportRow, exportRows, GROUP_BYS, type GroupBy, referenceAnswer } from "./summary-reference";
import { deliverQueued, example, repoId, world } from "./webhook-helpers";

/**
 * An outside review's attacks on the summary's edge corrections (commit 9ef8c5a): a full day of the
 * window whose day block holds pull requests straddling an edge of the window (a completed review
 * or posted finding before its start or after its end) is served from its block, and what the block
 * counted of its straddling pull requests beyond what the window counts of them is taken away
 * (`REMOVED_FROM` rows: sums subtracted, the unlisted ones' durations removed as a multiset). The
 * oracle is contract sections 12 and 21: the summary is exactly the export's rows for the same
 * parameters (every page), grouped. Every summary
 * over HTTP is asked at least twice (the first builds the day blocks after its answer, the next read
 * them with corrections); the storage function is also asked directly with corrections on and off,
 * walked, sliced and from duration buckets, each against the export's rows grouped. A failing test
 * is a finding.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);

/** The first full day of the base window (a Sunday) and the last millisecond of its last full day (Friday Mar 20). */
const S = at("2026-03-01T00:00:00.000Z");
const E = at("2026-03-21T00:00:00.000Z") - 1;
const W = { start: S, end: E };
const LATER = "2026-11-05T00:00:00.000Z";

/** Blocks from counts however few pull requests they hold. */
const BUCKETS: SummaryLimits = { ...SUMMARY_LIMITS, bucketsFrom: 0, bucketsPerBlock: 0 };
/** No block served: every row walked, as before blocks. */
const WALK: SummaryLimits = { ...SUMMARY_LIMITS, blocksMax: -1 };
/** The ways the storage function reads the same rows; each must equal the export's rows grouped. */
const READS: [string, SummaryLimits][] = [
  ["corrections", SUMMARY_LIMITS],
  ["whole days", { ...SUMMARY_LIMITS, corrections: false }],
  ["walk", WALK],
  ["sliced", { ...SUMMARY_LIMITS, blockSliceDays: 3, countSliceDays: 3, countWholeDays: 3 }],
  ["buckets", BUCKETS],
  ["sliced buckets", { ...BUCKETS, blockSliceDays: 2, countSliceDays: 2, countWholeDays: 2 }],
  ["sliced buckets, whole days", { ...BUCKETS, blockSliceDays: 2, countSliceDays: 2, countWholeDays: 2, corrections: false }],
  ["no month blocks", { ...SUMMARY_LIMITS, groupMonths: false, blockSliceDays: 4 }],
];

const orgWith = (role: "admin" | "member", repos: Record<string, { private: boolean; collaborator?: boolean }>) =>
  summaryOrg("corr", role, repos);

/** A member (who collaborates on the private docs, not on attic) and an admin of one organization, each with its `get`. */
async function memberAndAdmin() {
  const member = await orgWith("member", {
    api: { private: false },
    web: { private: false },
    docs: { private: true, collaborator: true },
    attic: { private: true },
  });
  return { member, org: member.org, adminGet: await adminGetOf(member.org) };
}

/** Each grouping asked `passes` times over HTTP equals the export's rows (same parameters) grouped; answers the rows. */
const agrees = (
  get: Get,
  org: string,
  w: Window,
  label: string,
  groupBys: readonly GroupBy[] = GROUP_BYS,
  extra = "",
  passes = 2,
) => agreesOverHttp(get, org, w, label, groupBys, { extra, passes });

const shape = shapeOf;
const expected = expectedGroupings;
const scope = scopeOf;

/**
 * The storage function read every way of `READS` (first twice with the defaults: builds, then
 * reads) equals `rows` grouped; answers the blocks' pull requests counted with corrections and
 * without them.
 */
async function directAgrees(db: D1Database, q: GroupingsQuery, rows: ExportRow[], label: string) {
  const want = expected(rows, q.groupBys as GroupBy[], q);
  expect(shape(await summarizeGroupings(db, q)), `${label}: builds`).toEqual(want);
  const served: Record<string, number> = {};
  for (const [name, limits] of READS) {
    const figures = await summarizeGroupings(db, q, limits);
    expect(shape(figures), `${label}: ${name}`).toEqual(want);
    served[name] = figures.fromBlocks;
  }
  const edgeDays = await edgeReadsAgree(db, q, want, label);
  return { corrected: served.corrections as number, whole: served["whole days"] as number, edgeDays };
}

/**
 * The ways of `READS` that serve corrections, each asked three times with an edge cache of its own
 * (`summary-edges.ts`: the first checks the edges in SQL and reads them as edge days, or builds the
 * blocks of the days before the window; the second reads those; the third counts from them), each
 * answer equal to `want`. Answers the most days the last asks counted from edge days.
 */
async function edgeReadsAgree(db: D1Database, q: GroupingsQuery, want: unknown, label: string): Promise<number> {
  let most = 0;
  for (const [name, limits] of READS.filter(([, limits]) => limits.corrections && limits.blocksMax >= 0)) {
    const edgeCache = new EdgeCache();
    for (let ask = 1; ask <= 3; ask++) {
      const figures = await summarizeGroupings(db, q, limits, { edgeCache });
      expect(shape(figures), `${label}: ${name}, edge days, ask ${ask}`).toEqual(want);
      if (ask === 3) most = Math.max(most, figures.edgeDays);
    }
  }
  return most;
}

/** The organization's day blocks of the window's full days that hold a pull request straddling its edge. */
async function straddledBlocks(db: D1Database, org: string, w: Window): Promise<number> {
  const row = await db
    .prepare(
      `SELECT COUNT(*) AS n FROM summary_days WHERE org_key = ?1 AND repo_key = '' AND pull_requests > 0 AND lo IS NOT NULL
  AND day * 86400000 >= ?2 AND day * 86400000 + 86399999 <= ?3 AND (lo < ?2 OR hi > ?3)`,
    )
    .bind(org, w.start, w.end)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

const REPOS = ["api", "web", "docs"];
const AUTHORS = ["alice", "Bob", "bob", "carol"];

/**
 * Three pull requests a day from `from` to `to` (exclusive), each merged, created and reviewed on
 * its day (none straddles a midnight): durations to first review of 1, 2 or 3 hours and to merge
 * of 5 or 6, so the straddling pull requests below share their values; nulls, findings, AI lines.
 */
function daily(from: number, to: number, first: number): Pr[] {
  const prs: Pr[] = [];
  let n = first;
  for (let day = from, d = 0; day < to; day += DAY, d++)
    for (let k = 0; k < 3; k++, n++) {
      const merged = day + (9 + 5 * k) * HOUR + (n % 7) * MINUTE;
      const created = merged - (5 + (n % 2)) * HOUR;
      prs.push({
        repo: REPOS[(d + k) % REPOS.length] as string,
        n,
        author: AUTHORS[(d * 3 + k) % AUTHORS.length] as string,
        created,
        merged,
        reviews: [created + (1 + (n % 3)) * HOUR],
        linesAdded: n % 10 === 0 ? null : n * 3,
        findings: n % 4 === 0 ? [{ at: merged - HOUR, fixed: n % 8 === 0 }] : [],
        ...(n % 3 === 0 ? { ai: n % 50 } : {}),
      });
    }
  return prs;
}

/** Extra events a `Pr` cannot say: reviews not completed (the first failed, the next in progress, alternately). */
type Straddler = Pr & { failed?: number[] };

/**
 * Pull requests merged on day `D` (its first millisecond) whose reviews or findings lie around the
 * window [s, e]: each kind straddles it, or lies exactly at its edges. `ghost` and `attic` hold only
 * pull requests that the window's export never lists (their groups must not appear).
 */
function straddlers(D: number, s: number, e: number, first: number): Straddler[] {
  const kinds: ((n: number) => Straddler)[] = [
    // Its only completed review a millisecond before the start: not listed, but in its day's block.
    (n) => ({ repo: "attic", n, author: "ghost", created: s - 1 - 2 * HOUR, merged: D + 10 * HOUR, reviews: [s - 1] }),
    // Reviewed before the start and inside: listed, its first review (before the window) its duration.
    (n) => ({
      repo: "api",
      n,
      author: "alice",
      created: s - 3 * HOUR,
      merged: D + 11 * HOUR,
      reviews: [s - 2 * HOUR, D + 11 * HOUR],
    }),
    // Reviewed on both sides, never inside: not listed (a candidate that fails the check).
    (n) => ({
      repo: "attic",
      n,
      author: "ghost",
      created: s - 6 * HOUR,
      merged: D + 12 * HOUR,
      reviews: [s - 5 * HOUR, e + 5 * HOUR],
    }),
    // Its only review a millisecond after the end: not listed; to merge 5 hours, as kept ones.
    (n) => ({ repo: "web", n, author: "ghost", created: D + 7 * HOUR, merged: D + 12 * HOUR, reviews: [e + 1] }),
    // Reviewed inside and after the end: listed; 2 hours to first review, 6 to merge.
    (n) => ({ repo: "web", n, author: "Bob", created: D + 7 * HOUR, merged: D + 13 * HOUR, reviews: [D + 9 * HOUR, e + 1] }),
    // A fixed finding a millisecond before the start and one inside; AI lines, no lines added.
    (n) => ({
      repo: "docs",
      n,
      author: "carol",
      created: D + 9 * HOUR,
      merged: D + 14 * HOUR,
      reviews: [D + 10 * HOUR],
      findings: [
        { at: s - 1, fixed: true },
        { at: D + 9 * HOUR + 30 * MINUTE, fixed: false },
      ],
      ai: 7,
      linesAdded: null,
    }),
    // A fixed finding a millisecond after the end, and one inside.
    (n) => ({
      repo: "api",
      n,
      author: "bob",
      created: D + 9 * HOUR,
      merged: D + 15 * HOUR,
      reviews: [D + 12 * HOUR],
      findings: [
        { at: e + 1, fixed: true },
        { at: D + 10 * HOUR, fixed: true },
      ],
      ai: 3,
    }),
    // Findings only outside, on both sides.
    (n) => ({
      repo: "docs",
      n,
      author: "alice",
      created: D + 11 * HOUR,
      merged: D + 16 * HOUR,
      reviews: [D + 13 * HOUR],
      findings: [
        { at: s - 10 * HOUR, fixed: true },
        { at: e + 10 * HOUR, fixed: false },
      ],
    }),
    // Completed before the start, failed and in progress inside: not listed (neither ever counts).
    (n) => ({
      repo: "attic",
      n,
      author: "ghost",
      created: D + 12 * HOUR,
      merged: D + 17 * HOUR,
      reviews: [s - HOUR],
      failed: [D + 13 * HOUR, D + 14 * HOUR],
    }),
    // Negative durations (created after its first review and its merge), reviewed again after the end.
    (n) => ({
      repo: "api",
      n,
      author: "BOB",
      created: D + 20 * HOUR,
      merged: D + 18 * HOUR,
      reviews: [D + 17 * HOUR, e + 2 * HOUR],
    }),
    // Reviewed exactly at the start and at the end: inside, no straddle.
    (n) => ({ repo: "web", n, author: "carol", created: D + 13 * HOUR, merged: D + 19 * HOUR, reviews: [s, e] }),
    // Findings exactly at the start and at the end, both fixed.
    (n) => ({
      repo: "api",
      n,
      author: "alice",
      created: D + 15 * HOUR,
      merged: D + 20 * HOUR,
      reviews: [D + 16 * HOUR],
      findings: [
        { at: s, fixed: true },
        { at: e, fixed: true },
      ],
    }),
  ];
  return kinds.map((kind, i) => kind(first + i));
}

/** The events of pull requests with their failed reviews. */
function straddlerEvents(org: string, prs: readonly Straddler[]): unknown[] {
  return [
    ...eventsOf(org, prs),
    ...prs.flatMap((p) =>
      (p.failed ?? []).map((t, j) => ({
        type: "review",
        org,
        repo: p.repo,
        prNumber: p.n,
        reviewId: `failed-${p.repo}-${p.n}-${j}`,
        status: j % 2 === 0 ? "failed" : "in_progress",
        completedAt: j % 2 === 0 ? iso(t) : null,
        updatedAt: VERSION,
      })),
    ),
  ];
}

/** The straddlers of the base window on its first, an inner and its last full day, and two merged just outside it. */
function edgeData(first: number): Straddler[] {
  return [
    ...straddlers(S, S, E, first),
    ...straddlers(S + 9 * DAY, S, E, first + 100),
    ...straddlers(E + 1 - DAY, S, E, first + 200),
    // Merged a millisecond before the start and after the end, reviewed inside (walked by the tiers).
    { repo: "api", n: first + 300, author: "alice", created: S - 5 * HOUR, merged: S - 1, reviews: [S + HOUR] },
    { repo: "web", n: first + 301, author: "Bob", created: E - 6 * HOUR, merged: E + 1, reviews: [E - HOUR] },
    // Straddlers merged at the first and the last millisecond of a full day.
    { repo: "attic", n: first + 302, author: "ghost", created: S - 3 * HOUR, merged: S, reviews: [S - 1] },
    { repo: "web", n: first + 303, author: "carol", created: E - 5 * HOUR, merged: E, reviews: [E - 4 * HOUR, E + 1] },
    {
      repo: "api",
      n: first + 304,
      author: "Bob",
      created: S + 9 * DAY - 2 * HOUR,
      merged: S + 9 * DAY,
      reviews: [S - 1, S + 9 * DAY - HOUR],
    },
    {
      repo: "docs",
      n: first + 305,
      author: "alice",
      created: S + 10 * DAY - 5 * HOUR,
      merged: S + 10 * DAY - 1,
      reviews: [S + 10 * DAY - 2 * HOUR],
      findings: [{ at: E + 1, fixed: true }],
    },
  ];
}

const ALL_REPOS = { api: { private: false }, web: { private: false }, docs: { private: false }, attic: { private: false } };

describe("attack: edge corrections against the export", () => {
  it("straddlers of every kind on the first, an inner and the last full day; windows at, and a millisecond either side of, midnight and their review and finding times", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", ALL_REPOS);
    const prs = [...daily(S - 4 * DAY, E + 1 + 4 * DAY, 1), ...edgeData(1_000)];
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    const base = await agrees(get, org, W, "base window");
    // ghost and attic hold only pull requests the export does not list: no group of theirs.
    expect(base.some((r) => r.author === "ghost" || r.repo === "attic")).toBe(false);
    expect(await straddledBlocks(db, org, W)).toBe(3);
    const windows: Window[] = [
      W,
      { start: S - 1, end: E + 1 }, // the reviews and findings a millisecond outside are inside
      { start: S + 1, end: E - 1 }, // the first and last days are no longer full
      { start: S - 2 * HOUR, end: E }, // a start inside a day, at a review
      { start: S - 2 * HOUR + 1, end: E + 2 * HOUR }, // a millisecond after it; an end at a review
      { start: S - 5 * HOUR, end: E + 5 * HOUR }, // both reviews of the both-sides kind inside
      { start: S - 5 * HOUR + 1, end: E + 5 * HOUR - 1 },
      { start: S - 10 * HOUR, end: E + 10 * HOUR - 1 }, // at one outside finding, a millisecond before the other
      { start: S + 9 * DAY, end: S + 10 * DAY - 1 }, // one full day: the inner straddlers' own
    ];
    for (const w of windows) await agrees(get, org, w, `${iso(w.start)}..${iso(w.end)}`);
    // The storage function, every way, against the same export; corrections serve more from blocks.
    for (const w of windows) {
      const rows = await exportRows<ExportRow>(get, windowQuery(org, w), { perPage: 100, maxPages: 100 });
      const q: GroupingsQuery = { ...scope(org, w), groupBys: ["day", "repo", "author"] };
      const { corrected, whole, edgeDays } = await directAgrees(db, q, rows, `${iso(w.start)}..${iso(w.end)}`);
      // Once read as edge days: the three straddled days (their corrections), and the day before
      // and the day after the window (merged a millisecond outside it, reviewed inside).
      if (w === W) expect(edgeDays).toBe(5);
      // Three straddled days served from their blocks (walked whole without corrections): counted from
      // them, each day's pull requests less those the window's walk would not find (every review on
      // one side of it): 3 + 2 at the edges + 6 listed straddlers + 1 reviewed on both sides, and the
      // ones merged at a day's edge (the first day's is found by no walk, the others are listed).
      if (w === W) expect(corrected - whole).toBe(12 + 14 + 13);
      const weeks = await directAgrees(db, { ...q, groupBys: ["week", "month"] }, rows, `weeks ${iso(w.start)}`);
      expect(weeks.corrected).toBeGreaterThanOrEqual(weeks.whole);
    }
    // Asked again in reverse order, every block now built.
    for (const w of [...windows].reverse()) await agrees(get, org, w, `again ${iso(w.start)}..${iso(w.end)}`, GROUP_BYS, "", 1);
  });

  it("multiset removal: equal durations removed and kept, medians exactly on a removed value, groups wholly removed, negative and bucket-bound durations", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, attic: { private: false } });
    const b = DURATION_BUCKET_BOUNDS[60] as number; // about 5.9 minutes
    const prs: Straddler[] = [];
    let n = 1;
    // On each full day of [S, S + 4 days): kept pull requests of api with durations b - 1, b, b, b + 1, and
    // of web with -HOUR, 0, 0; straddlers (a review after the end) of api with b, b, and of web with 0
    // and -HOUR; each day also one straddler alone in attic (by ghost), listed on no day.
    const s = S;
    const e = S + 4 * DAY - 1;
    for (let day = S; day <= e; day += DAY) {
      const kept = (repo: string, tf: number, tm: number, author: string) => {
        const merged = day + (8 + (n % 10)) * HOUR + n;
        const created = merged - tm;
        prs.push({ repo, n: n++, author, created, merged, reviews: [created + tf] });
      };
      const straddling = (repo: string, tf: number, tm: number, author: string, late = true) => {
        const merged = day + (8 + (n % 10)) * HOUR + n;
        const created = merged - tm;
        // Either its first review lies inside and a second after the end, or its only one before the start.
        prs.push({ repo, n: n++, author, created, merged, reviews: late ? [created + tf, e + 1 + n] : [s - 1 - n] });
      };
      kept("api", b - 1, b - 1, "alice");
      kept("api", b, b, "alice");
      kept("api", b, b, "bob");
      kept("api", b + 1, b + 1, "bob");
      kept("web", -HOUR, -HOUR, "carol");
      kept("web", 0, 0, "carol");
      kept("web", 0, 0, "alice");
      straddling("api", b, b, "alice");
      straddling("api", b, b, "bob", false);
      straddling("web", 0, 0, "carol");
      straddling("web", -HOUR, -HOUR, "dave", false);
      straddling("attic", b, b, "ghost", false);
    }
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    const w = { start: s, end: e };
    const rows = await agrees(get, org, w, "duplicates", GROUP_BYS, "", 3);
    expect(rows.some((r) => r.author === "ghost" || r.author === "dave" || r.repo === "attic")).toBe(false);
    expect(await straddledBlocks(db, org, w)).toBe(4);
    for (const groupBys of [["day"], ["week", "repo"], ["author", "month", "day"]] as GroupBy[][]) {
      const { corrected, whole } = await directAgrees(db, { ...scope(org, w), groupBys }, rows, groupBys.join());
      // Every day served from its block, less its 3 straddlers reviewed only before the start (the
      // 2 listed ones count as their block counts them); without corrections every day walked.
      expect([corrected, whole]).toEqual([4 * 9, 0]);
    }
    // The medians land on values that straddlers also hold (api: b; web: 0).
    const byRepo = (await get(`/api/analytics/v1/summary?${windowQuery(org, w)}&groupBy=repo`)) as {
      groups: { key: string; medianMsToFirstReview: number; pullRequests: number }[];
    };
    expect(byRepo.groups.map((g) => [g.key, g.pullRequests, g.medianMsToFirstReview])).toEqual([
      ["api", 20, b],
      ["web", 16, 0],
    ]);
    // A wider window lists the straddlers reviewed before the start and after the end.
    await agrees(get, org, { start: s - 10 * DAY, end: e + 10 * DAY }, "wider", ["day", "repo", "author"]);
    // A day whose every pull request is a straddler the window does not list: served from its block,
    // all of it removed, an answer without groups (and the day's empty bucket).
    const lone = S + 10 * DAY;
    const unlisted: Straddler[] = [0, 1, 2].map((i) => ({
      repo: "api",
      n: 900 + i,
      author: "alice",
      created: lone - 2 * HOUR - i,
      merged: lone + (3 + i) * HOUR,
      reviews: [lone - 1 - i],
    }));
    await postEventsOk(straddlerEvents(org, unlisted));
    const empty = await agrees(get, org, { start: lone, end: lone + DAY - 1 }, "a day of straddlers only", GROUP_BYS, "", 3);
    expect(empty).toEqual([]);
    const only = await directAgrees(
      db,
      { ...scope(org, { start: lone, end: lone + DAY - 1 }), groupBys: ["day", "repo"] },
      [],
      "lone",
    );
    expect([only.corrected, only.whole]).toEqual([0, 0]);
    // With the four days before it, from the blocks' counts: a week's and the totals' parts less every value of that day.
    const eleven = { start: S, end: lone + DAY - 1 };
    const around = await agrees(get, org, eleven, "eleven days", ["week", "day"]);
    const weeks = await directAgrees(db, { ...scope(org, eleven), groupBys: ["week", "day"] }, around, "eleven days");
    // The straddlers reviewed after the first four days' end and the lone day's lie inside this window:
    // those days' blocks keep 9 each (3 reviewed before the start straddle), the lone day's block is served whole.
    expect([weeks.corrected, weeks.whole]).toEqual([4 * 9 + 3, 3]);
    await agrees(get, org, { start: lone - 1, end: lone + DAY - 1 }, "a millisecond earlier: the day's straddlers listed", [
      "day",
      "author",
    ]);
  });

  it("medians from duration buckets (over 2,000 pull requests served): removed values inside the median's bucket, below it, distinct", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false } });
    const low = DURATION_BUCKET_BOUNDS[99] as number;
    const T = at("2026-04-06T00:00:00.000Z"); // a Monday
    const w = { start: T + 12 * HOUR, end: T + 4 * DAY + 12 * HOUR - 1 }; // full days T + 1 to T + 3
    const prs: Straddler[] = [];
    let n = 1;
    // 700 pull requests a full day, to first review low + 1000 + 7i ms (all in one bucket), to merge an hour more.
    for (let d = 0; d <= 4; d++)
      for (let i = 0; i < (d === 0 || d === 4 ? 20 : 700); i++) {
        const merged = T + d * DAY + (d === 0 ? 13 : d === 4 ? 6 : 5) * HOUR + i * 60_000 + d;
        const tf = low + 1_000 + 7 * n;
        const created = merged - tf - HOUR;
        prs.push({
          repo: n % 5 === 0 ? "web" : "api",
          n: n++,
          author: n % 3 === 0 ? "bob" : "alice",
          created,
          merged,
          reviews: [created + tf],
        });
      }
    // On each full day, straddlers whose durations lie in the same bucket below every kept one: three
    // listed (a second review after the end), three not (their only review before the start).
    for (let d = 1; d <= 3; d++)
      for (let i = 0; i < 6; i++) {
        const merged = T + d * DAY + 4 * HOUR + i * 60_000;
        const tf = low + 10 * d + i;
        if (i % 2 === 0) {
          const created = merged - tf - HOUR;
          prs.push({ repo: "api", n: n++, author: "alice", created, merged, reviews: [created + tf, w.end + 1 + i] });
        } else {
          const reviewed = w.start - 1 - i;
          prs.push({ repo: "web", n: n++, author: "bob", created: reviewed - tf, merged, reviews: [reviewed] });
        }
      }
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    const rows = await agrees(get, org, w, "buckets", ["day", "week", "month", "repo"], "", 3);
    expect(rows).toHaveLength(2 * 20 + 3 * 700 + 3 * 3);
    expect(await straddledBlocks(db, org, w)).toBe(3);
    // The default limits read these blocks' counts and the median's bucket's values (as the route did).
    const q: GroupingsQuery = { ...scope(org, w), groupBys: ["day", "week"] };
    const fromCounts = await summarizeGroupings(db, q);
    // Each day's 700 and its 3 listed straddlers counted from the blocks.
    expect([fromCounts.fromBlocks, fromCounts.bucketValues > 0]).toEqual([3 * 703, true]);
    expect(shape(fromCounts)).toEqual(expected(rows, q.groupBys as GroupBy[], w));
    const { corrected, whole } = await directAgrees(db, q, rows, "day, week");
    expect([corrected, whole]).toEqual([3 * 703, 0]);
    // A window a millisecond wider at each end lists every straddler, and one narrower walks none of the first day.
    await agrees(get, org, { start: w.start - 10, end: w.end + 10 }, "wider", ["day", "month"]);
    await agrees(get, org, { start: T + DAY + 1, end: w.end }, "narrower", ["week"]);
  });

  it("long windows read in slices (over 92 full days; over 61 for the organization's counts, 366 for a list's), straddlers on their first, an inner and their last full day, an admin and a member", {
    timeout: 180_000,
  }, async () => {
    const { member, org, adminGet } = await memberAndAdmin();
    const s = at("2025-01-10T00:00:00.000Z");
    const e = s + 380 * DAY - 1; // 380 full days
    const L = { start: s, end: e };
    // One pull request a day (every third of `daily`'s), straddlers on the first, the 190th and the last day.
    const prs: Straddler[] = [
      ...daily(s - 3 * DAY, e + 1 + 3 * DAY, 1).filter((p) => p.n % 3 === 1),
      ...straddlers(s, s, e, 10_000),
      ...straddlers(s + 190 * DAY, s, e, 10_100),
      ...straddlers(e + 1 - DAY, s, e, 10_200),
    ];
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    const all = await agrees(adminGet, org, L, "admin, 380 days", GROUP_BYS, "", 3);
    expect(await straddledBlocks(db, org, L)).toBe(3);
    await agrees(member.get, org, L, "member, 380 days", ["day", "repo", "author"]);
    await agrees(member.get, org, L, "member, 380 days, lists", ["week", "author"], "&repo=api,docs&author=alice,bob");
    const wider = { start: s - 1, end: e + 1 };
    await agrees(adminGet, org, wider, "admin, a millisecond wider", ["day", "week", "repo", "author"]);
    const hundred = { start: s, end: s + 100 * DAY - 1 };
    await agrees(adminGet, org, hundred, "admin, 100 days", ["day", "repo", "author"]);
    await agrees(member.get, org, hundred, "member, 100 days", ["month", "repo"]);
    // A listed repository's whole months come from its month blocks, its straddled days with corrections.
    await agrees(adminGet, org, L, "admin, api listed", ["day", "week", "month"], "&repo=api");
    await agrees(adminGet, org, L, "admin, web and docs listed", ["day", "month", "repo"], "&repo=web,docs");
    // Through the storage function: each grouping alone (a repository's or author's month blocks
    // per group beside the straddled days), and with an access list, every way.
    for (const groupBys of [["repo"], ["author"], ["day"], ["week", "repo", "author"]] as GroupBy[][]) {
      const { corrected, whole } = await directAgrees(db, { ...scope(org, L), groupBys }, all, groupBys.join());
      expect(corrected, groupBys.join()).toBeGreaterThan(whole);
    }
    const access = all.filter((r) => r.repo !== "attic" && r.repo !== "web");
    await directAgrees(
      db,
      { ...scope(org, L, { accessibleRepoKeys: ["api", "docs"] }), groupBys: ["day", "repo"] },
      access,
      "access",
    );
  });

  it("a write on a straddler between the blocks' slices and the statement, or before the medians' values: the answer is the export's before or after it", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", ALL_REPOS);
    const prs = [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)];
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    await agrees(get, org, W, "before", ["day"]);
    const byN = (n: number) => prs.find((p) => p.n === n) as Straddler;
    let version = 0;
    const ref = (p: Straddler) => ({ org, repo: p.repo, prNumber: p.n, updatedAt: iso(at(LATER) + ++version * 1_000) });
    // Each write is made once per reading, each time changing what it changes (a new instant or id).
    let toggles = 0;
    const writes: [string, boolean, () => unknown[]][] = [
      // The first day's straddler reviewed only before the start gets a review inside (its block goes).
      [
        "review inside, unlisted",
        true,
        () => {
          const r = ref(byN(1_000));
          return [{ type: "review", ...r, reviewId: "w1", status: "completed", completedAt: iso(S + 2 * HOUR + version) }];
        },
      ],
      // The inner day's straddler reviewed on both sides gets one between them (no column changes: its block stays).
      [
        "review between both sides",
        false,
        () => {
          const r = ref(byN(1_102));
          return [
            { type: "review", ...r, reviewId: "w2", status: "completed", completedAt: iso(S + 9 * DAY + 13 * HOUR + version) },
          ];
        },
      ],
      // A posted fixed finding inside on the last day's straddler with a finding after the end.
      [
        "finding inside",
        true,
        () => {
          const r = ref(byN(1_206));
          return [
            {
              type: "finding",
              ...r,
              findingId: `w3-${version}`,
              createdAt: iso(E - HOUR),
              posted: true,
              aiAddressed: true,
              feedback: null,
            },
          ];
        },
      ],
      // The first day's straddler reviewed before and inside: merged on another day, its author changed.
      [
        "merge moved",
        true,
        () => {
          const p = byN(1_001);
          const r = ref(p);
          const mergedAt = iso(S + 5 * DAY + HOUR + version);
          return [
            { type: "pull_request", ...r, author: "dora", createdAt: iso(p.created), mergedAt, linesAdded: 4, linesDeleted: 1 },
          ];
        },
      ],
      // The negative straddler's later review turns failed (it no longer straddles), then completed again.
      [
        "review failed",
        true,
        () => {
          const r = ref(byN(1_209));
          const status = toggles++ % 2 === 0 ? "failed" : "completed";
          return [{ type: "review", ...r, reviewId: "r-api-1209-1", status, completedAt: iso(E + 2 * HOUR) }];
        },
      ],
    ];
    const readings: [string, SummaryLimits, GroupBy[], { sliced: boolean; bucketed: boolean }][] = [
      ["sliced", { ...SUMMARY_LIMITS, blockSliceDays: 3 }, ["day", "repo", "author"], { sliced: true, bucketed: false }],
      [
        "sliced buckets",
        { ...BUCKETS, blockSliceDays: 3, countSliceDays: 3, countWholeDays: 3 },
        ["week", "day"],
        { sliced: true, bucketed: true },
      ],
      ["buckets", BUCKETS, ["month", "day"], { sliced: false, bucketed: true }],
      ["durations", SUMMARY_LIMITS, ["week", "author"], { sliced: false, bucketed: false }],
    ];
    for (const [what, changesBlock, write] of writes)
      for (const [how, limits, groupBys, { sliced, bucketed }] of readings)
        for (const hook of ["beforeWalk", "beforeMedians"] as const) {
          const q: GroupingsQuery = { ...scope(org, W), groupBys };
          await summarizeGroupings(db, q); // every day's block built
          const before = await exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 });
          let calls = 0;
          const figures = await summarizeGroupings(db, q, limits, {
            [hook]: async () => {
              if (calls++ === 0) await postEventsOk(write());
            },
          });
          const after = await exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 });
          const label = `${what}, ${how}, ${hook}`;
          if (hook === "beforeWalk") {
            // The statement reads the write; blocks read before it and changed since are read again.
            expect(calls, label).toBe(sliced && changesBlock ? 2 : 1);
            expect(shape(figures), label).toEqual(expected(after, groupBys, W));
          } else if (!bucketed) {
            // The statement's answer stands: nothing is read after it.
            expect(calls, label).toBe(1);
            expect(shape(figures), label).toEqual(expected(before, groupBys, W));
          } else expect([expected(before, groupBys, W), expected(after, groupBys, W)], label).toContainEqual(shape(figures));
          expect(shape(await summarizeGroupings(db, q, limits)), `${label}, again`).toEqual(expected(after, groupBys, W));
        }
    await agrees(get, org, W, "after the writes");
  });

  it("renames (a repository into another, one recased) and a move to the other shard, with straddled days built before each", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", ALL_REPOS);
    await postEventsOk(straddlerEvents(org, [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)]));
    const windows = [W, { start: S - 1, end: E + 1 }];
    for (const w of windows) await agrees(get, org, w, `before ${iso(w.start)}`);
    await moveRows(await shardDb(org), { orgKey: org, repo: "attic" }, { orgKey: org, repo: "web" });
    for (const w of windows) await agrees(get, org, w, `attic into web ${iso(w.start)}`);
    await moveRows(await shardDb(org), { orgKey: org, repo: "api" }, { orgKey: org, repo: "Core" });
    for (const w of windows) {
      const rows = await agrees(get, org, w, `api to Core ${iso(w.start)}`);
      expect(rows.some((r) => r.repo === "Core")).toBe(true);
    }
    await moveToOtherShard(org);
    const db = await shardDb(org);
    for (const w of windows) {
      const rows = await agrees(get, org, w, `moved ${iso(w.start)}`);
      await directAgrees(db, { ...scope(org, w), groupBys: ["week", "repo", "author"] }, rows, `moved ${iso(w.start)}`);
    }
    expect(await straddledBlocks(db, org, W)).toBe(3);
  });

  it("null creation times (set in the table: no event writes one) on straddlers and on the pull requests they share a day with", {
    timeout: 60_000,
  }, async () => {
    const { org } = await orgWith("admin", ALL_REPOS);
    const prs = [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)];
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    // Every other straddler of the first and last days, and one pull request of each of those days that straddles nothing.
    const nulled = [
      ...prs.filter((p) => p.n >= 1_000 && p.n % 2 === 0 && (p.n < 1_100 || (p.n >= 1_200 && p.n < 1_300))),
      ...prs
        .filter(
          (p) => p.n < 1_000 && (Math.floor(p.merged / DAY) === S / DAY || Math.floor(p.merged / DAY) === (E + 1) / DAY - 1),
        )
        .slice(0, 4),
    ];
    await db
      .prepare(
        "UPDATE pull_requests SET created_at = NULL WHERE org_key = ?1 AND (repo_key, pr_number) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))",
      )
      .bind(org, JSON.stringify(nulled.map((p) => [p.repo, p.n])))
      .run();
    const none = await db
      .prepare("SELECT COUNT(*) AS n FROM pull_requests WHERE org_key = ?1 AND created_at IS NULL")
      .bind(org)
      .first<{ n: number }>();
    expect(none?.n).toBe(nulled.length);
    expect(nulled.length).toBe(6 + 6 + 4);
    for (const w of [W, { start: S - 1, end: E + 1 }])
      for (const groupBys of [["day", "repo", "author"], ["week"], ["month", "day"]] as GroupBy[][]) {
        const q: GroupingsQuery = { ...scope(org, w), groupBys };
        await summarizeGroupings(db, q); // builds
        const walked = shape(await summarizeGroupings(db, q, WALK));
        const label = `${iso(w.start)} ${groupBys.join()}`;
        for (const [name, limits] of READS)
          expect(shape(await summarizeGroupings(db, q, limits)), `${label}: ${name}`).toEqual(walked);
      }
  });

  it("straddled days whose blocks are markers (over the most pull requests or bytes a block holds) are walked whole, beside straddled blocks served", {
    timeout: 60_000,
  }, async () => {
    const { org, get } = await orgWith("admin", ALL_REPOS);
    const prs = [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)];
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    const rows = await exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 });
    // Built with at most 10 pull requests a block: the first and last days (15 and 16) get markers, the
    // inner straddled day (14) too; then the inner day rebuilt with room, its block served with corrections.
    const small = { ...SUMMARY_LIMITS, dayBlockMax: 10 };
    const q: GroupingsQuery = { ...scope(org, W), groupBys: ["day", "repo", "author"] };
    expect(shape(await summarizeGroupings(db, q, small)), "builds markers").toEqual(expected(rows, q.groupBys as GroupBy[], W));
    const markers = async () =>
      (
        await db
          .prepare(
            "SELECT day FROM summary_days WHERE org_key = ?1 AND repo_key = '' AND pull_requests > 0 AND lo IS NULL ORDER BY day",
          )
          .bind(org)
          .all<{ day: number }>()
      ).results.map((r) => r.day);
    const straddledDays = [S / DAY, S / DAY + 9, (E + 1) / DAY - 1];
    expect(await markers()).toEqual(straddledDays);
    const served: number[] = [];
    for (const [name, limits] of READS) {
      const figures = await summarizeGroupings(db, q, limits);
      expect(shape(figures), `markers: ${name}`).toEqual(expected(rows, q.groupBys as GroupBy[], W));
      served.push(figures.fromBlocks);
    }
    expect(served[0]).toBe(17 * 3); // the 17 days of three pull requests, the three markers walked
    await agrees(get, org, W, "markers over HTTP", ["day", "week", "author"]);
    // A write to the inner day deletes its marker; a build with room serves it with corrections.
    await postEventsOk([
      { type: "ai_authorship", org, repo: "api", prNumber: 1_101, sourceId: "m1", lines: 2, updatedAt: LATER },
    ]);
    const after = await agrees(get, org, W, "the inner day rebuilt", ["day", "repo"]);
    expect(await markers()).toEqual([straddledDays[0], straddledDays[2]]);
    // The inner day: its 3, 2 at the edges, 6 listed straddlers, 1 reviewed on both sides, 2 merged at its edges.
    expect((await summarizeGroupings(db, q)).fromBlocks).toBe(17 * 3 + 14);
    await directAgrees(db, q, after, "the inner day rebuilt");
    // Markers by bytes: a fresh organization's straddled days over a few hundred bytes.
    const other = await orgWith("admin", ALL_REPOS);
    await postEventsOk(straddlerEvents(other.org, prs));
    const odb = await shardDb(other.org);
    const orows = await exportRows<ExportRow>(other.get, windowQuery(other.org, W), { perPage: 100, maxPages: 100 });
    const oq: GroupingsQuery = { ...scope(other.org, W), groupBys: ["week", "author"] };
    await summarizeGroupings(odb, oq, { ...SUMMARY_LIMITS, dayBlockMaxBytes: 1_000 });
    const bytesMarkers = await odb
      .prepare("SELECT day FROM summary_days WHERE org_key = ?1 AND pull_requests > 0 AND lo IS NULL ORDER BY day")
      .bind(other.org)
      .all<{ day: number }>();
    expect(bytesMarkers.results.map((r) => r.day)).toEqual(straddledDays);
    await directAgrees(odb, oq, orows, "byte markers");
  });

  it("random pull requests with reviews and findings around random windows (fixed seed): every way of reading equals the export", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", ALL_REPOS);
    const random = seededRandom(90_417);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
    const T0 = at("2026-05-04T00:00:00.000Z");
    const ms = () => Math.floor(random() * DAY);
    const prs: Straddler[] = [];
    for (let n = 1; n <= 220; n++) {
      const merged = T0 + Math.floor(random() * 12) * DAY + pick([0, DAY - 1, ms(), ms(), ms()]);
      const created = merged - pick([0, 1, HOUR, 5 * HOUR, 3 * DAY, -HOUR, Math.floor(random() * 4 * DAY)]);
      const around = () => merged + Math.floor((random() * 8 - 4) * DAY);
      prs.push({
        repo: pick(["api", "web", "docs", "attic"]),
        n,
        author: pick(["alice", "Bob", "bob", "carol", "ghost"]),
        created,
        merged,
        reviews: Array.from({ length: 1 + Math.floor(random() * 3) }, around),
        findings: Array.from({ length: Math.floor(random() * 3) }, () => ({ at: around(), fixed: random() < 0.5 })),
        linesAdded: random() < 0.1 ? null : n,
        ...(random() < 0.3 ? { ai: n % 40 } : {}),
        ...(random() < 0.2 ? { failed: [around()] } : {}),
      });
    }
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    const windows: Window[] = [];
    for (let i = 0; i < 6; i++) {
      const start = T0 + Math.floor(random() * 5) * DAY + pick([0, 0, 1, -1, ms()]);
      windows.push({ start, end: start + (2 + Math.floor(random() * 6)) * DAY + pick([-1, -1, 0, ms()]) });
    }
    let straddled = 0;
    for (const w of windows) {
      const label = `${iso(w.start)}..${iso(w.end)}`;
      const rows = await agrees(get, org, w, label, ["day", "author"]);
      straddled += await straddledBlocks(db, org, w);
      for (const groupBys of [
        ["week", "repo", "author"],
        ["day", "month"],
      ] as GroupBy[][])
        await directAgrees(db, { ...scope(org, w), groupBys }, rows, `${label} ${groupBys.join()}`);
    }
    expect(straddled).toBeGreaterThan(10);
  });

  it("a straddled day at a year's end and a leap day: ISO weeks and months across them", { timeout: 60_000 }, async () => {
    const { org, get } = await orgWith("admin", ALL_REPOS);
    const newYear = at("2027-01-01T00:00:00.000Z"); // a Friday: its ISO week starts on 2026-12-28
    const leap = at("2028-02-29T00:00:00.000Z");
    const prs = [
      ...daily(newYear - 3 * DAY, newYear + 3 * DAY, 1),
      ...straddlers(newYear - DAY, newYear - DAY, newYear + DAY - 1, 1_000),
      ...straddlers(newYear, newYear - DAY, newYear + DAY - 1, 1_100),
      ...daily(leap - 2 * DAY, leap + 3 * DAY, 2_000),
      ...straddlers(leap, leap, leap + DAY - 1, 3_000),
    ];
    await postEventsOk(straddlerEvents(org, prs));
    const db = await shardDb(org);
    // The straddled days of each window: both around the new year; the leap day, then none (the
    // wider window holds every review and finding of the leap day's straddlers).
    for (const [w, straddled] of [
      [{ start: newYear - DAY, end: newYear + DAY - 1 }, 2],
      [{ start: newYear - DAY - 1, end: newYear + DAY }, 2],
      [{ start: leap, end: leap + DAY - 1 }, 1],
      [{ start: leap - DAY, end: leap + 2 * DAY - 1 }, 0],
    ] as const) {
      const rows = await agrees(get, org, w, iso(w.start), GROUP_BYS);
      expect(await straddledBlocks(db, org, w), iso(w.start)).toBe(straddled);
      const { corrected, whole } = await directAgrees(
        db,
        { ...scope(org, w), groupBys: ["week", "month", "day"] },
        rows,
        iso(w.start),
      );
      expect(corrected > whole, iso(w.start)).toBe(straddled > 0);
    }
  });

  it("section 21's lists and a member's access: repositories, authors, private repositories, excluded repositories (direct)", {
    timeout: 120_000,
  }, async () => {
    const { member, org, adminGet } = await memberAndAdmin();
    await postEventsOk(straddlerEvents(org, [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)]));
    const db = await shardDb(org);
    // The admin builds the organization's blocks first; then the member reads them (access list).
    const all = await agrees(adminGet, org, W, "admin");
    expect(await straddledBlocks(db, org, W)).toBe(3);
    const seen = await agrees(member.get, org, W, "member");
    expect(new Set(seen.map((r) => r.repo))).toEqual(new Set(["api", "web", "docs"]));
    const lists = [
      "&repo=api",
      "&repo=api,web",
      "&repo=docs,web",
      "&author=bob",
      "&author=BOB,carol",
      "&repo=api&author=alice,bob",
      "&author=ghost",
    ];
    for (const extra of lists) {
      await agrees(member.get, org, W, `member ${extra}`, GROUP_BYS, extra);
      await agrees(adminGet, org, W, `admin ${extra}`, ["day", "repo", "author"], extra);
    }
    await agrees(adminGet, org, { start: S - 1, end: E + 1 }, "admin wider", ["day", "author"], "&repo=api,web");
    await agrees(member.get, org, { start: S + 1, end: E }, "member narrower", ["week", "repo"], "&author=bob,alice");
    // Excluded repositories (left the installation) and lists, straight through the storage function.
    const cases: [Partial<AnalyticsScope>, (r: ExportRow) => boolean][] = [
      [{ excludedRepoKeys: ["web"] }, (r) => r.repo !== "web"],
      [
        { excludedRepoKeys: ["api", "docs"], authorKeys: ["bob", "carol"] },
        (r) => r.repo === "web" && ["bob", "carol"].includes(r.author.toLowerCase()),
      ],
      [{ accessibleRepoKeys: ["api", "docs"] }, (r) => r.repo === "api" || r.repo === "docs"],
      [{ repoKeys: ["api", "web"], excludedRepoKeys: ["web"] }, (r) => r.repo === "api"],
      [{ repoKeys: ["docs"] }, (r) => r.repo === "docs"],
      [{ authorKeys: ["ghost"] }, () => false],
    ];
    for (const [extra, keep] of cases) {
      const q: GroupingsQuery = { ...scope(org, W, extra), groupBys: ["week", "repo", "author"] };
      const mixed = await directAgrees(db, q, all.filter(keep), JSON.stringify(extra));
      const days = await directAgrees(db, { ...q, groupBys: ["day"] }, all.filter(keep), `day ${JSON.stringify(extra)}`);
      // Each case counts some pull request that straddles nothing on a straddled day (but the ghost's).
      if (extra.authorKeys?.includes("ghost") !== true)
        for (const { corrected, whole } of [mixed, days]) expect(corrected, JSON.stringify(extra)).toBeGreaterThan(whole);
    }
  });

  it("a repository leaves the installation after the straddled days' blocks were built (excluded from the admin's answers), and comes back", {
    timeout: 120_000,
  }, async () => {
    const repos = ["api", "web", "docs", "attic"].map((name) => ({ id: repoId(), name, private: false }));
    const { org, admin } = await world(repos);
    const get = getWithKey(admin.analyticsKey);
    await postEventsOk(straddlerEvents(org, [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)]));
    const windows = [W, { start: S - 1, end: E + 1 }];
    for (const w of windows) await agrees(get, org, w, `before ${iso(w.start)}`, ["day", "repo", "author"]);
    expect(await straddledBlocks(await shardDb(org), org, W)).toBe(3);
    const change = (action: "removed" | "added", name: string) => {
      const payload = example("installation_repositories", action, org);
      const repo = repos.find((r) => r.name === name) as (typeof repos)[number];
      payload[`repositories_${action}`] = [{ ...repo, full_name: `${org}/${name}`, node_id: "x" }];
      return deliverQueued("installation_repositories", payload);
    };
    // web holds straddlers of every day: the organization's blocks still hold them, the answer not.
    await change("removed", "web");
    for (const w of windows) {
      const rows = await agrees(get, org, w, `web removed ${iso(w.start)}`, GROUP_BYS);
      expect(rows.some((r) => r.repo === "web")).toBe(false);
      await agrees(get, org, w, `web removed, listed ${iso(w.start)}`, ["day", "author"], "&repo=api,docs");
    }
    await change("added", "web");
    for (const w of windows) {
      const rows = await agrees(get, org, w, `web back ${iso(w.start)}`, ["week", "repo"]);
      expect(rows.some((r) => r.repo === "web")).toBe(true);
    }
  });

  it("the dashboard's combined request (week, repo, author), built and read, before and after a write on a straddler", {
    timeout: 120_000,
  }, async () => {
    const { org, user, get } = await orgWith("admin", ALL_REPOS);
    const prs = [...daily(S - 2 * DAY, E + 1 + 2 * DAY, 1), ...edgeData(1_000)];
    await postEventsOk(straddlerEvents(org, prs));
    const session = await signIn(user);
    const dashboard = async (w: Window, label: string) => {
      const q = windowQuery(org, w);
      const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
      for (let pass = 0; pass < 3; pass++) {
        SUMMARY_PLANS.clear();
        const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=week,repo,author`, session);
        expect(res.status).toBe(200);
        const { summaries } = (await res.json()) as { summaries: unknown[] };
        expect(summaries, `${label} pass ${pass}`).toEqual(
          (["week", "repo", "author"] as const).map((g) => referenceAnswer(org, rows, g, w.start, w.end)),
        );
      }
    };
    for (const w of [W, { start: S - 1, end: E + 1 }, { start: S - 2 * HOUR, end: E + 2 * HOUR }])
      await dashboard(w, iso(w.start));
    // The first day's straddler reviewed before the start only gets a review inside: now listed.
    const ghost = prs.find((p) => p.n === 1_000) as Straddler;
    await postEventsOk([
      {
        type: "review",
        org,
        repo: ghost.repo,
        prNumber: ghost.n,
        reviewId: "late",
        status: "completed",
        completedAt: iso(S + HOUR),
        updatedAt: LATER,
      },
    ]);
    await dashboard(W, "after the review");
    const after = await agrees(get, org, W, "public after the review", ["day", "repo", "author"]);
    expect(after.some((r) => r.author === "ghost")).toBe(true);
  });
});
