import { errorField, log } from "../lib/log";
import { setNewest } from "../lib/newest";
import { DAY_MS } from "../lib/time";
import { isTimeGroupBy } from "../rules/analytics-summary";
import type { SummaryGroupBy } from "../schemas/analytics-summary";
import { timeKeyOf } from "./summary-assemble";
import { BLOCK_JSON, type BlockFilter, buildSummaryDays } from "./summary-days";
import { type GroupingsQuery, type PartRow, REMOVED_FROM, SUMMED, type SummaryLimits } from "./summary-rows";

/**
 * The edges of a summary's window, kept by the isolate (issue 31, fifteenth session).
 *
 * What a window's edges cost: a full day of the window served by its block needs corrections for
 * its pull requests with a review or finding outside the window (`summary-statement.ts`
 * `CORRECTIONS`), and the pull requests merged before the window (or after it) with a review in
 * it are walked on the gap tiers. Both check pull request by pull request, counting each one's
 * findings in the window in one seek: on the 1M benchmark's default 30-day window, 2,386
 * straddlers and 1,448 earlier merges, 5.8 of the statement's 7 ms. Both depend on where the
 * window starts to the millisecond, and a window ending now starts somewhere else at every request.
 *
 * An edge day is what the window's edges read of one day's pull requests, whatever the window:
 * every pull request of its day block (the organization's, or a listed repository's), each with
 * its columns and the times of its completed reviews and posted findings (ascending; the findings
 * with their AI-addressed flags). For any window this decides every check the statement would
 * make of them, exactly (`addEdgeDay`): as corrections of the day served by its block, as merges
 * outside the window found by the gap tiers' walks, or as the window's first day when it starts
 * inside it.
 *
 * Why it is exact: it is read in one statement together with its block's `version` and
 * `edge_version`, and kept under both. A block is deleted whenever a pull request of its day
 * changes a column the summary reads (migrations 0012 to 0014), and its `edge_version` counts up
 * whenever a completed review or posted finding of one of them is written (migration 0019), so
 * while both are stored as read, the day's pull requests, reviews and findings are as read. The
 * statement is sent the days an isolate keeps with both numbers, and leaves out of its corrections
 * and its tier walks exactly the days whose block is still stored with them, reporting each
 * (`KNOWN_USED`); the Worker counts those from here. A day whose block changed is checked in SQL
 * as before, and reported (`EDGE_SQL`) for a later read.
 */

/** One day's pull requests, as read (see above). */
export interface EdgeDay {
  rk: string;
  day: number;
  version: number;
  edgeVersion: number;
  /** Pull requests held. */
  n: number;
  /** Merge, creation, first and last completed review, first and last posted finding (NaN: null). */
  m: Float64Array;
  c: Float64Array;
  f: Float64Array;
  l: Float64Array;
  ff: Float64Array;
  lf: Float64Array;
  /** Lines added and deleted, AI lines (NaN: null); posted and AI-addressed findings. */
  la: Float64Array;
  ld: Float64Array;
  ai: Float64Array;
  pf: Float64Array;
  xf: Float64Array;
  repoKey: string[];
  repo: string[];
  author: (string | null)[];
  /** The author lower-cased as SQLite's `lower` does it (the statement's author filter). */
  authorKey: (string | null)[];
  /** Its completed reviews, `reviewTimes[reviewsFrom[i] .. reviewsFrom[i + 1])`, ascending. */
  reviewsFrom: Uint32Array;
  reviewTimes: Float64Array;
  /** Its posted findings, `findingTimes[findingsFrom[i] .. findingsFrom[i + 1])`, ascending. */
  findingsFrom: Uint32Array;
  findingTimes: Float64Array;
  /** AI-addressed findings among `findingTimes[0 .. j)`, at `fixedBefore[j]`. */
  fixedBefore: Uint32Array;
  /** What it is counted for in an isolate's cache (`EdgeCache`). */
  bytes: number;
}

/** A day the isolate keeps, as the statement is told of it: repository key ('' the organization's), day, version, edge version. */
export type KnownEdge = [rk: string, day: number, version: number, edgeVersion: number];

/**
 * How a kept day counts: as a served day's corrections; as merges outside the window (a day wholly
 * before or after it); or as the window's first day when it starts inside the day (its merges from
 * the start on, and those before it with a review in the window), walked.
 */
export const EDGE_CORRECTED = 1;
export const EDGE_OUTSIDE = 2;
export const EDGE_PARTIAL = 3;
export type EdgeUse = typeof EDGE_CORRECTED | typeof EDGE_OUTSIDE | typeof EDGE_PARTIAL;

/**
 * Days around the window's edges the statement is told of: its first and last `EDGE_INNER_DAYS`
 * days (the straddlers of a window's start are merged within days of it: five on the benchmark's
 * 30-day window) and `EDGE_OUTER_DAYS` on either side (the merges before the window with a review
 * inside it: seven days on the same window, and one 700 days back). Days beyond are checked in SQL
 * as before.
 */
export const EDGE_INNER_DAYS = 14;
export const EDGE_OUTER_DAYS = 64;

/** Edge days read per statement, and per request (after its answer): a day of the 1M benchmark is about 1,300 pull requests and 8,000 findings. */
export const EDGE_LOAD_DAYS_PER_STATEMENT = 2;
export const EDGE_LOAD_DAYS_PER_REQUEST = 6;

/** Whether day `day` is one the statement may be told of for window [start, end] (`EDGE_INNER_DAYS`, `EDGE_OUTER_DAYS`). */
export function nearEdges(day: number, start: number, end: number): boolean {
  const first = Math.floor(start / DAY_MS);
  const last = Math.floor(end / DAY_MS);
  return (
    (day >= first - EDGE_OUTER_DAYS && day < first + EDGE_INNER_DAYS) ||
    (day > last - EDGE_INNER_DAYS && day <= last + EDGE_OUTER_DAYS)
  );
}

/**
 * The edge days an isolate keeps, by organization, repository key and day, each under the version
 * and edge version it was read with (a day read again replaces it). Bounded by the bytes they hold
 * (`EdgeDay.bytes`); the least recently used go first. The days it hands out are shared by every
 * request of the isolate, which only read them.
 */
export class EdgeCache {
  readonly #days = new Map<string, EdgeDay>();
  readonly #byOrg = new Map<string, Set<string>>();
  /** Blocks found without an edge day (a marker: too large to build), by key, with the version found so. */
  readonly #none = new Map<string, number>();
  /**
   * Days being read now (by a request's work after its answer), by key, with the claim's token and
   * time: another request leaves them, unless the claim is older than `CLAIM_MS` (work the runtime
   * cancelled never releases its claims).
   */
  readonly #reading = new Map<string, { token: number; at: number }>();
  #tokens = 0;
  #bytes = 0;

  /**
   * At most this many bytes are kept, as `EdgeDay.bytes` counts them (0: none). The default holds
   * the edges of about two windows of the 1M benchmark's organization (about 6 MB each), and beside
   * the slices' 16 MB (`summary-slice-cache.ts`) leaves most of an isolate's 128 MB to the requests
   * (a year's summary holds tens of MB while it adds up).
   */
  readonly maxBytes: number;

  constructor(maxBytes = 16_000_000) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
      throw new RangeError(`an edge cache holds a whole number of bytes of at least 0, got ${maxBytes}`);
    this.maxBytes = maxBytes;
  }

  /** One organization's days. */
  of(orgKey: string): OrgEdges {
    const key = (rk: string, day: number) => `${orgKey}\u0000${rk}\u0000${day}`;
    return {
      near: (keys, start, end) => this.#near(orgKey, keys, start, end),
      set: (day) => this.#set(orgKey, day),
      noneUnder: (rk, day, version) => this.#none.get(key(rk, day)) === version,
      claim: (rk, day, now) => {
        const held = this.#reading.get(key(rk, day));
        if (held !== undefined && now - held.at < CLAIM_MS) return null;
        const token = ++this.#tokens;
        this.#reading.set(key(rk, day), { token, at: now });
        return token;
      },
      release: (rk, day, token) => {
        if (this.#reading.get(key(rk, day))?.token === token) this.#reading.delete(key(rk, day));
      },
      setNone: (rk, day, version) => {
        setNewest(this.#none, key(rk, day), version, NONE_KEPT);
      },
    };
  }

  /** How many days are kept, and their bytes (tests). */
  get size(): { days: number; bytes: number } {
    return { days: this.#days.size, bytes: this.#bytes };
  }

  clear(): void {
    this.#days.clear();
    this.#byOrg.clear();
    this.#none.clear();
    this.#reading.clear();
    this.#bytes = 0;
  }

  #near(orgKey: string, keys: ReadonlySet<string>, start: number, end: number): EdgeDay[] {
    const found: EdgeDay[] = [];
    for (const key of this.#byOrg.get(orgKey) ?? []) {
      const day = this.#days.get(key);
      if (day === undefined || !keys.has(day.rk) || !nearEdges(day.day, start, end)) continue;
      // Used last: kept longest.
      this.#days.delete(key);
      this.#days.set(key, day);
      found.push(day);
    }
    return found;
  }

  #set(orgKey: string, day: EdgeDay): boolean {
    if (day.bytes > this.maxBytes) return false;
    const key = `${orgKey}\u0000${day.rk}\u0000${day.day}`;
    this.#drop(key);
    this.#days.set(key, day);
    this.#bytes += day.bytes;
    const keys = this.#byOrg.get(orgKey) ?? new Set<string>();
    keys.add(key);
    this.#byOrg.set(orgKey, keys);
    for (const oldest of this.#days.keys()) {
      if (this.#bytes <= this.maxBytes) break;
      this.#drop(oldest);
    }
    return true;
  }

  #drop(key: string): void {
    const old = this.#days.get(key);
    if (old === undefined) return;
    this.#days.delete(key);
    this.#bytes -= old.bytes;
    const orgKey = key.slice(0, key.indexOf("\u0000"));
    const keys = this.#byOrg.get(orgKey);
    keys?.delete(key);
    if (keys?.size === 0) this.#byOrg.delete(orgKey);
  }
}

/** One organization's kept edge days. */
export interface OrgEdges {
  /** The days of these repository keys near the window's edges (`nearEdges`). */
  near(keys: ReadonlySet<string>, start: number, end: number): EdgeDay[];
  /** Keeps a day; false when it alone weighs more than the cache holds (then it is not kept). */
  set(day: EdgeDay): boolean;
  /** Whether this block, under this version, was found to give no edge day (`setNone`): not read again until rebuilt. */
  noneUnder(rk: string, day: number, version: number): boolean;
  /** Notes a block read for its edge day that gave none to keep (a marker, too large, or gone since). */
  setNone(rk: string, day: number, version: number): void;
  /** Marks a day as being read at `now`: its token, or null when another request is reading it (then this one leaves it). */
  claim(rk: string, day: number, now: number): number | null;
  /** Ends the claim of this token (a claim taken over since is left alone). */
  release(rk: string, day: number, token: number): void;
}

/** A claim older than this is taken as abandoned (`OrgEdges.claim`): a read of six days takes well under a second. */
export const CLAIM_MS = 60_000;

/** Blocks remembered without an edge day (`OrgEdges.setNone`), the oldest forgotten first. */
const NONE_KEPT = 10_000;

/** One row of `loadEdgeDays`' statement: a day's header (`id` null), or one of its pull requests. */
export interface EdgeRow {
  rk: string;
  day: number;
  version: number;
  ev: number;
  /** The block's count of pull requests (a header row's). */
  n: number | null;
  id: number | null;
  repo_key: string | null;
  repo: string | null;
  author: string | null;
  ak: string | null;
  m: number | null;
  c: number | null;
  f: number | null;
  l: number | null;
  la: number | null;
  ld: number | null;
  ai: number | null;
  pf: number | null;
  xf: number | null;
  ff: number | null;
  lf: number | null;
  /** Its completed reviews' times, a JSON array. */
  rv: string | null;
  /** Its posted findings, a JSON array of `2 * created_at + ai_addressed`. */
  fv: string | null;
}

/**
 * Reads these days' edge days (`[rk, day]`: '' the organization's), in one statement: each day's
 * block version and edge version with its pull requests, reviews and findings, so they are one
 * moment's. A day without a block, or whose block is a marker (too large to build: never served,
 * `summary-days.ts`), is not answered. Answers the days read and the rows D1 read.
 */
export async function loadEdgeDays(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  days: readonly [rk: string, day: number][],
): Promise<{ days: EdgeDay[]; rowsRead: number }> {
  if (days.length === 0) return { days: [], rowsRead: 0 };
  const D = DAY_MS;
  const start = `b.day * ${D}`;
  const end = `b.day * ${D} + ${D - 1}`;
  const { results, meta } = await db
    .prepare(
      `WITH blocks AS MATERIALIZED (
  SELECT s.repo_key AS rk, s.day AS day, s.version AS version, s.edge_version AS ev, s.pull_requests AS n
  FROM (SELECT value ->> 0 AS rk, value ->> 1 AS day FROM json_each(?2)) AS a
  CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = a.rk AND s.day = a.day
  WHERE s.pull_requests = 0 OR s.lo IS NOT NULL
)
SELECT rk, day, version, ev, n, NULL AS id, NULL AS repo_key, NULL AS repo, NULL AS author, NULL AS ak, NULL AS m, NULL AS c,
  NULL AS f, NULL AS l, NULL AS la, NULL AS ld, NULL AS ai, NULL AS pf, NULL AS xf, NULL AS ff, NULL AS lf,
  NULL AS rv, NULL AS fv
FROM blocks
UNION ALL
SELECT b.rk, b.day, b.version, b.ev, NULL, p.id, p.repo_key, p.repo, p.author, lower(p.author), p.merged_at, p.created_at,
  p.first_reviewed_at, p.last_reviewed_at, p.lines_added, p.lines_deleted, p.ai_lines, p.posted_findings, p.fixed_findings,
  p.first_finding_at, p.last_finding_at,
  (SELECT json_group_array(r.completed_at) FROM reviews AS r WHERE r.pr_id = p.id AND r.status = 'completed'),
  (SELECT json_group_array(2 * fi.created_at + fi.ai_addressed) FROM findings AS fi WHERE fi.pr_id = p.id AND fi.posted = 1)
FROM blocks AS b CROSS JOIN pull_requests AS p INDEXED BY pull_requests_summary_walk
  ON p.org_key = ?1 AND p.merged_at >= ${start} AND p.merged_at <= ${end} AND (b.rk = '' OR p.repo_key = b.rk)
  AND p.merged_at IS NOT NULL AND p.first_reviewed_at IS NOT NULL`,
    )
    .bind(orgKey, JSON.stringify(days))
    .all<EdgeRow>();
  const byDay = new Map<string, { header: EdgeRow; rows: EdgeRow[] }>();
  for (const row of results) {
    const key = `${row.rk}\u0000${row.day}`;
    if (row.id === null) byDay.set(key, { header: row, rows: [] });
    else byDay.get(key)?.rows.push(row);
  }
  // A day is kept only when it holds the pull requests its block counts (the same rows, read in the
  // same statement: anything else is a fault, and the day stays checked in SQL).
  const read = [...byDay.values()].filter(({ header, rows }) => {
    if (header.n === rows.length) return true;
    log.warn("summary edge day does not match its block", { orgKey, day: header.day, block: header.n, read: rows.length });
    return false;
  });
  return { days: read.map(({ header, rows }) => edgeDayOf(header, rows)), rowsRead: meta.rows_read };
}

const orNaN = (value: number | null): number => (value === null ? Number.NaN : value);
const ascending = (values: number[]) => Float64Array.from(values).sort();

/** A day's rows as an `EdgeDay`: columns as arrays, each pull request's reviews and findings sorted. */
export function edgeDayOf(header: EdgeRow, rows: readonly EdgeRow[]): EdgeDay {
  const n = rows.length;
  const column = (pick: (row: EdgeRow) => number | null) => Float64Array.from(rows, (row) => orNaN(pick(row)));
  const reviewsFrom = new Uint32Array(n + 1);
  const findingsFrom = new Uint32Array(n + 1);
  const reviews: Float64Array[] = [];
  const findings: Float64Array[] = [];
  let reviewCount = 0;
  let findingCount = 0;
  rows.forEach((row, i) => {
    const r = ascending(JSON.parse(row.rv ?? "[]") as number[]);
    const f = ascending(JSON.parse(row.fv ?? "[]") as number[]);
    reviews.push(r);
    findings.push(f);
    reviewCount += r.length;
    findingCount += f.length;
    reviewsFrom[i + 1] = reviewCount;
    findingsFrom[i + 1] = findingCount;
  });
  const reviewTimes = new Float64Array(reviewCount);
  reviews.forEach((r, i) => {
    reviewTimes.set(r, reviewsFrom[i] as number);
  });
  const findingTimes = new Float64Array(findingCount);
  const fixedBefore = new Uint32Array(findingCount + 1);
  let at = 0;
  for (const f of findings)
    for (const packed of f) {
      // 2 * time + AI-addressed, in order of time.
      const time = Math.floor(packed / 2);
      findingTimes[at] = time;
      fixedBefore[at + 1] = (fixedBefore[at] as number) + (packed - 2 * time);
      at++;
    }
  const strings = rows.reduce(
    (sum, row) => sum + (row.repo_key?.length ?? 0) + (row.repo?.length ?? 0) + 2 * (row.author?.length ?? 0),
    0,
  );
  return {
    rk: header.rk,
    day: header.day,
    version: header.version,
    edgeVersion: header.ev,
    n,
    m: column((row) => row.m),
    c: column((row) => row.c),
    f: column((row) => row.f),
    l: column((row) => row.l),
    ff: column((row) => row.ff),
    lf: column((row) => row.lf),
    la: column((row) => row.la),
    ld: column((row) => row.ld),
    ai: column((row) => row.ai),
    pf: column((row) => row.pf),
    xf: column((row) => row.xf),
    repoKey: rows.map((row) => row.repo_key ?? ""),
    repo: rows.map((row) => row.repo ?? ""),
    author: rows.map((row) => row.author),
    authorKey: rows.map((row) => row.ak),
    reviewsFrom,
    reviewTimes,
    findingsFrom,
    findingTimes,
    fixedBefore,
    // Per pull request 11 columns of 8 bytes, two offsets of 4, four strings (a pointer and about
    // 16 bytes each, and 2 bytes a character); 8 bytes a review, 12 a finding; about 600 of objects.
    bytes: n * (11 * 8 + 2 * 4 + 4 * (8 + 16)) + 8 * reviewCount + 12 * findingCount + 2 * strings + 600,
  };
}

/** The first index in `times[from .. to)` (ascending) of a value at least `value`. */
function lowerBound(times: Float64Array, from: number, to: number, value: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Per group of one grouping, what an edge day adds (or, corrected, what its block counted beyond the window). */
type Partial = { candidates: number; tf: number[]; tm: number[] } & Record<(typeof SUMMED)[number], number>;

/** Every summed figure at zero. */
const NO_SUMS = Object.fromEntries(SUMMED.map((name) => [name, 0])) as Record<(typeof SUMMED)[number], number>;

const NO_BLOCK = Object.fromEntries(BLOCK_JSON.map((name) => [name, null])) as { [name in (typeof BLOCK_JSON)[number]]: null };

/**
 * What edge day `edge` adds to a summary of window [start, end] with these groupings, as the
 * statement's own rows would have (handed to `add`), for the pull requests the filter passes:
 *
 * - `EDGE_CORRECTED` (a full day of the window, served by its block): per group, a `REMOVED_FROM`
 *   row of what the block counted of its pull requests that straddle an edge of the window beyond
 *   what the window counts of them (`summary-statement.ts` `CORRECTIONS`);
 * - `EDGE_OUTSIDE` (a day wholly before or after the window) and `EDGE_PARTIAL` (the day the
 *   window starts in, when it ends after that day): per group, the rows of its pull requests that
 *   the statement's walks would find (reviewed from the window's start to its end: the gap tiers'
 *   of merges outside the window, the day's walk of those inside), each checked and measured as
 *   the statement's `metrics` do.
 *
 * Every comparison is the statement's: a completed review in the window (its first or last, or
 * one between them), and the posted findings in it (from the pull request's figures when they lie
 * wholly inside or outside the window, else counted).
 */
export function addEdgeDay(
  edge: EdgeDay,
  use: EdgeUse,
  window: { start: number; end: number },
  groupBys: readonly SummaryGroupBy[],
  filter: BlockFilter,
  add: (row: PartRow) => void,
): void {
  const { start: S, end: E } = window;
  const corrected = use === EDGE_CORRECTED;
  const groups = groupBys.map(() => new Map<string, Partial>());
  const timeKeys = groupBys.map((groupBy) => (isTimeGroupBy(groupBy) ? timeKeyOf(groupBy, edge.day) : null));
  const { m, c, f, l, ff, lf, la, ld, ai, pf, xf, reviewTimes, reviewsFrom, findingTimes, findingsFrom, fixedBefore } = edge;
  for (let i = 0; i < edge.n; i++) {
    if (filter.repo !== null && !filter.repo(edge.repoKey[i] as string)) continue;
    if (filter.author !== null && !filter.author(edge.authorKey[i] ?? null)) continue;
    const fi = f[i] as number;
    const li = l[i] as number;
    const ffi = ff[i] as number;
    const lfi = lf[i] as number;
    const noFindings = Number.isNaN(ffi);
    if (corrected) {
      // Straddles: its earliest review or finding before the start, or its latest after the end.
      const lo = noFindings ? fi : Math.min(fi, ffi);
      const hi = noFindings ? li : Math.max(li, lfi);
      if (!(lo < S || hi > E)) continue;
    }
    const cand = fi <= E && li >= S;
    if (!corrected && !cand) continue;
    let ok = false;
    let flagged = 0;
    let fixed = 0;
    if (cand) {
      ok = fi >= S || li <= E;
      if (!ok) {
        const from = reviewsFrom[i] as number;
        const to = reviewsFrom[i + 1] as number;
        const first = lowerBound(reviewTimes, from, to, S);
        ok = first < to && (reviewTimes[first] as number) <= E;
      }
      if (!noFindings && ffi >= S && lfi <= E) {
        flagged = pf[i] as number;
        fixed = xf[i] as number;
      } else if (!(noFindings || ffi > E || lfi < S)) {
        const from = findingsFrom[i] as number;
        const to = findingsFrom[i + 1] as number;
        const first = lowerBound(findingTimes, from, to, S);
        const past = lowerBound(findingTimes, first, to, E + 1);
        flagged = past - first;
        fixed = (fixedBefore[past] as number) - (fixedBefore[first] as number);
      }
    }
    // What the row adds: walked, its figures when it qualifies; corrected, what the block counted
    // of it beyond the window (all of it when the window does not list it, else its findings outside).
    const counts = corrected ? !ok : ok;
    const ci = c[i] as number;
    const tf = Number.isNaN(ci) ? null : fi - ci;
    const tm = Number.isNaN(ci) ? null : (m[i] as number) - ci;
    const lai = la[i] as number;
    const ldi = ld[i] as number;
    const aii = ai[i] as number;
    const fl = corrected ? (noFindings ? 0 : (pf[i] as number)) - (ok ? flagged : 0) : ok ? flagged : 0;
    const fx = corrected ? (noFindings ? 0 : (xf[i] as number)) - (ok ? fixed : 0) : ok ? fixed : 0;
    for (let g = 0; g < groupBys.length; g++) {
      const groupBy = groupBys[g] as SummaryGroupBy;
      const key = timeKeys[g] ?? (groupBy === "repo" ? (edge.repo[i] as string) : (edge.author[i] as string));
      const byKey = groups[g] as Map<string, Partial>;
      let part = byKey.get(key);
      if (part === undefined) {
        part = { candidates: 0, ...NO_SUMS, tf: [], tm: [] };
        byKey.set(key, part);
      }
      // The candidates: walked, every row found; corrected, those the window's walk would not have found.
      if (corrected ? !cand : true) part.candidates++;
      part.serviceIssuesFlagged += fl;
      part.serviceIssuesFixed += fx;
      if (!counts) continue;
      part.pullRequests++;
      if (!Number.isNaN(lai)) part.linesAdded += lai;
      if (!Number.isNaN(ldi)) part.linesDeleted += ldi;
      if (!Number.isNaN(aii)) {
        part.aiLinesAuthored += aii;
        part.pullRequestsWithAiData++;
      }
      if (tf !== null) part.tf.push(tf);
      if (tm !== null) part.tm.push(tm);
    }
  }
  groups.forEach((byKey, g) => {
    for (const [key, { tf, tm, ...sums }] of byKey)
      add({
        grouping: corrected ? REMOVED_FROM - g : g,
        key,
        ...sums,
        tf0: tf,
        tm0: tm,
        version: null,
        rk: null,
        days: null,
        ...NO_BLOCK,
      });
  });
}

/** A day whose edges a statement checked itself (`EDGE_SQL`): how (`EdgeUse`), and its block's version (null: none). */
export interface EdgeChecked {
  rk: string;
  day: number;
  use: number;
  version: number | null;
}

/**
 * After an answer, what to do of the days whose edges its statement checked itself, near the
 * window's edges (`nearEdges`): those with a block to read as edge days for the next request
 * (corrected days and the window's first day first, then the nearest to the window), those without
 * one (a day before the window that no summary covered whole) to build, `EDGE_LOAD_DAYS_PER_REQUEST`
 * of each at most. A block found to give no edge day is left until rebuilt.
 */
export function edgeWork(
  q: GroupingsQuery,
  edges: OrgEdges,
  checked: readonly EdgeChecked[],
): { toRead: (EdgeChecked & { version: number })[]; toBuild: EdgeChecked[] } {
  const priority = (use: number) => (use === EDGE_OUTSIDE ? 1 : 0);
  const distance = (day: number) =>
    Math.min(Math.abs(day - Math.floor(q.start / DAY_MS)), Math.abs(day - Math.floor(q.end / DAY_MS)));
  const near = checked
    .filter(({ rk, day, version }) => nearEdges(day, q.start, q.end) && (version === null || !edges.noneUnder(rk, day, version)))
    .sort((a, b) => priority(a.use) - priority(b.use) || distance(a.day) - distance(b.day) || a.day - b.day);
  return {
    toRead: near.filter((e): e is EdgeChecked & { version: number } => e.version !== null),
    toBuild: near.filter((e) => e.version === null).slice(0, EDGE_LOAD_DAYS_PER_REQUEST),
  };
}

/**
 * Builds the blocks of days before or after the window that no summary covered whole, so that a
 * later request can read them as edge days. Run before the answer (a write: the tests and the
 * request that follows see it done). A build that fails is logged, not answered.
 */
export async function buildEdgeBlocks(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  days: readonly EdgeChecked[],
  limits: SummaryLimits,
): Promise<void> {
  try {
    const byKey = new Map<string, number[]>();
    for (const { rk, day } of days) byKey.set(rk, [...(byKey.get(rk) ?? []), day]);
    for (const [repoKey, keyDays] of byKey)
      await buildSummaryDays(
        db,
        orgKey,
        keyDays.sort((a, b) => a - b),
        { maxPerDay: limits.dayBlockMax, maxBytes: limits.dayBlockMaxBytes, repoKey },
      );
  } catch (error) {
    log.warn("summary edge blocks not built", { orgKey, days: days.length, error: errorField(error) });
  }
}

/**
 * Reads up to `EDGE_LOAD_DAYS_PER_REQUEST` of these days as edge days, two a statement, and keeps
 * them; a day another request is reading already is left to it (the reads run after the answers, so
 * requests in a row would otherwise read the same days side by side). Reads only: run after the
 * answer when the request can (`SummaryOptions.defer`). A day that gives none to keep (a marker,
 * too large, or a value over D1's cap) is remembered and not read again until rebuilt; any other
 * failure is logged and tried again by a later request. Answers the rows read.
 */
export async function readEdgeDays(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  edges: OrgEdges,
  days: readonly (EdgeChecked & { version: number })[],
  now: number,
): Promise<number> {
  const claimed: { rk: string; day: number; version: number; token: number }[] = [];
  for (const { rk, day, version } of days) {
    if (claimed.length >= EDGE_LOAD_DAYS_PER_REQUEST) break;
    const token = edges.claim(rk, day, now);
    if (token !== null) claimed.push({ rk, day, version, token });
  }
  let rowsRead = 0;
  try {
    for (let i = 0; i < claimed.length; i += EDGE_LOAD_DAYS_PER_STATEMENT) {
      const asked = claimed.slice(i, i + EDGE_LOAD_DAYS_PER_STATEMENT);
      let read: Awaited<ReturnType<typeof loadEdgeDays>>;
      try {
        read = await loadEdgeDays(
          db,
          orgKey,
          asked.map(({ rk, day }) => [rk, day]),
        );
      } catch (error) {
        // A value over D1's cap (a pull request of some 70,000 findings) fails again at every read.
        if (/TOOBIG|too big|too large/i.test(String(error)))
          for (const { rk, day, version } of asked) edges.setNone(rk, day, version);
        log.warn("summary edge days not read", { orgKey, days: asked.length, error: errorField(error) });
        continue;
      }
      rowsRead += read.rowsRead;
      for (const day of read.days) if (!edges.set(day)) edges.setNone(day.rk, day.day, day.version);
      const found = new Set(read.days.map(({ rk, day }) => `${rk}\u0000${day}`));
      for (const { rk, day, version } of asked) if (!found.has(`${rk}\u0000${day}`)) edges.setNone(rk, day, version);
    }
  } finally {
    for (const { rk, day, token } of claimed) edges.release(rk, day, token);
  }
  return rowsRead;
}
