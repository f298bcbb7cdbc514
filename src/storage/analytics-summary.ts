import { errorField, log } from "../lib/log";
import {
  bucketKey,
  bucketStart,
  EMPTY_FIGURES,
  isTimeGroupBy,
  lowerMedian,
  medianIndex,
  selectRank,
} from "../rules/analytics-summary";
import { DURATION_BUCKETS, decodeSorted, durationBucket, SORTED_WIDTH } from "../rules/duration-buckets";
import type { AnalyticsSummaryGroup, AnalyticsSummaryTotals, SummaryGroupBy } from "../schemas/analytics-summary";
import { type AnalyticsScope, unionAll } from "./analytics";
import { GAP_TIER_BOUNDS_MS, LAST_GAP_TIER } from "./review-span";
import {
  BLOCK_JSON,
  BLOCK_MAX_BYTES,
  BLOCK_MAX_PULL_REQUESTS,
  BLOCKS_MAX_PULL_REQUESTS,
  type BlockColumns,
  type BlockFilter,
  buildSummaryDays,
} from "./summary-days";

/** What the summary needs, in storage terms: the export's scope (its statement input without the page), and the grouping. */
export type SummaryQuery = AnalyticsScope & { groupBy: SummaryGroupBy };

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
  /** Durations read from the blocks' sorted values (`resolveMedians`: only the medians' buckets). */
  bucketValues: number;
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
): Promise<SummaryFigures> {
  const { groupBy, ...scope } = q;
  const { groupings, ...counts } = await summarizeGroupings(db, { ...scope, groupBys: [groupBy] }, limits);
  const [only] = groupings;
  if (!only) throw new Error("summary statement answered no grouping");
  return { ...only, ...counts };
}

/** Several groupings of one scope's rows (the dashboard's week, repository and author). */
export type GroupingsQuery = AnalyticsScope & { groupBys: readonly SummaryGroupBy[] };

/** Per grouping asked, in the order asked: its groups with rows and the totals (the same for every grouping). */
export interface GroupingsFigures {
  groupings: { groups: AnalyticsSummaryGroup[]; totals: AnalyticsSummaryTotals }[];
  /** D1's count of rows the statement read (`meta.rows_read`). */
  rowsRead: number;
  /** As `SummaryFigures.candidates`. */
  candidates: number;
  /** Of the candidates, those counted from day blocks (`summary-days.ts`) instead of walked. */
  fromBlocks: number;
  /** As `SummaryFigures.bucketValues`. */
  bucketValues: number;
}

/**
 * How much one summary statement may do (contract section 12 and issue 31, item 3), and how it
 * splits each group's durations.
 *
 * - `maxRows`: at most this many candidate pull requests (rows the walk finds before the exact
 *   check) per request; each walk (the window's, the merges' outside it) stops at one more, and
 *   the caller answers 400 instead of figures
 *   (`analytics/summary.ts` `refuseOverBound`).
 *   A request reads about two D1 rows per candidate, so this bounds what one request can hold a
 *   shard for. No legitimate request reaches the default: a shard holds about 7 million pull
 *   requests (contract section 16), so no window of one organization holds 8 million.
 * - `arrayParts`: the groups of a sorted grouping come back in this many parts (split by pull
 *   request id), each with its durations as JSON arrays, so no single value nears D1's cap on a
 *   string (1 MB; local D1 does not enforce it): a duration takes at most 15 characters, so a part
 *   holds about 65,000 of them and a group 8 parts of that. A time grouping walked by day sends
 *   one array per UTC day (65,000 merges in a day would be needed to near the cap).
 */
export interface SummaryLimits {
  maxRows: number;
  arrayParts: number;
  /** The most pull requests of one day a block holds (`summary-days.ts` `BLOCK_MAX_PULL_REQUESTS`; lower in tests). */
  dayBlockMax: number;
  /**
   * A window of more full days than this reads its blocks in statements of this many days each,
   * before the statement that walks the rest (`summarizeGroupings`): no statement holds the
   * database, and no piece of the Worker's work holds its thread, for a whole year of blocks.
   */
  blockSliceDays: number;
  /**
   * As `blockSliceDays`, for a request that reads the blocks' counts per duration bucket instead of
   * their durations (`bucketed`): a day's counts weigh about a sixtieth of its durations at a
   * thousand pull requests a day, so a year of them is one statement, the walk's own.
   */
  countSliceDays: number;
  /**
   * A request served from the blocks' counts (`bucketed`) whose one statement serves fewer pull
   * requests than this reads their durations instead: their JSON costs less than the second round
   * trip that reads the medians' buckets (a small organization's default window).
   */
  bucketsFrom: number;
  /** The most pull requests one request reads from blocks (`summary-days.ts` `BLOCKS_MAX_PULL_REQUESTS`); above it the window is walked. */
  blocksMax: number;
  /** The most bytes of JSON one block stores (`summary-days.ts` `BLOCK_MAX_BYTES`). */
  dayBlockMaxBytes: number;
}

export const SUMMARY_LIMITS: SummaryLimits = {
  maxRows: 8_000_000,
  arrayParts: 8,
  dayBlockMax: BLOCK_MAX_PULL_REQUESTS,
  blockSliceDays: 92,
  countSliceDays: 366,
  bucketsFrom: 2_000,
  blocksMax: BLOCKS_MAX_PULL_REQUESTS,
  dayBlockMaxBytes: BLOCK_MAX_BYTES,
};

/**
 * Several groupings of the same rows: the window's full days that a day block can serve
 * (`summary-days.ts`) from their blocks, read by the statement itself or, for a window of more
 * than `limits.blockSliceDays` full days, in slices before it; every other row found, checked and
 * measured once by the statement (`summaryStatement`), each grouping grouping them once. Each
 * group's medians are computed here (exact: the value at `medianIndex` in ascending order, found
 * by selection), and the totals' from all of the first grouping's rows: from every duration, or,
 * for an unfiltered time grouping, from the blocks' counts per bucket and the values of the
 * median's bucket only (`resolveMedians`). Then the window's full days without a block are built.
 * `hooks.beforeWalk` runs between the slices and the statement, `hooks.beforeMedians` before the
 * buckets' values are read: for tests only (a write raced between them).
 */
export async function summarizeGroupings(
  db: D1Database | D1DatabaseSession,
  q: GroupingsQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
  hooks: { beforeWalk?: () => Promise<void>; beforeMedians?: () => Promise<void> } = {},
): Promise<GroupingsFigures> {
  const filter = blockFilter(q);
  const days = fullDays(q);
  const sliceDays = bucketed(q) ? limits.countSliceDays : limits.blockSliceDays;
  const sliced = q.repoKeys === null && days !== null && days.last - days.first + 1 > sliceDays;
  let assembled: Assembled | null = null;
  let rowsRead = 0;
  // Sliced: the blocks first, a slice per statement, each added up as it arrives; then one
  // statement walks every other day and checks that the blocks read are still stored as read
  // (every write to a day deletes its block, so then they equal its rows at that statement). If
  // one changed in between, or before the values of the medians' buckets are read from them, the
  // whole is read again; the third time without blocks, as it is when the blocks hold more than
  // `limits.blocksMax` pull requests.
  const slices = sliceReader(db, q.orgKey);
  for (let attempt = 0; assembled === null; attempt++) {
    let figures = accumulator(q.groupBys, filter);
    let served: BlocksServed = sliced || attempt >= 2 ? "none" : "chosen here";
    if (sliced && attempt < 2) {
      const read = await readBlocks(db, q, days, { ...limits, blockSliceDays: sliceDays }, figures.add);
      rowsRead += read.rowsRead;
      if (read.served === null) figures = accumulator(q.groupBys, filter); // over the bound: none counts
      served = read.served ?? "none";
    }
    await hooks.beforeWalk?.();
    const { sql, params } = summaryStatement(q, limits, served);
    const result = await db
      .prepare(sql)
      .bind(...params)
      .all<PartRow>();
    rowsRead += result.meta.rows_read;
    for (const row of result.results) figures.add(row);
    await hooks.beforeMedians?.();
    const done = await figures.result(slices);
    rowsRead += done.rowsRead;
    if (done.stale === 0) assembled = done;
  }
  // The window's full days that have no block yet get one for the next summary: not for a request
  // refused over the bound (its reading is what the bound prevents), nor for a repository filter
  // (it reads no block). The answer is already known: a build that fails is logged, not answered.
  if (assembled.missingDays.length > 0 && assembled.candidates <= limits.maxRows && q.repoKeys === null) {
    try {
      for (let i = 0; i < assembled.missingDays.length; i += BUILD_DAYS_PER_STATEMENT) {
        const slice = assembled.missingDays.slice(i, i + BUILD_DAYS_PER_STATEMENT);
        await buildSummaryDays(db, q.orgKey, slice, { maxPerDay: limits.dayBlockMax, maxBytes: limits.dayBlockMaxBytes });
      }
    } catch (error) {
      log.warn("summary blocks not built", { orgKey: q.orgKey, days: assembled.missingDays.length, error: errorField(error) });
    }
  }
  const { groupings, candidates, fromBlocks, bucketValues } = assembled;
  return { groupings, candidates, fromBlocks, bucketValues, rowsRead };
}

/** Days built per statement: a request that first covers a year of an organization builds it in a dozen statements, none long. */
const BUILD_DAYS_PER_STATEMENT = 31;

/**
 * Which blocks the statement serves: those it chooses itself (one statement: it reads them too),
 * none, or those read before it in slices (`[day, version]`, which it checks).
 */
type BlocksServed = "chosen here" | "none" | [day: number, version: number][];

/** The window's full UTC days (from their first to their last millisecond), as day numbers; null when none. */
function fullDays(q: { start: number; end: number }): { first: number; last: number } | null {
  const first = Math.ceil(q.start / DAY);
  const last = Math.floor((q.end + 1) / DAY) - 1;
  return last >= first ? { first, last } : null;
}

/**
 * Reads the blocks of the window's full days that can serve it, `limits.blockSliceDays` stored
 * days per statement, handing each to `add` as it arrives. Answers the blocks served (day and
 * version) and the rows read; `served` null when they hold more than `limits.blocksMax` pull
 * requests (then the caller counts none of them: the statement stops sending data at the bound).
 */
async function readBlocks(
  db: D1Database | D1DatabaseSession,
  q: GroupingsQuery,
  days: { first: number; last: number } | null,
  limits: SummaryLimits,
  add: (row: PartRow) => void,
): Promise<{ served: [number, number][] | null; rowsRead: number }> {
  const served: [number, number][] = [];
  let rowsRead = 0;
  let pullRequests = 0;
  const columns = blockColumns(q)
    .map(([name, needed]) => `IIF(usable AND within AND s.pull_requests > 0 AND ${needed ? 1 : 0}, s.${name}, NULL) AS ${name}`)
    .join(", ");
  for (let from = days?.first ?? 0; days !== null && from <= days.last; ) {
    const { results, meta } = await db
      .prepare(
        `SELECT s.day AS day, s.pull_requests AS n, s.version AS version, usable, within, ${columns}
FROM (
  SELECT *, SUM(IIF(usable, pull_requests, 0)) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) <= ?7 AS within
  FROM (
    SELECT *, pull_requests = 0 OR (lo >= ?2 AND hi <= ?3) AS usable FROM summary_days
    WHERE org_key = ?1 AND day BETWEEN ?4 AND ?5 ORDER BY day LIMIT ?6
  )
) AS s ORDER BY s.day`,
      )
      .bind(q.orgKey, q.start, q.end, from, days.last, limits.blockSliceDays, limits.blocksMax - pullRequests)
      .all<{ day: number; n: number; version: number; usable: number; within: number } & PartRow>();
    rowsRead += meta.rows_read;
    for (const row of results) {
      if (!row.usable) continue;
      if (!row.within) return { served: null, rowsRead };
      pullRequests += row.n;
      served.push([row.day, row.version]);
      if (row.n > 0) add({ ...row, grouping: BLOCK, key: String(row.day), candidates: row.n });
    }
    const last = results.at(-1);
    if (last === undefined || results.length < limits.blockSliceDays) break;
    from = last.day + 1;
  }
  return { served, rowsRead };
}

/**
 * A block's columns and whether the request reads each: the day's totals always; for an
 * unfiltered request of time groupings only, the durations' counts per bucket (`bucketed`),
 * otherwise the durations; the repositories' and authors' sums and indexes for those groupings;
 * with a filter, all of them.
 */
function blockColumns(q: GroupingsQuery): [keyof BlockColumns, boolean][] {
  const filtered = isFiltered(q);
  const by = (groupBy: SummaryGroupBy) => q.groupBys.includes(groupBy);
  const counts = bucketed(q);
  const needed: Record<keyof BlockColumns, boolean> = {
    totals: true,
    counts,
    repos: filtered || by("repo"),
    authors: filtered || by("author"),
    repo_of: filtered || by("repo"),
    author_of: filtered || by("author"),
    figures: filtered,
    durations: !counts,
  };
  return BLOCK_JSON.map((name) => [name, needed[name]]);
}

/** Whether the request counts only some of a block's pull requests (an access list, excluded repositories, authors). */
const isFiltered = (q: AnalyticsScope): boolean =>
  q.accessibleRepoKeys !== null || (q.excludedRepoKeys?.length ?? 0) > 0 || q.authorKeys !== null;

/**
 * Whether the blocks' medians come from their counts per bucket (`resolveMedians`): an unfiltered
 * request of time groupings only. A repository or author grouping needs each group's durations of
 * every day (as many as a day's counts per group would be), and a filter each pull request's.
 */
const bucketed = (q: GroupingsQuery): boolean => !isFiltered(q) && q.groupBys.every(isTimeGroupBy);

/** Which repositories and authors of a block the scope counts, as the statement's filters choose them. */
export function blockFilter(q: AnalyticsScope): BlockFilter {
  const sets = [q.repoKeys, q.accessibleRepoKeys].filter((list) => list !== null).map((list) => new Set(list));
  const excluded = new Set(q.excludedRepoKeys ?? []);
  const authors = q.authorKeys === null ? null : new Set(q.authorKeys);
  return {
    repo: sets.length === 0 && excluded.size === 0 ? null : (key) => !excluded.has(key) && sets.every((set) => set.has(key)),
    author: authors === null ? null : (key) => key !== null && authors.has(key),
  };
}

/**
 * One row of the statement: a group of one grouping (a group may come in several rows, e.g. from the
 * window's walk and from the merges outside it), its candidates (the rows found before the exact
 * check), the sums of its rows, and its durations as JSON arrays in no order, `tf0` and `tm0`.
 * Other kinds of row (`grouping` below 0, `key` a UTC day number): a day's block to add up
 * (`BLOCK`, in the block columns a request needs, `BLOCK_JSON`) and a full
 * day of the window without a block (`MISSING`).
 */
export type PartRow = Omit<AnalyticsSummaryGroup, "medianMsToFirstReview" | "medianMsToMerge"> & {
  grouping: number;
  candidates: number;
  tf0: string | null;
  tm0: string | null;
  /** A block's version (`summary_days.version`; null in other rows). */
  version: number | null;
} & { [column in keyof BlockColumns]: string | null };

const BLOCK = -1;
const MISSING = -2;
/** How many of the blocks read before the statement (`served`) are gone or rebuilt since (`key`). */
const STALE = -3;

/**
 * The statement's rows as the groupings' figures: rows of a group added up, the blocks' pull
 * requests that pass the filter added to their groups, medians from the durations. Also the full
 * days of the window that have no block. Without a reader of the blocks' sorted values, for rows
 * whose blocks were read with their durations (the benchmark's statement serves none).
 */
export async function assemble(
  groupBys: readonly SummaryGroupBy[],
  rows: readonly PartRow[],
  filter: BlockFilter,
  slices: SliceReader = noSlices,
): Promise<Assembled> {
  const figures = accumulator(groupBys, filter);
  for (const row of rows) figures.add(row);
  return figures.result(slices);
}

type Assembled = Omit<GroupingsFigures, "rowsRead"> & { missingDays: number[]; stale: number; rowsRead: number };

/**
 * One duration's part of a block served by its counts (`bucketed`): the day, the block's version,
 * the buckets that have values (ascending) and the count of each, and where this duration's values
 * start in the block's sorted values (those to merge follow those to first review).
 */
export interface BucketedPart {
  day: number;
  version: number;
  buckets: readonly number[];
  counts: readonly number[];
  start: number;
}

/** A group's values of one duration: lists of values, and blocks' parts served by their counts. */
export interface Durations {
  values: number[][];
  parts: BucketedPart[];
}

/** `assemble`, row by row: the blocks read in slices are added as they arrive. */
function accumulator(groupBys: readonly SummaryGroupBy[], filter: BlockFilter) {
  const groupings = groupBys.map(() => new Map<string, Accumulated>());
  const groupOf = (grouping: number, key: string): Accumulated => {
    const groups = groupings[grouping];
    if (!groups) throw new Error(`summary statement answered grouping ${grouping}`);
    let group = groups.get(key);
    if (!group) {
      const tf: number[] = [];
      const tm: number[] = [];
      group = { key, ...EMPTY_FIGURES, tf: { values: [tf], parts: [] }, tm: { values: [tm], parts: [] }, ownTf: tf, ownTm: tm };
      groups.set(key, group);
    }
    return group;
  };
  let candidates = 0;
  let fromBlocks = 0;
  let stale = 0;
  const missingDays: number[] = [];
  const add = (row: PartRow): void => {
    const { grouping, key } = row;
    if (grouping === MISSING) {
      missingDays.push(Number(key));
      return;
    }
    if (grouping === STALE) {
      stale += Number(key);
      return;
    }
    if (grouping === BLOCK) {
      fromBlocks += addBlock(groupBys, Number(key), row.version ?? 0, readBlock(row), filter, groupOf);
      return;
    }
    if (grouping === 0) candidates += row.candidates;
    const group = groupOf(grouping, key);
    for (const name of SUMMED) group[name] += row[name];
    if (row.tf0 !== null) group.tf.values.push(JSON.parse(row.tf0) as number[]);
    if (row.tm0 !== null) group.tm.values.push(JSON.parse(row.tm0) as number[]);
  };
  const result = async (slices: SliceReader): Promise<Assembled> => {
    candidates += fromBlocks;
    // A group of candidates none of which qualified is no group (every row of it failed the check).
    const lists = groupings.map((groups) => [...groups.values()].filter((g) => g.pullRequests > 0));
    // The totals are the same rows whatever the grouping: added up and selected once, from the first.
    const first = lists[0] ?? [];
    const totals = { ...EMPTY_FIGURES };
    for (const group of first) for (const name of SUMMED) totals[name] += group[name];
    const all = (of: "tf" | "tm"): Durations => ({
      values: first.flatMap((g) => g[of].values),
      parts: first.flatMap((g) => g[of].parts),
    });
    const sources = [all("tf"), all("tm"), ...lists.flatMap((list) => list.flatMap((g) => [g.tf, g.tm]))];
    const medians = await resolveMedians(sources, slices);
    if (medians.stale)
      return {
        groupings: [],
        candidates,
        fromBlocks,
        missingDays,
        stale: stale + 1,
        bucketValues: 0,
        rowsRead: medians.rowsRead,
      };
    let next = 0;
    const take = () => medians.values[next++] ?? null;
    totals.medianMsToFirstReview = take();
    totals.medianMsToMerge = take();
    return {
      groupings: lists.map((list) => ({
        groups: list.map(({ tf: _, tm: __, ownTf: ___, ownTm: ____, ...group }) => ({
          ...group,
          medianMsToFirstReview: take(),
          medianMsToMerge: take(),
        })),
        totals: { ...totals },
      })),
      candidates,
      fromBlocks,
      missingDays,
      stale,
      bucketValues: medians.bucketValues,
      rowsRead: medians.rowsRead,
    };
  };
  return { add, result };
}

/** A block row's JSON columns, parsed (the ones the statement did not read stay null). */
function readBlock(row: PartRow): BlockColumns {
  const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));
  const totals = parse<BlockColumns["totals"]>(row.totals);
  const durations = parse<BlockColumns["durations"]>(row.durations);
  const counts = parse<BlockColumns["counts"]>(row.counts);
  if (totals === null || (durations === null && counts === null))
    throw new Error("a served summary block without its totals, or neither its durations nor their counts");
  return {
    totals,
    durations,
    counts,
    repos: parse(row.repos),
    authors: parse(row.authors),
    repo_of: parse(row.repo_of),
    author_of: parse(row.author_of),
    figures: parse(row.figures),
  };
}

/** Adds a block's sums (`BlockSums` order) to a group. */
function addSums(group: Accumulated, [n, la, ld, fl, fx, al, nal]: readonly number[]): void {
  group.pullRequests += n as number;
  group.linesAdded += la as number;
  group.linesDeleted += ld as number;
  group.serviceIssuesFlagged += fl as number;
  group.serviceIssuesFixed += fx as number;
  group.aiLinesAuthored += al as number;
  group.pullRequestsWithAiData += nal as number;
}

/** The values that are not null (a duration is null when the creation time is). */
const present = (values: (number | null)[]): number[] =>
  values.includes(null) ? (values.filter((v) => v !== null) as number[]) : (values as number[]);

/**
 * Adds one day's block to the groupings: each of its pull requests that the filter passes counts
 * wholly (the statement serves a block only when every review and finding of the day lies in the
 * window). Without a filter, from the block's sums (per day, repository or author) and its
 * durations; with one, pull request by pull request. Returns how many it counted.
 */
function addBlock(
  groupBys: readonly SummaryGroupBy[],
  day: number,
  version: number,
  block: BlockColumns,
  filter: BlockFilter,
  groupOf: (grouping: number, key: string) => Accumulated,
): number {
  const { totals, repos, authors, figures, counts } = block;
  const membersOf = (groupBy: SummaryGroupBy) =>
    groupBy === "repo"
      ? read(block.repo_of, "repositories of its pull requests")
      : read(block.author_of, "authors of its pull requests");
  const durations = () => read(block.durations, "durations");
  const timeKey = (groupBy: SummaryGroupBy) => bucketKey(bucketStart(day * DAY, groupBy as "day" | "week" | "month"));
  const read = <T>(column: T | null, name: string): T => {
    if (column === null) throw new Error(`a summary block read without its ${name}`);
    return column;
  };
  if (filter.repo === null && filter.author === null) {
    groupBys.forEach((groupBy, grouping) => {
      if (isTimeGroupBy(groupBy)) {
        const group = groupOf(grouping, timeKey(groupBy));
        addSums(group, totals);
        if (counts !== null) {
          // Durations to merge follow those to first review in the block's sorted values.
          const [tfBuckets, tfCounts, tmBuckets, tmCounts] = counts;
          group.tf.parts.push({ day, version, buckets: tfBuckets, counts: tfCounts, start: 0 });
          const start = tfCounts.reduce((n, count) => n + count, 0);
          group.tm.parts.push({ day, version, buckets: tmBuckets, counts: tmCounts, start });
          return;
        }
        const [toFirstReview, toMerge] = durations();
        group.tf.values.push(present(toFirstReview));
        group.tm.values.push(present(toMerge));
        return;
      }
      const entries = groupBy === "repo" ? read(repos, "repositories") : read(authors, "authors");
      const byIndex: Accumulated[] = [];
      // A row without an author is never merged (its pull request event has not arrived), so never here.
      for (const [i, , name, ...sums] of entries) {
        const group = groupOf(grouping, name as string);
        addSums(group, sums);
        byIndex[i] = group;
      }
      const column = membersOf(groupBy);
      const [toFirstReview, toMerge] = durations();
      for (let i = 0; i < column.length; i++) {
        const group = byIndex[column[i] as number] as Accumulated;
        const tf = toFirstReview[i];
        const tm = toMerge[i];
        if (tf !== null && tf !== undefined) group.ownTf.push(tf);
        if (tm !== null && tm !== undefined) group.ownTm.push(tm);
      }
    });
    return totals[0];
  }
  const repoEntries = read(repos, "repositories");
  const authorEntries = read(authors, "authors");
  const [linesAdded, linesDeleted, aiLines, flagged, fixed] = read(figures, "figures");
  const [toFirstReview, toMerge] = durations();
  const repoOk = repoEntries.map(([, key]) => filter.repo === null || filter.repo(key));
  const authorOk = authorEntries.map(([, key]) => filter.author === null || filter.author(key));
  const names = { repo: repoEntries.map((r) => r[2]), author: authorEntries.map((a) => a[2] as string) };
  // Per grouping, the group of each pull request: one for a time grouping, by index otherwise.
  const pick = groupBys.map((groupBy, grouping): ((i: number) => Accumulated) => {
    if (isTimeGroupBy(groupBy)) {
      const group = groupOf(grouping, timeKey(groupBy));
      return () => group;
    }
    const byIndex = (groupBy === "repo" ? names.repo : names.author).map((name) => groupOf(grouping, name));
    const column = membersOf(groupBy);
    return (i) => byIndex[column[i] as number] as Accumulated;
  });
  const [repo, author] = [membersOf("repo"), membersOf("author")];
  let counted = 0;
  for (let i = 0; i < repo.length; i++) {
    if (!repoOk[repo[i] as number] || !authorOk[author[i] as number]) continue;
    counted++;
    const la = linesAdded[i] ?? null;
    const ld = linesDeleted[i] ?? null;
    const ai = aiLines[i] ?? null;
    const tf = toFirstReview[i] ?? null;
    const tm = toMerge[i] ?? null;
    for (const choose of pick) {
      const group = choose(i);
      group.pullRequests++;
      if (la !== null) group.linesAdded += la;
      if (ld !== null) group.linesDeleted += ld;
      group.serviceIssuesFlagged += flagged[i] as number;
      group.serviceIssuesFixed += fixed[i] as number;
      if (ai !== null) {
        group.aiLinesAuthored += ai;
        group.pullRequestsWithAiData++;
      }
      if (tf !== null) group.ownTf.push(tf);
      if (tm !== null) group.ownTm.push(tm);
    }
  }
  return counted;
}

type Accumulated = AnalyticsSummaryGroup & { tf: Durations; tm: Durations; ownTf: number[]; ownTm: number[] };

/** The value at `medianIndex` of the parts' values in ascending order (`lowerMedian`); null when there are none. */
function median(parts: readonly (readonly number[])[]): number | null {
  const values = new Float64Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    values.set(part, at);
    at += part.length;
  }
  return lowerMedian(values);
}

/**
 * One slice of a block's sorted values: `count` values from position `offset` of the block of
 * `day`, which must still be stored at `version`.
 */
export interface SliceRequest {
  day: number;
  version: number;
  offset: number;
  count: number;
}

/**
 * Reads slices of blocks' sorted values: per request, in order, the slice's fixed-width text, or
 * null for all when any block is gone or rebuilt since it was read (stale).
 */
export type SliceReader = (requests: readonly SliceRequest[]) => Promise<{ texts: string[] | null; rowsRead: number }>;

const noSlices: SliceReader = () => {
  throw new Error("a summary served from duration counts needs a reader of the blocks' sorted values");
};

/** Slices per statement: each a seek and about 30 bytes of bound JSON. */
const SLICES_PER_STATEMENT = 2_000;

/** The blocks' slices as stored in `summary_days` of one organization, read through D1. */
const sliceReader = (db: D1Database | D1DatabaseSession, orgKey: string): SliceReader =>
  sliceReaderOf(async (sql, params) => {
    const { results, meta } = await db
      .prepare(sql)
      .bind(...params)
      .all<SliceRow>();
    return { results, rowsRead: meta.rows_read };
  }, orgKey);

type SliceRow = { i: number; version: number; text: string | null };

/**
 * The blocks' slices as stored in `summary_days` of one organization, by one statement per
 * `SLICES_PER_STATEMENT` run by `run` (D1 in the Worker; the benchmark's SQLite file).
 */
export function sliceReaderOf(
  run: (sql: string, params: [string, string]) => Promise<{ results: SliceRow[]; rowsRead: number }>,
  orgKey: string,
): SliceReader {
  return async (requests) => {
    const texts: string[] = [];
    let rowsRead = 0;
    for (let from = 0; from < requests.length; from += SLICES_PER_STATEMENT) {
      const chunk = requests.slice(from, from + SLICES_PER_STATEMENT);
      const { results, rowsRead: read } = await run(
        `SELECT j.key AS i, s.version AS version,
  CAST(substr(s.sorted, (j.value ->> 1) * ${SORTED_WIDTH} + 1, (j.value ->> 2) * ${SORTED_WIDTH}) AS TEXT) AS text
FROM json_each(?2) AS j CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.day = j.value ->> 0`,
        [orgKey, JSON.stringify(chunk.map(({ day, offset, count }) => [day, offset, count]))],
      );
      rowsRead += read;
      const found = new Map(results.map((row) => [row.i, row]));
      for (const [i, request] of chunk.entries()) {
        const row = found.get(i);
        if (
          row === undefined ||
          row.version !== request.version ||
          row.text === null ||
          row.text.length !== request.count * SORTED_WIDTH
        )
          return { texts: null, rowsRead };
        texts.push(row.text);
      }
    }
    return { texts, rowsRead };
  };
}

/**
 * The lower median of each source's values, exactly. A source without blocks' parts: selected from
 * its values. One with: its counts per bucket (the parts' counts, its values counted into the same
 * buckets) give the median's bucket and its rank there; the values of that bucket are its own in
 * the bucket and one slice of each part's sorted values (all read in one round trip, shared by the
 * sources that need the same slice); the median is the value at that rank among them.
 * `stale` when a block changed since it was read (then the caller reads the whole summary again).
 */
export async function resolveMedians(
  sources: readonly Durations[],
  slices: SliceReader,
): Promise<{ values: (number | null)[]; stale: boolean; bucketValues: number; rowsRead: number }> {
  const values: (number | null)[] = [];
  const requests = new Map<string, SliceRequest & { index: number }>();
  const pending: { source: number; rank: number; own: number[]; slices: number[]; size: number }[] = [];
  for (const [index, { values: lists, parts }] of sources.entries()) {
    values.push(null);
    if (parts.length === 0) {
      values[index] = median(lists);
      continue;
    }
    const counts = new Float64Array(DURATION_BUCKETS);
    let n = 0;
    for (const list of lists) {
      n += list.length;
      for (const v of list) {
        const b = durationBucket(v);
        counts[b] = (counts[b] as number) + 1;
      }
    }
    for (const { buckets, counts: those } of parts)
      for (let i = 0; i < buckets.length; i++) {
        const count = those[i] as number;
        const b = buckets[i] as number;
        counts[b] = (counts[b] as number) + count;
        n += count;
      }
    if (n === 0) continue;
    let rank = medianIndex(n);
    let bucket = 0;
    while (rank >= (counts[bucket] ?? 0)) rank -= counts[bucket++] ?? 0;
    const own = lists.flatMap((list) => list.filter((v) => durationBucket(v) === bucket));
    const wanted: number[] = [];
    let size = own.length;
    for (const part of parts) {
      let offset = part.start;
      for (let i = 0; i < part.buckets.length; i++) {
        const b = part.buckets[i] as number;
        const count = part.counts[i] as number;
        if (b < bucket) offset += count;
        else {
          if (b === bucket) {
            const key = `${part.day}:${offset}:${count}`;
            let request = requests.get(key);
            if (request === undefined) {
              request = { day: part.day, version: part.version, offset, count, index: requests.size };
              requests.set(key, request);
            }
            wanted.push(request.index);
            size += count;
          }
          break;
        }
      }
    }
    pending.push({ source: index, rank, own, slices: wanted, size });
  }
  if (pending.length === 0) return { values, stale: false, bucketValues: 0, rowsRead: 0 };
  const asked = [...requests.values()];
  const { texts, rowsRead } = await slices(asked);
  if (texts === null) return { values, stale: true, bucketValues: 0, rowsRead };
  // Each slice decoded once, however many sources share it (a week's and the totals' often do).
  const decoded = texts.map((text) => {
    const into = new Float64Array(text.length / SORTED_WIDTH);
    decodeSorted(text, into, 0);
    return into;
  });
  for (const { source, rank, own, slices: wanted, size } of pending) {
    const bucketValues = new Float64Array(size);
    bucketValues.set(own);
    let at = own.length;
    for (const i of wanted) {
      const slice = decoded[i] as Float64Array;
      bucketValues.set(slice, at);
      at += slice.length;
    }
    values[source] = selectRank(bucketValues, rank);
  }
  return { values, stale: false, bucketValues: asked.reduce((n, r) => n + r.count, 0), rowsRead };
}

const SUMMED = [
  "pullRequests",
  "linesAdded",
  "linesDeleted",
  "serviceIssuesFlagged",
  "serviceIssuesFixed",
  "aiLinesAuthored",
  "pullRequestsWithAiData",
] as const;

const DAY = 86_400_000;
/** Whole UTC days since 1970 of an instant in ms, rounded down also before 1970 (SQLite's `/` truncates). */
const DAY_OF = (ms: string) => `((${ms} - ((${ms} % ${DAY}) + ${DAY}) % ${DAY}) / ${DAY})`;

/**
 * The group key, as SQL: `row` groups a row, `key` (of the group's `row` value) is the key the
 * answer shows. The first day of the merge's UTC day, ISO week (Monday; 1970-01-01 was a Thursday,
 * weekday (d + 3) mod 7 from Monday, as `rules/analytics-summary.ts` computes it) or month, or the
 * repository or author as the row spells it. Integer day arithmetic, so a merge a millisecond
 * before midnight stays on its day. Days and weeks group by their day number and are spelled once
 * per group: `date()` on every row cost as much as the rest of the sums.
 */
function groupKeySql(groupBy: SummaryGroupBy, ms = "m"): { row: string; key: (k: string) => string } {
  const day = DAY_OF(ms);
  const asDate = (k: string) => `date(${k} * 86400, 'unixepoch')`;
  const same = (k: string) => k;
  switch (groupBy) {
    case "day":
      return { row: day, key: asDate };
    case "week":
      return { row: `(${day} - ((${day} + 3) % 7 + 7) % 7)`, key: asDate };
    case "month":
      return { row: `strftime('%Y-%m-01', ${day} * 86400, 'unixepoch')`, key: same };
    case "repo":
      return { row: "repo", key: same };
    case "author":
      return { row: "author", key: same };
  }
}

/** The columns of a pull request the summary reads, all of them in `pull_requests_summary_walk`. */
const COLUMNS = `p.id AS pid, p.repo AS repo, p.author AS author, p.merged_at AS m, p.created_at AS c,
    p.first_reviewed_at AS f, p.last_reviewed_at AS l, p.lines_added AS la, p.lines_deleted AS ld, p.ai_lines AS ai,
    p.posted_findings AS pf, p.fixed_findings AS xf, p.first_finding_at AS ff, p.last_finding_at AS lf`;

/**
 * The statement and its parameters (shared with the benchmark and the tests). The rows are the
 * export's (`storage/analytics.ts`): merged, in the organization (and repository), accessible, and
 * with a completed review in [start, end]. The window's full days served by blocks (`served`: chosen
 * by the statement, which then sends their blocks; none; or read before it in slices, which it
 * checks and answers STALE for any gone since) are not walked. The rest are found the way the
 * export's walk finds them, as disjoint index ranges of the review span (`review-span.ts`): merged
 * inside the window, one range per day not served; merged before it, one range per gap tier of the
 * last review after the merge; merged after it, one per tier of the first review before it. The
 * full days without a block come back as MISSING.
 *
 * What a row costs: the merges inside the window are walked on `pull_requests_summary_walk`,
 * which holds every column the summary reads, so such a row costs its index entry and no table row
 * (with a repository filter, the repositories' walk over the whole window and the table row). The rows merged outside the window, found on the tier walks, read their table row. A
 * candidate settles from its own columns unless its span crosses an edge of the window:
 * - reviews: its first or last completed review lies in the window, or both lie on one side; only
 *   one reviewed on both sides of the window, not inside, reads its reviews;
 * - findings (`pull-request-figures.ts`): its posted findings lie wholly inside the window (the two
 *   counts), or wholly outside (none); only one whose findings straddle an edge reads them.
 * Then per group the count of candidates, the sums of those that qualify and their durations as
 * JSON arrays in no order: the medians are selected by the caller (`assemble`), since every ordered
 * pass in SQL reads the rows again (D1 counts each step of a cursor, a sorter's included, as a row
 * read). One `GROUP BY` sorts the walked rows (about two rows read per row; few once blocks serve
 * the window), each group split into `arrayParts` parts by id. Each walk stops after `maxRows + 1`
 * candidates.
 */
export function summaryStatement(
  q: SummaryQuery | GroupingsQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
  served: BlocksServed = "chosen here",
): { sql: string; params: (string | number)[] } {
  const groupBys = "groupBys" in q ? q.groupBys : [q.groupBy];
  if (groupBys.length === 0) throw new RangeError("a summary needs at least one grouping");
  for (const [name, value, min] of [
    ["maxRows", limits.maxRows, 0],
    ["arrayParts", limits.arrayParts, 1],
    ["bucketsFrom", limits.bucketsFrom, 0],
  ] as const)
    if (!Number.isSafeInteger(value) || value < min)
      throw new RangeError(`${name} must be a whole number of at least ${min}, got ${value}`);
  const params: (string | number)[] = [q.orgKey, q.start, q.end]; // ?1 ?2 ?3
  const bind = (value: string | number): string => `?${params.push(value)}`;
  // Section 21's lists, each bound once as JSON: the repositories' window walk takes the listed
  // ones from the repository index, the authors filter the rows once found (the summary walk holds
  // the author; the tier walks' rows are filtered after their table row is read). One repository
  // is bound as itself: an IN over json_each in each of the ranges cost it about 1 ms more to compile.
  const named = q.repoKeys === null ? null : [...new Set(q.repoKeys)];
  const repo =
    named === null
      ? null
      : named.length === 1
        ? `p.repo_key = ${bind(named[0] as string)}`
        : `p.repo_key IN (SELECT value FROM json_each(${bind(JSON.stringify(named))}))`;
  const authors = q.authorKeys === null ? null : bind(JSON.stringify([...new Set(q.authorKeys)]));
  const byAuthor = authors ? [`lower(p.author) IN (SELECT value FROM json_each(${authors}))`] : [];
  const access = q.accessibleRepoKeys === null ? null : bind(JSON.stringify(q.accessibleRepoKeys));
  const excluded = q.excludedRepoKeys && q.excludedRepoKeys.length > 0 ? bind(JSON.stringify(q.excludedRepoKeys)) : null;

  // Every range takes the filters here (the author's only where the range reads the author).
  const where = (conditions: string[]): string =>
    [
      "p.org_key = ?1",
      ...conditions,
      ...(repo ? [repo] : []),
      ...(access ? [`p.repo_key IN (SELECT value FROM json_each(${access}))`] : []),
      ...(excluded ? [`p.repo_key NOT IN (SELECT value FROM json_each(${excluded}))`] : []),
      "p.first_reviewed_at <= ?3",
      "p.last_reviewed_at >= ?2",
    ].join(" AND ");
  const idRange = (index: string, conditions: string[]): string =>
    `SELECT p.id AS id FROM pull_requests AS p INDEXED BY ${index} WHERE ${where(conditions)}`;
  const tiers = Array.from({ length: LAST_GAP_TIER + 1 }, (_, tier) => ({ tier, bound: GAP_TIER_BOUNDS_MS[tier] }));
  const outside = [
    ...tiers.map(({ tier, bound }) =>
      idRange("pull_requests_after_merge_walk", [
        `p.after_merge_tier = ${tier}`,
        ...(bound === undefined ? [] : [`p.merged_at >= ?2 - ${bound}`]),
        "p.merged_at < ?2",
      ]),
    ),
    ...tiers.map(({ tier, bound }) =>
      idRange("pull_requests_before_merge_walk", [
        `p.before_merge_tier = ${tier}`,
        "p.merged_at > ?3",
        ...(bound === undefined ? [] : [`p.merged_at <= ?3 + ${bound}`]),
      ]),
    ),
  ];
  const viaIds = (ids: string) =>
    `SELECT ${COLUMNS} FROM (SELECT id FROM (${ids}) LIMIT -1) AS t JOIN pull_requests AS p ON p.id = t.id${
      byAuthor.length > 0 ? ` WHERE ${byAuthor.join(" AND ")}` : ""
    }`;
  // The window's merges on the days no block serves (`walked`, below), one index range per day of
  // the organization's summary walk. With a repository filter no block serves (a block holds every
  // repository of its day: reading it to count one would cost more than the repositories' own
  // walk), and the listed repositories' rows are walked over the whole window, as before blocks.
  const dayRange = [`p.merged_at >= MAX(w.d * ${DAY}, ?2)`, `p.merged_at <= MIN(w.d * ${DAY} + ${DAY - 1}, ?3)`];
  const inWindow = repo
    ? viaIds(idRange("pull_requests_repo_merged_walk", ["p.merged_at BETWEEN ?2 AND ?3"]))
    : `SELECT ${COLUMNS} FROM (SELECT d FROM walked ORDER BY d LIMIT -1) AS w
    CROSS JOIN pull_requests AS p INDEXED BY pull_requests_summary_walk ON ${where([...dayRange, ...byAuthor])}`;
  const blocksOk = repo || served === "none" ? "0" : "1";
  const read = Array.isArray(served) ? served : null;
  // The blocks read before this statement (sliced; checked here), or the columns of the blocks it reads.
  const readList = read === null ? "" : bind(JSON.stringify(read));
  // A request served from counts reads the durations instead when its blocks hold few pull requests.
  const few = `(SELECT COALESCE(SUM(n), 0) FROM served) < ${limits.bucketsFrom}`;
  const counted = bucketed({ ...q, groupBys });
  const blockSelect = blockColumns({ ...q, groupBys })
    .map(([name, needed]) =>
      counted && name === "counts"
        ? `IIF(${few}, NULL, s.counts)`
        : counted && name === "durations"
          ? `IIF(${few}, s.durations, NULL)`
          : needed
            ? `s.${name}`
            : "NULL",
    )
    .join(", ");

  // Per row: the exact check and the findings in the window (see above), from the candidate's columns.
  const metrics = `pid, repo, author, m, la, ld, ai, f - c AS tf, m - c AS tm,
    (f >= ?2 OR l <= ?3 OR EXISTS (SELECT 1 FROM reviews AS r
      WHERE r.pr_id = pid AND r.status = 'completed' AND r.completed_at BETWEEN ?2 AND ?3)) AS ok,
    CASE WHEN ff >= ?2 AND lf <= ?3 THEN pf
      WHEN ff IS NULL OR ff > ?3 OR lf < ?2 THEN 0
      ELSE (SELECT COUNT(*) FROM findings AS fi
        WHERE fi.pr_id = pid AND fi.posted = 1 AND fi.created_at BETWEEN ?2 AND ?3) END AS fl,
    CASE WHEN ff >= ?2 AND lf <= ?3 THEN xf
      WHEN ff IS NULL OR ff > ?3 OR lf < ?2 OR xf = 0 THEN 0
      ELSE (SELECT COUNT(*) FROM findings AS fi
        WHERE fi.pr_id = pid AND fi.posted = 1 AND fi.ai_addressed = 1 AND fi.created_at BETWEEN ?2 AND ?3) END AS fx`;
  // Per group: its candidates, and the sums and durations of those that qualify.
  const aggregates = [
    "COUNT(*) AS candidates",
    "COUNT(*) FILTER (WHERE ok) AS pullRequests",
    ...[
      ["la", "linesAdded"],
      ["ld", "linesDeleted"],
      ["fl", "serviceIssuesFlagged"],
      ["fx", "serviceIssuesFixed"],
      ["ai", "aiLinesAuthored"],
    ].map(([column, name]) => `COALESCE(SUM(${column}) FILTER (WHERE ok), 0) AS ${name}`),
    "COUNT(ai) FILTER (WHERE ok) AS pullRequestsWithAiData",
    ...["tf", "tm"].map((column) => `json_group_array(${column}) FILTER (WHERE ok AND ${column} IS NOT NULL) AS ${column}0`),
  ].join(",\n  ");
  const bounded = (rows: string) => `SELECT ${metrics} FROM (${rows} LIMIT ${limits.maxRows + 1})`;

  // The days: from the first to the last merge of the organization in the window (two index
  // seeks, so an endless window costs only the days that hold merges). A full day of the window
  // (from its first to its last millisecond) is served by its block when every review and
  // finding of its pull requests lies in the window (or it has none) and the served blocks hold
  // at most BLOCKS_MAX_PULL_REQUESTS; every other day is walked. A full day without a block is
  // reported (MISSING) for the caller to build.
  const edge = (fn: "MIN" | "MAX") =>
    `(SELECT ${fn}(merged_at) FROM pull_requests INDEXED BY pull_requests_summary_walk
      WHERE org_key = ?1 AND merged_at >= ?2 AND merged_at <= ?3 AND merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL)`;
  const days = `bounds(lo, hi) AS (SELECT ${edge("MIN")}, ${edge("MAX")}),
days(d, last) AS (
  SELECT ${DAY_OF("lo")}, ${DAY_OF("hi")} FROM bounds WHERE lo IS NOT NULL
  UNION ALL SELECT d + 1, last FROM days WHERE d < last
),
full_days AS (SELECT d FROM days WHERE d * ${DAY} >= ?2 AND d * ${DAY} + ${DAY - 1} <= ?3),
stored AS MATERIALIZED (
  SELECT s.day AS day, s.pull_requests AS n, s.lo AS lo, s.hi AS hi
  FROM full_days AS f JOIN summary_days AS s ON s.org_key = ?1 AND s.day = f.d
),
${
  read === null
    ? `usable AS MATERIALIZED (SELECT day, n FROM stored WHERE ${blocksOk} AND (n = 0 OR (lo >= ?2 AND hi <= ?3))),
served AS MATERIALIZED (SELECT day, n FROM usable WHERE (SELECT SUM(n) FROM usable) <= ${limits.blocksMax}),`
    : `served AS MATERIALIZED (
  SELECT s.day AS day, s.pull_requests AS n FROM json_each(${readList}) AS j
  CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.day = j.value ->> 0 AND s.version = j.value ->> 1
),`
}
walked AS (SELECT d FROM days WHERE d NOT IN (SELECT day FROM served))`;
  const noBlock = BLOCK_JSON.map(() => "NULL").join(", ");
  const none = ["0 AS pullRequests", ...SUMMED.slice(1).map((name) => `0 AS ${name}`), "NULL AS tf0", "NULL AS tm0"].join(", ");

  // The rows found once, each row once per grouping (k0, k1, ...), and one GROUP BY, which sorts
  // them; each group split in parts by id. Then the served blocks and the missing days.
  const groupKeys = groupBys.map((g) => groupKeySql(g));
  const keyed = groupKeys.map((key, i) => `SELECT ${i} AS grp, ${key.row} AS k, * FROM metrics`).join("\n  UNION ALL\n  ");
  const keyOf = (k: string) => `CASE grp ${groupKeys.map((key, i) => `WHEN ${i} THEN ${key.key(k)}`).join(" ")} END`;
  const sql = `WITH RECURSIVE ${days},
metrics AS (
  ${bounded(`SELECT * FROM (${inWindow}\n  UNION ALL\n  ${viaIds(unionAll(outside))})`)}
)
SELECT grp AS grouping, ${keyOf("k")} AS key, ${aggregates}, ${BLOCK_JSON.map((c) => `NULL AS ${c}`).join(", ")}, NULL AS version
FROM (${keyed})
GROUP BY grp, k, pid % ${limits.arrayParts}
UNION ALL
${
  read === null
    ? `SELECT ${BLOCK}, v.day, v.n, ${none}, ${blockSelect}, s.version
FROM served AS v JOIN summary_days AS s ON s.org_key = ?1 AND s.day = v.day WHERE v.n > 0`
    : `SELECT ${STALE}, json_array_length(${readList}) - (SELECT COUNT(*) FROM served), 0, ${none}, ${noBlock}, NULL`
}
UNION ALL
SELECT ${MISSING}, d, 0, ${none}, ${noBlock}, NULL FROM full_days WHERE d NOT IN (SELECT day FROM stored)`;
  return { sql, params };
}
