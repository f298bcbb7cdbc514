import { errorField, log } from "../lib/log";
import { setNewest } from "../lib/newest";
import { DAY_MS } from "../lib/time";
import type { AnalyticsSummaryGroup, AnalyticsSummaryTotals } from "../schemas/analytics-summary";
import { type Assembled, accumulator, blockFilter, type GroupingsFigures } from "./summary-assemble";
import { buildSummaryDays, buildSummaryMonths, monthLastDay, wholeMonths } from "./summary-days";
import {
  addEdgeDay,
  buildEdgeBlocks,
  type EdgeCache,
  type EdgeChecked,
  type EdgeDay,
  type EdgeUse,
  edgeWork,
  type KnownEdge,
  readEdgeDays,
} from "./summary-edges";
import { buildGroupMonths, type DayRun, type GroupKind, type GroupMonth, groupMonthKinds } from "./summary-group-months";
import { alignedRun, longestRun, planGroupMonths, spanKey } from "./summary-group-plan";
import { buildGroupSpans, spanOf } from "./summary-group-spans";
import { type BlockId, sliceReader } from "./summary-medians";
import {
  BLOCK,
  type BlocksServed,
  blockColumns,
  bucketed,
  EDGE_SQL,
  type GroupingsQuery,
  KNOWN_USED,
  type PartRow,
  SUMMARY_LIMITS,
  type SummaryLimits,
  type SummaryQuery,
} from "./summary-rows";
import type { SliceCache } from "./summary-slice-cache";
import { SERVABLE, summaryStatement } from "./summary-statement";
import { takingTurns } from "./taking-turns";

export { assemble, blockFilter, type GroupingsFigures } from "./summary-assemble";
export { type GroupingsQuery, type PartRow, SUMMARY_LIMITS, type SummaryLimits, type SummaryQuery } from "./summary-rows";
export { summaryStatement } from "./summary-statement";

export interface SummaryFigures {
  /** The groups that have rows, in no particular order. */
  groups: AnalyticsSummaryGroup[];
  totals: AnalyticsSummaryTotals;
  /** D1's count of rows the statement read (`meta.rows_read`). */
  rowsRead: number;
  /**
   * The candidate pull requests: those counted from day blocks, and those the walks found (each
   * walk at most `SummaryLimits.maxRows + 1`). More than `maxRows`: the figures may be incomplete.
   */
  candidates: number;
  /** Of the candidates, those counted from day blocks (`summary-days.ts`) instead of walked. */
  fromBlocks: number;
  /** Of those, the ones counted from month blocks per group (`summary-group-months.ts`). */
  fromGroupMonths: number;
  /** Durations read from the blocks' sorted values (`resolveMedians`: only the medians' buckets). */
  bucketValues: number;
  /** Days whose edges were counted from the isolate's edge days (`summary-edges.ts`) instead of checked in SQL. */
  edgeDays: number;
}

/**
 * What an isolate has seen of each organization's summaries, to choose a statement (issue 31: a
 * small organization's summary within 1.5x of `/readyz`). For each organization, the candidates of
 * its last summary as an admin sees it (`record`), and that window's length. A window at most a
 * day longer than one that held fewer than `walkBelow` candidates is read by the walk alone (`summaryStatement`'s
 * "walk"): no day blocks, a statement of a fraction of the full one's text, which D1 compiles for
 * every request (0.4 ms against 0.9 ms on the benchmark's small organization), and its few rows
 * walked. Either statement answers exactly the export's rows grouped, so a wrong guess (an
 * organization that grew since, a window of a busier time) costs time, not correctness: the walk
 * is bounded as the full statement is (`maxRows`), and its own count corrects the next choice.
 * Kept per isolate (a `Map` of at most `capacity` organizations, the oldest forgotten first).
 */
export class SummaryPlans {
  readonly #seen = new Map<string, { candidates: number; windowMs: number }>();

  readonly walkBelow: number;
  readonly capacity: number;

  constructor(walkBelow = 200, capacity = 10_000) {
    this.walkBelow = walkBelow;
    this.capacity = capacity;
  }

  /**
   * Whether this request's window is read by the walk alone: its organization's last recorded
   * window held fewer than `walkBelow` candidates, and this one is at most a day longer (a window
   * from a `startDate` to now grows with every request; a day of a small organization adds a few
   * pull requests, and each walked request records its own count).
   */
  walks(q: GroupingsQuery): boolean {
    const seen = this.#seen.get(q.orgKey);
    return seen !== undefined && seen.candidates < this.walkBelow && q.end - q.start <= seen.windowMs + DAY_MS;
  }

  /**
   * The pull requests this window is expected to hold: its organization's last recorded window's,
   * scaled to this one's length; null when the isolate has recorded none (`countSliceFrom`).
   */
  expected(q: GroupingsQuery): number | null {
    const seen = this.#seen.get(q.orgKey);
    if (seen === undefined || seen.windowMs <= 0) return null;
    return (seen.candidates * (q.end - q.start)) / seen.windowMs;
  }

  /** Forgets every organization: each one's next summary reads the full statement (tests of the blocks over HTTP). */
  clear(): void {
    this.#seen.clear();
  }

  /**
   * Notes an answered request's candidates. Only a request that counts the organization's window
   * as an admin sees it teaches: without lists and without a member's access list. The
   * repositories removed from the installation (`excludedRepoKeys`) are left out of every admin's
   * request of the organization, so they do not stop it teaching (an organization that ever removed
   * a repository would never learn otherwise); their rows are skipped by the walk's index range as
   * they are by the blocks'.
   */
  record(q: GroupingsQuery, candidates: number): void {
    if (q.repoKeys !== null || q.authorKeys !== null || q.accessibleRepoKeys !== null) return;
    setNewest(this.#seen, q.orgKey, { candidates, windowMs: q.end - q.start }, this.capacity);
  }
}

/** How a request is read: the isolate's plans (none: always the full statement), and hooks for tests. */
export interface SummaryOptions {
  plans?: SummaryPlans;
  /** The isolate's slices of blocks already read (`summary-slice-cache.ts`); none: every slice is read from D1. */
  sliceCache?: SliceCache;
  /** The isolate's edge days (`summary-edges.ts`); none: every edge of the window is checked in SQL. */
  edgeCache?: EdgeCache;
  /**
   * Takes the edge days' reads, to start after the answer (the request's `ctx.waitUntil`: deployed,
   * they then cost the answer nothing); unset, the answer waits for them (tests, the benchmarks on
   * the file).
   */
  defer?: (start: () => Promise<unknown>) => void;
  /** Runs between the slices and the statement: for tests only (a write raced between them). */
  beforeWalk?: () => Promise<void>;
  /** Runs before the buckets' values are read: for tests only. */
  beforeMedians?: () => Promise<void>;
}

/**
 * The export's rows for the same input (every page), grouped, in one statement: see
 * `summaryStatement`. Groups without rows are not returned (`rules/analytics-summary.ts` adds the
 * empty time buckets).
 */
export async function summarizeMergedPullRequests(
  db: D1Database | D1DatabaseSession,
  q: SummaryQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
  options: SummaryOptions = {},
): Promise<SummaryFigures> {
  const { groupBy, ...scope } = q;
  const { groupings, ...counts } = await summarizeGroupings(db, { ...scope, groupBys: [groupBy] }, limits, options);
  const [only] = groupings;
  if (!only) throw new Error("summary statement answered no grouping");
  return { ...only, ...counts };
}

/**
 * Several groupings of the same rows: the window's full days that a day block can serve
 * (`summary-days.ts`) from their blocks, read by the statement itself or, for a window of more
 * than `limits.blockSliceDays` full days, in slices before it; every other row found, checked and
 * measured once by the statement (`summaryStatement`), each grouping grouping them once. Each
 * group's medians are computed here (exact: the value at `medianIndex` in ascending order, found
 * by selection), and the totals' from all of the first grouping's rows: from every duration, or,
 * for an unfiltered time grouping, from the blocks' counts per bucket and the values of the
 * median's bucket only (`resolveMedians`). Then the window's full days without a block are built.
 * With `options.plans`, a window the isolate has seen hold few candidates is walked instead
 * (`SummaryPlans`): no block read or built.
 */
export async function summarizeGroupings(
  db: D1Database | D1DatabaseSession,
  q: GroupingsQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
  options: SummaryOptions = {},
): Promise<GroupingsFigures> {
  const { plans, sliceCache, edgeCache, defer, ...hooks } = options;
  const kept = sliceCache?.of(q.orgKey);
  const walk = plans?.walks(q) ?? false;
  // The edge days the isolate keeps (`summary-edges.ts`): the organization's, or each listed repository's.
  const edges = walk ? undefined : edgeCache?.of(q.orgKey);
  const edgeKeys = new Set(q.repoKeys === null ? [""] : q.repoKeys);
  let edgeDays = 0;
  /** The days whose edges the last statement checked itself, for the next request to count from edge days. */
  let edgesChecked: EdgeChecked[] = [];
  // A summary's statements take turns with other requests on the thread (`taking-turns.ts`); a
  // walked window is one short statement of a few pull requests, and a turn would only delay it.
  if (!walk) db = takingTurns(db, limits.turnEveryMs);
  // A block holds the organization's day, or one listed repository's: the repository list is
  // what chose it, so only the other filters apply to its pull requests.
  const filter = blockFilter({ ...q, repoKeys: null });
  const days = fullDays(q);
  // The organization's counts of a window expected to be large (or not seen yet) are read in
  // slices, so that no piece of a year holds the thread or the database; a list's, or a window
  // of few pull requests, in one statement (`SummaryLimits.countWholeDays`).
  const whole = q.repoKeys !== null || (plans?.expected(q) ?? Number.POSITIVE_INFINITY) < limits.countSliceFrom;
  const sliceDays = !bucketed(q) ? limits.blockSliceDays : whole ? limits.countWholeDays : limits.countSliceDays;
  const sliced = days !== null && days.last - days.first + 1 > sliceDays;
  let assembled: Assembled | null = null;
  let rowsRead = 0;
  // Sliced: the blocks first, a slice per statement, each added up as it arrives; then one
  // statement walks every other day and checks that the blocks read are still stored as read
  // (every write to a day deletes its block, so then they equal its rows at that statement). If
  // one changed in between, or before the values of the medians' buckets are read from them, the
  // whole is read again; the third time without blocks, as it is when the blocks hold more than
  // `limits.blocksMax` pull requests.
  const slices = sliceReader(db, q.orgKey, { rows: limits.slicesPerStatement, bytes: limits.sliceBytesPerStatement });
  // A grouping by repository or author alone reads the window's whole months from their month
  // blocks per group when they serve it (`summary-group-months.ts`), and their days' blocks not.
  const kinds = limits.groupMonths ? groupMonthKinds(q) : null;
  let missingRuns: DayRun[] = [];
  // The spans to make after the answer: per kind, the whole months in a row served from their heads (`spanOf`).
  let spansWanted: { kind: GroupKind; months: GroupMonth[] }[] = [];
  for (let attempt = 0; assembled === null; attempt++) {
    let figures = accumulator(q.groupBys, filter);
    let served: BlocksServed = walk ? "walk" : sliced || attempt >= 2 ? "none" : "chosen here";
    if (!walk && sliced && attempt < 2) {
      const monthDays: [string, number, number][] = [];
      if (kinds !== null && days !== null) {
        const read = await planGroupMonths(db, q.orgKey, kinds, q, days, {
          spans: limits.groupSpans,
          corrections: limits.corrections,
        });
        rowsRead += read.rowsRead;
        missingRuns = read.missing;
        // Not while a whole month of the window is still to be built: the span would stop short of it.
        const wholeMissing = read.missing.some(({ first, last, month }) => first === month && last === monthLastDay(month));
        spansWanted = wholeMissing
          ? []
          : kinds.flatMap((kind) => {
              const months = spanOf(read.served.filter((m) => m.kind === kind));
              const [head, tail] = [months?.[0], months?.at(-1)];
              return months && head && tail && !read.spans.has(spanKey(kind, head.first, tail.last)) ? [{ kind, months }] : [];
            });
        for (const month of read.served) figures.addGroupMonth(month);
        for (const month of read.served.filter((m) => m.kind === kinds[0]))
          for (const [day, version] of month.days) monthDays.push(["", day, version]);
      }
      const skip = new Set(monthDays.map(([, day]) => day));
      const read = await readBlocks(db, q, days, { ...limits, blockSliceDays: sliceDays }, figures.add, skip);
      rowsRead += read.rowsRead;
      if (read.served === null) figures = accumulator(q.groupBys, filter); // over the bound: none counts
      served = read.served === null ? "none" : [...read.served, ...monthDays];
    }
    await hooks.beforeWalk?.();
    // When blocks and months serve all but a few of the window's days, the statement walks only
    // its edges (those days, and the pull requests merged before it with a review inside), so each
    // group's durations come back whole (a part per group: a year by author sent 1,800 rows in 8
    // parts, 800 whole). D1 caps a value at 1 MB (about 65,000 durations): a statement refused is
    // run again in `limits.arrayParts` parts.
    const parts = edgesOnly(q, days, served) ? 1 : limits.arrayParts;
    const keptEdges = edges?.near(edgeKeys, q.start, q.end) ?? [];
    const known = new Map(keptEdges.map((edge) => [`${edge.rk}\u0000${edge.day}`, edge]));
    const run = (arrayParts: number) => {
      const { sql, params } = summaryStatement(
        q,
        { ...limits, arrayParts },
        served,
        edges === undefined ? null : keptEdges.map((edge): KnownEdge => [edge.rk, edge.day, edge.version, edge.edgeVersion]),
      );
      return db
        .prepare(sql)
        .bind(...params)
        .all<PartRow>();
    };
    let result: D1Result<PartRow>;
    try {
      result = await run(parts);
    } catch (error) {
      if (parts === limits.arrayParts) throw error;
      log.warn("summary statement refused in one part per group, run again in parts", {
        orgKey: q.orgKey,
        error: errorField(error),
      });
      result = await run(limits.arrayParts);
    }
    rowsRead += result.meta.rows_read;
    edgesChecked = [];
    const used: [EdgeDay, EdgeUse][] = [];
    for (const row of result.results) {
      if (row.grouping === KNOWN_USED) {
        const edge = known.get(`${row.rk}\u0000${row.key}`);
        if (edge === undefined)
          throw new Error(`the summary statement used an edge day it was not told of: ${row.rk} ${row.key}`);
        used.push([edge, row.candidates as EdgeUse]);
      } else if (row.grouping === EDGE_SQL)
        edgesChecked.push({ rk: row.rk ?? "", day: Number(row.key), use: row.candidates, version: row.version });
      else figures.add(row);
    }
    // The kept days the statement left out, counted here exactly as it would have (`addEdgeDay`).
    for (const [edge, use] of used) addEdgeDay(edge, use, q, q.groupBys, filter, figures.add);
    edgeDays = used.length;
    await hooks.beforeMedians?.();
    const done = await figures.result(slices, kept);
    rowsRead += done.rowsRead;
    if (done.corrupt.length > 0) await deleteBlocks(db, q.orgKey, done.corrupt);
    if (done.stale === 0) assembled = done;
  }
  plans?.record(q, assembled.candidates);
  // The window's full days that have no block yet get one for the next summary (the
  // organization's, or each listed repository's): not for a request refused over the bound (its
  // reading is what the bound prevents). The answer is already known: a build that fails is
  // logged, not answered.
  const { missingDays, missingMonths } = assembled;
  if (kinds !== null && assembled.candidates <= limits.maxRows && missingRuns.length > 0)
    await buildMissingGroupMonths(db, q, kinds, missingRuns, limits);
  if (limits.groupSpans && spansWanted.length > 0 && assembled.candidates <= limits.maxRows)
    await buildGroupSpans(db, q.orgKey, spansWanted, { maxBytes: limits.dayBlockMaxBytes });
  if ((missingDays.length > 0 || missingMonths.length > 0) && assembled.candidates <= limits.maxRows) {
    // Per repository ('' the organization), the days to build: those reported, and every day of a
    // month reported without its block (a build keeps the day blocks already stored); then its months,
    // from those day blocks.
    const repos = new Map<string, { days: Set<number>; months: [number, number][] }>();
    const of = (repoKey: string) => {
      const entry = repos.get(repoKey) ?? { days: new Set<number>(), months: [] };
      repos.set(repoKey, entry);
      return entry;
    };
    for (const { repoKey, day } of missingDays) of(repoKey).days.add(day);
    for (const { repoKey, month } of missingMonths)
      for (const [first, last] of wholeMonths(month, month + 30)) {
        const entry = of(repoKey);
        entry.months.push([first, last]);
        for (let day = first; day <= last; day++) entry.days.add(day);
      }
    try {
      for (const [repoKey, { days, months }] of repos) {
        const sorted = [...days].sort((a, b) => a - b);
        for (let i = 0; i < sorted.length; i += BUILD_DAYS_PER_STATEMENT) {
          const slice = sorted.slice(i, i + BUILD_DAYS_PER_STATEMENT);
          await buildSummaryDays(db, q.orgKey, slice, {
            maxPerDay: limits.dayBlockMax,
            maxBytes: limits.dayBlockMaxBytes,
            repoKey,
          });
        }
        await buildSummaryMonths(db, q.orgKey, repoKey, months, { maxPerMonth: limits.monthBlockMax });
      }
    } catch (error) {
      log.warn("summary blocks not built", {
        orgKey: q.orgKey,
        days: missingDays.length,
        months: missingMonths.length,
        error: errorField(error),
      });
    }
  }
  // The days whose edges the statement checked itself, for the next requests (`summary-edges.ts`):
  // blocks built now (writes), edge days read after the answer when the request can (reads only).
  if (edges !== undefined && edgesChecked.length > 0 && assembled.candidates <= limits.maxRows) {
    const { toRead, toBuild } = edgeWork(q, edges, edgesChecked);
    if (toBuild.length > 0) await buildEdgeBlocks(db, q.orgKey, toBuild, limits);
    if (toRead.length > 0) {
      const now = Date.now();
      const reading = () =>
        readEdgeDays(db, q.orgKey, edges, toRead, now).catch((error) => {
          log.warn("summary edge days not read", { orgKey: q.orgKey, error: errorField(error) });
          return 0;
        });
      if (defer) defer(reading);
      else rowsRead += await reading();
    }
  }
  const { groupings, candidates, fromBlocks, fromGroupMonths, bucketValues } = assembled;
  return { groupings, candidates, fromBlocks, fromGroupMonths, bucketValues, rowsRead, edgeDays };
}

/**
 * Builds the month blocks per group that a summary asked for (`summary-group-months.ts`
 * `planGroupMonths`), for every kind it asked: first the organization's day blocks their runs still
 * lack (a day outside the span of merges the statement walked is never reported missing), then one
 * batch per run and kind. The answer is already known: a build that fails is logged, not answered.
 */
async function buildMissingGroupMonths(
  db: D1Database | D1DatabaseSession,
  q: GroupingsQuery,
  kinds: readonly GroupKind[],
  asked: readonly DayRun[],
  limits: SummaryLimits,
): Promise<void> {
  const { orgKey } = q;
  try {
    // The runs' days as stored: whether each has a block, and whether it serves the window.
    const daysOf = async () => {
      const { results } = await db
        .prepare(
          // With the window's edge corrections, a day block with content serves (its straddlers are corrected).
          `SELECT d.day AS day, d.pull_requests = 0 OR (d.lo IS NOT NULL AND (?5 OR (d.lo >= ?3 AND d.hi <= ?4))) AS usable
FROM json_each(?2) AS r CROSS JOIN summary_days AS d
ON d.org_key = ?1 AND d.repo_key = '' AND d.day BETWEEN r.value ->> 0 AND r.value ->> 1`,
        )
        .bind(orgKey, JSON.stringify(asked.map(({ first, last }) => [first, last])), q.start, q.end, limits.corrections ? 1 : 0)
        .all<{ day: number; usable: number | null }>();
      return new Map(results.map(({ day, usable }) => [day, usable === 1]));
    };
    let stored = await daysOf();
    const lacking: number[] = [];
    for (const { first, last } of asked) for (let day = first; day <= last; day++) if (!stored.has(day)) lacking.push(day);
    for (let i = 0; i < lacking.length; i += BUILD_DAYS_PER_STATEMENT)
      await buildSummaryDays(db, orgKey, lacking.slice(i, i + BUILD_DAYS_PER_STATEMENT), {
        maxPerDay: limits.dayBlockMax,
        maxBytes: limits.dayBlockMaxBytes,
      });
    // The days just built may not serve the window (reviews before it): each run shrinks to its
    // longest run of days that do.
    if (lacking.length > 0) stored = await daysOf();
    const runs = asked.flatMap(({ first, last, month }) => {
      const run = longestRun(first, last, month, (day) => stored.get(day) === true);
      const aligned = run === null ? null : alignedRun(run, monthLastDay(month));
      return aligned === null ? [] : [aligned];
    });
    // A run per batch: each reads and sorts up to a month of the organization's pull requests.
    for (const kind of kinds)
      for (const run of runs) await buildGroupMonths(db, orgKey, kind, [run], { maxBytes: limits.dayBlockMaxBytes });
    log.info("summary month blocks per group built", { orgKey, runs: runs.length, kinds: kinds.length, days: lacking.length });
  } catch (error) {
    log.warn("summary month blocks per group not built", { orgKey, runs: asked.length, error: errorField(error) });
  }
}

/**
 * Deletes blocks found malformed (no build writes one; a damaged row would be read and found stale
 * by every summary otherwise), each only as it was read (its version): the next summary builds it
 * anew. Logged, and a failure to delete is only logged.
 */
async function deleteBlocks(db: D1Database | D1DatabaseSession, orgKey: string, blocks: readonly BlockId[]): Promise<void> {
  log.warn("summary blocks malformed, deleted", { orgKey, blocks: blocks.length });
  try {
    const days = blocks.filter((b) => b.group === undefined);
    const groups = blocks.filter((b) => b.group !== undefined && b.group.span !== true);
    const spans = blocks.filter((b) => b.group?.span === true);
    await db.batch([
      db
        .prepare(
          `DELETE FROM summary_days WHERE org_key = ?1 AND (repo_key, day, version) IN
  (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?2))`,
        )
        .bind(orgKey, JSON.stringify(days.map(({ repoKey, day, version }) => [repoKey, day, version]))),
      // A group's month block: its month's head of that kind (its group rows are then never served).
      db
        .prepare(
          `DELETE FROM summary_group_month_heads WHERE org_key = ?1 AND (month, kind, first_day, last_day, version) IN
  (SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?2))`,
        )
        .bind(
          orgKey,
          JSON.stringify(groups.map(({ day, group, version }) => [day, group?.kind, group?.first, group?.last, version])),
        ),
      // A span's group or bucket row: the span's head.
      db
        .prepare(
          `DELETE FROM summary_group_span_heads WHERE org_key = ?1 AND (kind, first_day, last_day, version) IN
  (SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?2))`,
        )
        .bind(orgKey, JSON.stringify(spans.map(({ group, version }) => [group?.kind, group?.first, group?.last, version]))),
    ]);
  } catch (error) {
    log.warn("summary blocks malformed, not deleted", { orgKey, error: errorField(error) });
  }
}

/** At most this many of a window's full days unserved (walked whole) for its walk to count as its edges alone (`edgesOnly`). */
export const EDGE_DAYS = 14;

/**
 * Whether the statement walks only the window's edges: the organization's blocks and months
 * (read before it, `served`) serve all but `EDGE_DAYS` of the window's full days.
 */
function edgesOnly(q: GroupingsQuery, days: { first: number; last: number } | null, served: BlocksServed): boolean {
  if (!Array.isArray(served) || days === null || q.repoKeys !== null) return false;
  const covered = new Set<number>();
  for (const [repoKey, day] of served) if (repoKey === "") covered.add(day);
  return days.last - days.first + 1 - covered.size <= EDGE_DAYS;
}

/** Days built per statement: a request that first covers a year of an organization builds it in a dozen statements, none long. */
const BUILD_DAYS_PER_STATEMENT = 31;

/** The window's full UTC days (from their first to their last millisecond), as day numbers; null when none. */
function fullDays(q: { start: number; end: number }): { first: number; last: number } | null {
  const first = Math.ceil(q.start / DAY_MS);
  const last = Math.floor((q.end + 1) / DAY_MS) - 1;
  return last >= first ? { first, last } : null;
}

/**
 * Reads the blocks of the window's full days that can serve it (the organization's, or each listed
 * repository's), `limits.blockSliceDays` days per statement, handing each to `add` as it arrives.
 * Answers the blocks served (repository key, day and version) and the rows read; `served` null
 * when they hold more than `limits.blocksMax` pull requests (then the caller counts none of them:
 * the statement stops sending data at the bound).
 */
async function readBlocks(
  db: D1Database | D1DatabaseSession,
  q: GroupingsQuery,
  days: { first: number; last: number } | null,
  limits: SummaryLimits,
  add: (row: PartRow) => void,
  skip: ReadonlySet<number> = new Set(),
): Promise<{ served: [string, number, number][] | null; rowsRead: number }> {
  const served: [string, number, number][] = [];
  const keys = JSON.stringify(q.repoKeys === null ? [""] : [...new Set(q.repoKeys)]);
  let rowsRead = 0;
  let pullRequests = 0;
  const columns = blockColumns(q)
    .map(
      ([name, needed]) => `IIF(w.usable AND w.within AND s.pull_requests > 0 AND ${needed ? 1 : 0}, s.${name}, NULL) AS ${name}`,
    )
    .join(", ");
  // The days to read (those a month block per group or span does not serve), `blockSliceDays` of
  // them a statement: a year by author reads its two edge months' days in one.
  const open: number[] = [];
  for (let day = days?.first ?? 0; days !== null && day <= days.last; day++) if (!skip.has(day)) open.push(day);
  for (let at = 0; at < open.length; at += limits.blockSliceDays) {
    const from = open[at] as number;
    const through = open[Math.min(open.length, at + limits.blockSliceDays) - 1] as number;
    const { results, meta } = await db
      .prepare(
        // The running sum over the blocks' keys and counts alone, then each block's columns by its
        // key: a window function over whole rows copied every block's columns (its sorted values
        // too) into a temporary table, 6 ms for 31 days on the 1M file.
        `SELECT s.repo_key AS rk, s.day AS day, s.pull_requests AS n, s.version AS version, w.usable AS usable,
  w.within AS within, ${columns}
FROM (
  SELECT repo_key, day, usable,
    SUM(IIF(usable, pull_requests, 0)) OVER (ORDER BY day, repo_key ROWS UNBOUNDED PRECEDING) <= ?6 AS within
  FROM (
    SELECT repo_key, day, pull_requests, ${SERVABLE("", limits.corrections)} AS usable FROM summary_days
    WHERE org_key = ?1 AND repo_key IN (SELECT value FROM json_each(?7)) AND day BETWEEN ?4 AND ?5
      AND day NOT IN (SELECT value FROM json_each(?8))
  )
) AS w CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = w.repo_key AND s.day = w.day
ORDER BY w.day, w.repo_key`,
      )
      .bind(
        q.orgKey,
        q.start,
        q.end,
        from,
        through,
        limits.blocksMax - pullRequests,
        keys,
        JSON.stringify([...skip].filter((day) => day >= from && day <= through)),
      )
      .all<{ rk: string; day: number; n: number; version: number; usable: number; within: number } & PartRow>();
    rowsRead += meta.rows_read;
    for (const row of results) {
      if (!row.usable) continue;
      if (!row.within) return { served: null, rowsRead };
      pullRequests += row.n;
      served.push([row.rk, row.day, row.version]);
      if (row.n > 0) add({ ...row, grouping: BLOCK, key: String(row.day), candidates: row.n });
    }
  }
  return { served, rowsRead };
}
