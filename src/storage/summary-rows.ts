import { isTimeGroupBy } from "../rules/analytics-summary";
import type { AnalyticsSummaryGroup, SummaryGroupBy } from "../schemas/analytics-summary";
import type { AnalyticsScope } from "./analytics";
import {
  BLOCK_JSON,
  BLOCK_MAX_BYTES,
  BLOCK_MAX_PULL_REQUESTS,
  BLOCKS_MAX_PULL_REQUESTS,
  type BlockColumns,
  MONTH_BLOCK_MAX_PULL_REQUESTS,
} from "./summary-days";

/**
 * What the summary's statement (`summary-statement.ts`) is asked and answers: the query, the
 * limits that shape it, which of a block's columns a request reads, and the kinds of row it sends
 * (`summary-assemble.ts` adds them up).
 */

/** What the summary needs, in storage terms: the export's scope (its statement input without the page), and the grouping. */
export type SummaryQuery = AnalyticsScope & { groupBy: SummaryGroupBy };

/** Several groupings of one scope's rows (the dashboard's week, repository and author). */
export type GroupingsQuery = AnalyticsScope & { groupBys: readonly SummaryGroupBy[] };

/** Rows per slices statement: each a seek, one or two slices, and about 40 bytes of bound JSON. */
export const SLICES_PER_STATEMENT = 2_000;

/**
 * Bytes per slices statement, of its answer (one JSON value) and of its bound list of rows: D1
 * refuses a value over 1,000,000 bytes (local D1 does not). A row's slices are at most its sorted
 * values, and a block's text is at most `BLOCK_MAX_BYTES` (900,000), so one row alone always fits
 * (`summary-medians.ts` `statementsOf` counts them). Counted as builds write them, hexadecimal
 * digits: a row damaged to bytes that JSON escapes could still make its statement's answer larger.
 */
export const SLICES_BYTES_PER_STATEMENT = BLOCK_MAX_BYTES;

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
   * As `blockSliceDays`, for a request of the organization's blocks that reads their counts per
   * duration bucket instead of their durations (`bucketed`). A day's counts weigh about a sixtieth
   * of its durations, so a year of them fits one statement, the walk's own; but that statement's
   * answer (500 KB of a year's counts at 1M) and the JavaScript adding it up then hold the thread in
   * one piece, and another organization's export page behind a looping one-year summary waited 3.8x
   * to 4.2x its time alone (issue 31). Read in slices of two months, 1.1x to 1.8x, for about a
   * quarter more time of the year's summary.
   */
  countSliceDays: number;
  /**
   * As `countSliceDays`, for a window that is read whole up to this many full days: one of listed
   * repositories (section 21: their whole months come from their month blocks only when the
   * statement chooses its blocks itself; sliced, a list of three took 1.49x one repository's time),
   * or one the isolate expects to hold fewer than `countSliceFrom` pull requests (`SummaryPlans`:
   * its answer is small, and the statement reads the blocks' durations when they are few).
   */
  countWholeDays: number;
  /** A window of the organization's counts expected to hold at least this many pull requests, or not yet seen, is read in slices of `countSliceDays`. */
  countSliceFrom: number;
  /**
   * A request served from the blocks' counts (`bucketed`) whose one statement serves fewer pull
   * requests than this reads their durations instead: their JSON costs less than the second round
   * trip that reads the medians' buckets (a small organization's default window).
   */
  bucketsFrom: number;
  /**
   * And reads their durations too when they hold fewer than this many pull requests a block on
   * average (a listed repository's blocks of a few pull requests a day): then the counts weigh
   * about what the durations do, and the buckets' slices are a second round trip for nothing.
   */
  bucketsPerBlock: number;
  /** The most pull requests one request reads from blocks (`summary-days.ts` `BLOCKS_MAX_PULL_REQUESTS`); above it the window is walked. */
  blocksMax: number;
  /** The most bytes of JSON one block stores (`summary-days.ts` `BLOCK_MAX_BYTES`). */
  dayBlockMaxBytes: number;
  /** The most pull requests a listed repository's month block holds (`summary-days.ts` `MONTH_BLOCK_MAX_PULL_REQUESTS`; lower in tests). */
  monthBlockMax: number;
  /**
   * Whether a request grouped by repository or author alone reads the window's whole months from
   * month blocks per group (`summary-group-months.ts`), and builds those missing. Off in tests that
   * compare with the day blocks alone.
   */
  groupMonths: boolean;
  /** Whether those months are also read from, and made into, spans of whole months (`summary-group-spans.ts`). */
  groupSpans: boolean;
  /**
   * Whether a full day whose block holds pull requests that straddle an edge of the window (a
   * review or posted finding outside it) is served from its block with corrections: the block
   * without them (`REMOVED_FROM`), and them walked. Off: such a day is walked whole (tests compare).
   */
  corrections: boolean;
  /** The most rows of blocks (each one or two slices) one statement of the medians' slices reads (`SLICES_PER_STATEMENT`; lower in tests). */
  slicesPerStatement: number;
  /** The most bytes one such statement answers, and binds (`SLICES_BYTES_PER_STATEMENT`: D1's 1,000,000 per value; lower in tests). */
  sliceBytesPerStatement: number;
  /**
   * A turn of the event loop on either side of a statement once this many ms have passed since the
   * last (`taking-turns.ts`; 0 in tests of the turns); unset, the isolate's default (`TURN_EVERY_MS`,
   * 4 in the test pool).
   */
  turnEveryMs?: number;
}

export const SUMMARY_LIMITS: SummaryLimits = {
  maxRows: 8_000_000,
  arrayParts: 8,
  dayBlockMax: BLOCK_MAX_PULL_REQUESTS,
  blockSliceDays: 92,
  countSliceDays: 61,
  countWholeDays: 366,
  countSliceFrom: 20_000,
  bucketsFrom: 2_000,
  bucketsPerBlock: 20,
  blocksMax: BLOCKS_MAX_PULL_REQUESTS,
  dayBlockMaxBytes: BLOCK_MAX_BYTES,
  monthBlockMax: MONTH_BLOCK_MAX_PULL_REQUESTS,
  groupMonths: true,
  groupSpans: true,
  corrections: true,
  slicesPerStatement: SLICES_PER_STATEMENT,
  sliceBytesPerStatement: SLICES_BYTES_PER_STATEMENT,
};

/**
 * Which blocks the statement serves: those it chooses itself (one statement: it reads them too),
 * none, or those read before it in slices (`[day, version]`, which it checks). "walk" serves none
 * either, in a shorter statement: one index range for the window's merges, no days, no block
 * built after it (`SummaryPlans`).
 */
export type BlocksServed = "chosen here" | "none" | "walk" | [repoKey: string, day: number, version: number][];

/**
 * A block's columns and whether the request reads each: the day's totals always; for an
 * unfiltered request of time groupings only, the durations' counts per bucket (`bucketed`),
 * otherwise the durations; the repositories' and authors' sums and indexes for those groupings;
 * with a filter, all of them.
 */
export function blockColumns(q: GroupingsQuery): [keyof BlockColumns, boolean][] {
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
export const isFiltered = (q: AnalyticsScope): boolean =>
  q.accessibleRepoKeys !== null || (q.excludedRepoKeys?.length ?? 0) > 0 || q.authorKeys !== null;

/**
 * Whether the blocks' medians come from their counts per bucket (`resolveMedians`): an unfiltered
 * request of time groupings only. A repository or author grouping needs each group's durations of
 * every day (as many as a day's counts per group would be), and a filter each pull request's.
 */
export const bucketed = (q: GroupingsQuery): boolean => !isFiltered(q) && q.groupBys.every(isTimeGroupBy);

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
  /** As JSON from the statement; as arrays from the Worker's own rows (`summary-edges.ts`). */
  tf0: string | number[] | null;
  tm0: string | number[] | null;
  /** A block's version (`summary_days.version`; null in other rows). */
  version: number | null;
  /** A block's or a missing block's repository key ('' for the organization's; null in other rows). */
  rk: string | null;
  /** A month block's days (`summary_months.days`; null in other rows). */
  days: string | null;
} & { [column in keyof BlockColumns]: string | null };

export const BLOCK = -1;

export const MISSING = -2;

/** A listed repository's month block (`key` the month's first UTC day, `days` its content). */
export const MONTH_BLOCK = -4;

/** A whole month of the window without a listed repository's month block (`key` its first day). */
export const MISSING_MONTH = -5;

/**
 * A day the isolate keeps as an edge day (`summary-edges.ts`) whose block is still stored as kept:
 * the statement left it out of its corrections (`candidates` 1, `EDGE_CORRECTED`: a served day) or
 * of its tier walks (2, `EDGE_OUTSIDE`: a day wholly outside the window), for the Worker to count.
 * `key` the day, `rk` its repository key.
 */
export const KNOWN_USED = -6;

/**
 * A day whose edges the statement checked itself (`candidates` as `KNOWN_USED`), with its block's
 * version (null: no block): the Worker may read it as an edge day for the next request.
 */
export const EDGE_SQL = -7;

/** How many of the blocks read before the statement (`served`) are gone or rebuilt since (`key`). */
export const STALE = -3;

/**
 * What the served blocks counted of their pull requests that straddle an edge of the window, per
 * group of grouping `g`: a row of kind `REMOVED_FROM - g`, whose sums and durations the caller
 * takes away from group `key` (those pull requests are walked and counted as the window counts
 * them). Below every other kind, whatever the number of groupings.
 */
export const REMOVED_FROM = -100;

/** The grouping whose group a row takes away from (`REMOVED_FROM`), or null for any other row. */
export const removedFrom = (grouping: number): number | null => (grouping <= REMOVED_FROM ? REMOVED_FROM - grouping : null);

/** The figures that add up across rows and blocks (the two medians do not). */
export const SUMMED = [
  "pullRequests",
  "linesAdded",
  "linesDeleted",
  "serviceIssuesFlagged",
  "serviceIssuesFixed",
  "aiLinesAuthored",
  "pullRequestsWithAiData",
] as const;
