import { DAY_MS } from "../lib/time";
import { durationBucketSql, SORTED_OFFSET, sortedValueSql } from "../rules/duration-buckets";

/**
 * The summary's day blocks (`summary_days`, d1-schema.ts; issue 31): per organization and UTC day
 * of the merge (and per repository and day, for a summary of listed repositories: `repo_key`, ''
 * in the organization's blocks), what the summary reads of each merged and reviewed pull request of that day, as
 * one row. A window's full days whose pull requests have every completed review and every posted
 * finding inside the window are read as their blocks (one row read per day instead of one or two
 * per pull request, and no per-row work in the database); every other row is found and checked as
 * before (`analytics-summary.ts`).
 *
 * Exact by construction:
 * - a block is written by one statement from `pull_requests` (atomic: no writer runs between
 *   its read and its write), and triggers (migration 0012) delete it whenever a pull request row of
 *   its day is inserted, deleted or changes a column the summary reads, so a stored block always
 *   equals what a build would write now;
 * - a pull request of a block whose reviews and posted findings all lie inside the window is
 *   listed by the export (it has a completed review in the window), and its findings in the window
 *   are all of its posted ones: its figures do not depend on the window. When that holds for every
 *   pull request of the day (`lo`, `hi`) the block serves the day as it is; otherwise it serves the
 *   day with corrections for the pull requests it does not hold for, which are checked one by one
 *   (`summary-statement.ts` `CORRECTIONS`; `SummaryLimits.corrections` off: the day is walked).
 */

/**
 * At most this many pull requests in one day's block: its text stays below D1's 1 MB cap on a row
 * (about 70 bytes each: 45 of JSON, 26 of sorted durations).
 */
export const BLOCK_MAX_PULL_REQUESTS = 12_000;

/**
 * At most this many bytes of text in one block (its text columns together): D1 refuses a row over
 * 1,000,000 bytes (local D1 does not). A day over it (a mass update across many repositories: about
 * 125 bytes per pull request when each has its own) gets an empty marker and is walked.
 */
export const BLOCK_MAX_BYTES = 900_000;

/**
 * At most this many pull requests read from blocks by one summary (about 45 bytes of JSON each
 * when a request reads their durations, held by the Worker while it adds them up): above it the window's days are walked as without
 * blocks, and the statement's bound (`SummaryLimits.maxRows`) applies. A year of an organization
 * of a million pull requests holds about 475,000. Blocks read in slices stop sending their data at
 * the bound (a running sum in the slice's statement), so no more than this is ever held.
 */
export const BLOCKS_MAX_PULL_REQUESTS = 750_000;

/** Sums of a set of pull requests: count, lines added, lines deleted, flagged, fixed, AI lines, pull requests with AI data. */
export type BlockSums = [n: number, la: number, ld: number, fl: number, fx: number, al: number, nal: number];

/**
 * A block's JSON columns. Sums are over the day's pull requests (null lines and AI lines skipped,
 * as section 12 sums them); the per pull request columns are in one order throughout.
 * - `totals`: the day's sums;
 * - `repos`: per repository, `[index, key, name as the rows spell it, ...sums]`;
 * - `authors`: per author, `[index, lower-cased login, login as the rows spell it, ...sums]`;
 * - `repo_of`, `author_of`: each pull request's repository and author (indexes into `repos` and
 *   `authors`);
 * - `figures`: each pull request's lines added and deleted, AI lines (null: no AI data), and
 *   findings flagged and fixed when all of them lie in the window;
 * - `durations`: each pull request's two durations (ms; null when its creation time is).
 * - `counts`: per duration (to first review, to merge), the buckets (`rules/duration-buckets.ts`)
 *   that hold any of the day's values, ascending, and how many each holds (two flat arrays, which
 *   parse and loop faster than pairs).
 * Beside them, `sorted` (not JSON: fixed-width text, `sortedValueSql`, stored as a BLOB so that a
 * slice of it is found by its byte offset, not by counting characters) holds the day's durations to
 * first review in ascending order, then those to merge: the values of one bucket are one slice.
 * A request reads only the columns it needs: an unfiltered time grouping the totals and the counts
 * (then the slices of its medians' buckets: `summary-medians.ts` `resolveMedians`); otherwise the durations,
 * by repository `repos`, `repo_of` and the durations (at 1,300 pull requests a day over 200
 * repositories and 400 authors, the per repository and author sums weigh more than the durations).
 */
export interface BlockColumns {
  totals: BlockSums;
  repos: [number, string, string, ...BlockSums][] | null;
  authors: [number, string | null, string | null, ...BlockSums][] | null;
  repo_of: number[] | null;
  author_of: number[] | null;
  figures:
    | [
        linesAdded: (number | null)[],
        linesDeleted: (number | null)[],
        aiLines: (number | null)[],
        flagged: number[],
        fixed: number[],
      ]
    | null;
  durations: [toFirstReview: (number | null)[], toMerge: (number | null)[]] | null;
  counts: [tfBuckets: number[], tfCounts: number[], tmBuckets: number[], tmCounts: number[]] | null;
}

/** A block's JSON columns, in the table's order. */
export const BLOCK_JSON = [
  "totals",
  "counts",
  "repos",
  "authors",
  "repo_of",
  "author_of",
  "figures",
  "durations",
] as const satisfies readonly (keyof BlockColumns)[];

/**
 * Builds the blocks of the given UTC days (day numbers) of one organization, in one statement,
 * keeping any already stored: a stored block equals what this build would write (every write to
 * its day deletes it), and replacing it with a new version would make a summary between its
 * counts and its slices read its window again. A day without merged and reviewed pull requests
 * gets an empty block (so it is not walked again); a day of more than `BLOCK_MAX_PULL_REQUESTS`
 * pull requests or `BLOCK_MAX_BYTES` bytes of text, or with a duration too far from zero to encode
 * (`rules/duration-buckets.ts` `SORTED_OFFSET`), gets a block without content (its `lo` null: never
 * served, always walked, and not built again until its day changes). `?1` is
 * the organization key, `?2` the days as a JSON array, `?3` the repository's key (`byRepo`: the
 * blocks of that repository's pull requests, found on its own index) or ''.
 */
/** A set of pull requests' sums as SQL over `BLOCK_FIGURES`' columns, in `BlockSums` order (null lines and AI lines skipped). */
export const BLOCK_SUMS = [
  "COUNT(*)",
  "COALESCE(SUM(la), 0)",
  "COALESCE(SUM(ld), 0)",
  "SUM(fl)",
  "SUM(fx)",
  "COALESCE(SUM(al), 0)",
  "COUNT(al)",
];
const SUMS = BLOCK_SUMS.join(", ");

/**
 * What a block reads of a pull request `p` beside its group, as SQL columns: lines added and
 * deleted, AI lines, posted and fixed findings (none without a first finding), and the two
 * durations (also the month blocks per group's, `summary-group-months.ts`).
 */
export const BLOCK_FIGURES = `p.lines_added AS la, p.lines_deleted AS ld, p.ai_lines AS al,
    CASE WHEN p.first_finding_at IS NULL THEN 0 ELSE p.posted_findings END AS fl,
    CASE WHEN p.first_finding_at IS NULL THEN 0 ELSE p.fixed_findings END AS fx,
    p.first_reviewed_at - p.created_at AS tf, p.merged_at - p.created_at AS tm`;

/**
 * A pull request `p`'s earliest and latest completed review or posted finding, as SQL: a block's
 * `lo` and `hi` are their least and greatest over its day. A pull request whose two lie in a window
 * counts in it exactly as its block counts it; one whose do not straddles an edge of the window
 * (`summary-statement.ts`: its block is served without it, and it is walked).
 */
export const PULL_REQUEST_LO = "MIN(p.first_reviewed_at, COALESCE(p.first_finding_at, p.first_reviewed_at))";
export const PULL_REQUEST_HI = "MAX(p.last_reviewed_at, COALESCE(p.last_finding_at, p.last_reviewed_at))";

/**
 * The first (`MIN`) or last (`MAX`) merge of the organization `?1` from `?2` to `?3` (ms), as a SQL
 * subquery: the days a summary walks or plans run from one to the other (two index seeks).
 */
export const mergeEdgeSql = (fn: "MIN" | "MAX") =>
  `(SELECT ${fn}(merged_at) FROM pull_requests INDEXED BY pull_requests_summary_walk
      WHERE org_key = ?1 AND merged_at >= ?2 AND merged_at <= ?3 AND merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL)`;
export const buildSummaryDaysSql = (
  maxPerDay: number = BLOCK_MAX_PULL_REQUESTS,
  maxBytes: number = BLOCK_MAX_BYTES,
  byRepo = false,
): string => `WITH
wanted AS (SELECT DISTINCT CAST(value AS INTEGER) AS day FROM json_each(?2)),
found AS MATERIALIZED (
  SELECT w.day AS day, p.repo_key AS rk, p.repo AS rn, lower(p.author) AS ak, p.author AS an,
    ${BLOCK_FIGURES},
    ${PULL_REQUEST_LO} AS lo,
    ${PULL_REQUEST_HI} AS hi
  FROM wanted AS w
  CROSS JOIN pull_requests AS p INDEXED BY ${byRepo ? "pull_requests_repo_merged_walk" : "pull_requests_summary_walk"}
  ON p.org_key = ?1${byRepo ? " AND p.repo_key = ?3" : ""} AND p.merged_at >= w.day * ${DAY_MS} AND p.merged_at < (w.day + 1) * ${DAY_MS}
    AND p.merged_at IS NOT NULL AND p.first_reviewed_at IS NOT NULL
),
bucket_counts AS (
  SELECT day, 0 AS metric, ${durationBucketSql("tf")} AS b, COUNT(*) AS c FROM found WHERE tf IS NOT NULL GROUP BY day, b
  UNION ALL
  SELECT day, 1, ${durationBucketSql("tm")} AS b, COUNT(*) FROM found WHERE tm IS NOT NULL GROUP BY day, b
),
counts AS (
  SELECT day, json_array(
    json(json_group_array(b ORDER BY b) FILTER (WHERE metric = 0)),
    json(json_group_array(c ORDER BY b) FILTER (WHERE metric = 0)),
    json(json_group_array(b ORDER BY b) FILTER (WHERE metric = 1)),
    json(json_group_array(c ORDER BY b) FILTER (WHERE metric = 1))
  ) AS counts
  FROM bucket_counts GROUP BY day
),
ranked AS MATERIALIZED (
  SELECT *, dense_rank() OVER (PARTITION BY day ORDER BY rk, rn) - 1 AS ri,
    dense_rank() OVER (PARTITION BY day ORDER BY an) - 1 AS ui
  FROM found
),
repos AS (
  SELECT day, json_group_array(json(entry)) AS r
  FROM (SELECT day, json_array(ri, rk, rn, ${SUMS}) AS entry FROM ranked GROUP BY day, ri, rk, rn) GROUP BY day
),
authors AS (
  SELECT day, json_group_array(json(entry)) AS a
  FROM (SELECT day, json_array(ui, ak, an, ${SUMS}) AS entry FROM ranked GROUP BY day, ui, ak, an) GROUP BY day
),
columns AS (
  SELECT day, COUNT(*) AS n, MIN(lo) AS lo, MAX(hi) AS hi, json_array(${SUMS}) AS t,
    json_group_array(ri) AS repo_of, json_group_array(ui) AS author_of,
    json_array(json_group_array(la), json_group_array(ld), json_group_array(al), json_group_array(fl), json_group_array(fx)) AS figures,
    json_array(json_group_array(tf), json_group_array(tm)) AS durations,
    CAST(COALESCE(group_concat(IIF(tf IS NULL, NULL, ${sortedValueSql("tf")}), '' ORDER BY tf), '')
      || COALESCE(group_concat(IIF(tm IS NULL, NULL, ${sortedValueSql("tm")}), '' ORDER BY tm), '') AS BLOB) AS sorted,
    MAX(COALESCE(MAX(abs(tf)), 0), COALESCE(MAX(abs(tm)), 0)) < ${SORTED_OFFSET} AS encodable
  FROM ranked GROUP BY day
),
built AS (
  SELECT w.day AS day, COALESCE(c.n, 0) AS n, c.lo AS lo, c.hi AS hi, c.t AS totals, IIF(c.n IS NULL, NULL, COALESCE(k.counts, '[[],[],[],[]]')) AS counts, c.sorted AS sorted,
    r.r AS repos, a.a AS authors, c.repo_of AS repo_of, c.author_of AS author_of, c.figures AS figures,
    c.durations AS durations, COALESCE(c.encodable, 1) AS encodable
  FROM wanted AS w
  LEFT JOIN columns AS c ON c.day = w.day
  LEFT JOIN counts AS k ON k.day = w.day
  LEFT JOIN repos AS r ON r.day = w.day
  LEFT JOIN authors AS a ON a.day = w.day
)
INSERT OR IGNORE INTO summary_days (org_key, repo_key, day, pull_requests, lo, hi, ${BLOCK_TEXT.join(", ")}, version)
SELECT ?1, ?3, day, n, IIF(fits, lo, NULL), IIF(fits, hi, NULL), ${BLOCK_TEXT.map((c) => `IIF(fits, ${c}, NULL)`).join(", ")},
  abs(random() % 9007199254740991)
FROM (
  SELECT *, encodable AND n <= ${maxPerDay}
    AND ${BLOCK_TEXT.map((c) => `COALESCE(length(CAST(${c} AS BLOB)), 0)`).join(" + ")} <= ${maxBytes} AS fits
  FROM built
)`;

/** Every text column of a block: the JSON ones and the sorted durations. */
const BLOCK_TEXT = [...BLOCK_JSON, "sorted"] as const;

/**
 * Builds the blocks of `days` (UTC day numbers) of the organization, or of one of its repositories
 * (`repoKey`: the repository's key; '' or absent, the organization's); see `buildSummaryDaysSql`.
 */
export async function buildSummaryDays(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  days: readonly number[],
  {
    maxPerDay = BLOCK_MAX_PULL_REQUESTS,
    maxBytes = BLOCK_MAX_BYTES,
    repoKey = "",
  }: { maxPerDay?: number; maxBytes?: number; repoKey?: string } = {},
): Promise<void> {
  if (days.length === 0) return;
  for (const [name, value] of [
    ["maxPerDay", maxPerDay],
    ["maxBytes", maxBytes],
  ] as const)
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number, got ${value}`);
  await db
    .prepare(buildSummaryDaysSql(maxPerDay, maxBytes, repoKey !== ""))
    .bind(orgKey, JSON.stringify(days), repoKey)
    .run();
}

/** What the summary adds up from blocks: whether each repository and author of a block passes the request's filters. */
export interface BlockFilter {
  /** Repository keys the request may count (null: every one). */
  repo: ((key: string) => boolean) | null;
  /** Lower-cased author logins the request counts (null: every one). */
  author: ((key: string | null) => boolean) | null;
}

/**
 * At most this many pull requests in one repository's month block (`summary_months`): a month
 * block sends every duration of its month (no counts per bucket), which costs less than its days'
 * rows only for a repository of a few dozen pull requests a day. A busier month gets a marker
 * (never served; its days are served by their own blocks, with counts) until a write to it.
 */
export const MONTH_BLOCK_MAX_PULL_REQUESTS = 2_000;

/** The UTC day number of the first day of the calendar month that holds UTC day `day`. */
export function monthStartDay(day: number): number {
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS;
}

/** The last UTC day of the calendar month that holds UTC day `day`. */
export function monthLastDay(day: number): number {
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS - 1;
}

/** The calendar months that meet the UTC days from `first` to `last` (inclusive), as `[first day, last day]`. */
export function monthsMeeting(first: number, last: number): [number, number][] {
  const months: [number, number][] = [];
  for (let mo = monthStartDay(first); mo <= last; mo = monthLastDay(mo) + 1) months.push([mo, monthLastDay(mo)]);
  return months;
}

/** The whole calendar months between UTC days `first` and `last` (inclusive), as `[first day, last day]`. */
export function wholeMonths(first: number, last: number): [number, number][] {
  return monthsMeeting(first, last).filter(([mo, end]) => mo >= first && end <= last);
}

/**
 * Makes one repository's month blocks from its day blocks, in one statement, keeping any already
 * stored (as `buildSummaryDaysSql`). A month is made only when every one of its days has a block
 * (a day without one makes nothing: a later summary reports it again, after building the day);
 * it is a marker (`lo` null, never served) when a day's block has no content (`lo` null with pull
 * requests) or the month holds more than `maxPerMonth` pull requests or `maxBytes` bytes.
 * `?1` the organization key, `?2` the repository key, `?3` the months as JSON `[[first, last], ...]`.
 */
export const buildSummaryMonthsSql = (
  maxPerMonth: number = MONTH_BLOCK_MAX_PULL_REQUESTS,
  maxBytes: number = BLOCK_MAX_BYTES,
): string => `WITH
wanted AS (SELECT DISTINCT CAST(value ->> 0 AS INTEGER) AS mo, CAST(value ->> 1 AS INTEGER) AS last FROM json_each(?3)),
made AS (
  SELECT w.mo AS mo, COUNT(*) AS blocks, w.last - w.mo + 1 AS length, SUM(d.pull_requests) AS n,
    MIN(d.lo) AS lo, MAX(d.hi) AS hi,
    COUNT(*) FILTER (WHERE d.pull_requests > 0 AND (d.lo IS NULL OR d.totals IS NULL OR d.durations IS NULL)) AS unfit,
    json('[' || json_group_array(d.day ORDER BY d.day) FILTER (WHERE d.pull_requests > 0)
      || ',[' || ${flatten("d.totals")} || '],[' || ${flatten("d.durations -> 0")} || '],[' || ${flatten("d.durations -> 1")} || ']]') AS days
  FROM wanted AS w
  CROSS JOIN summary_days AS d ON d.org_key = ?1 AND d.repo_key = ?2 AND d.day BETWEEN w.mo AND w.last
  GROUP BY w.mo
)
INSERT OR IGNORE INTO summary_months (org_key, repo_key, month, pull_requests, lo, hi, days)
SELECT ?1, ?2, mo, n, IIF(fits, lo, NULL), IIF(fits, hi, NULL), IIF(fits AND n > 0, days, NULL)
FROM (
  SELECT *, unfit = 0 AND n <= ${maxPerMonth} AND COALESCE(length(CAST(days AS BLOB)), 0) <= ${maxBytes} AS fits
  FROM made WHERE blocks = length
)`;

/** The elements of a JSON array column of the month's days with pull requests, in day order, as one list's text. */
const flatten = (array: string) =>
  `COALESCE(group_concat(substr(${array}, 2, length(${array}) - 2), ',' ORDER BY d.day) FILTER (WHERE d.pull_requests > 0), '')`;

/**
 * A month block's `days` (JSON): the days with pull requests (ascending), their day blocks' totals
 * one after the other (`BlockSums`, seven a day), and their durations to first review and to merge
 * one after the other (a day's as many as its pull requests, null where the creation time is).
 * Flat lists parse and add up faster than a list per day. Day blocks folded into this shape by the
 * summary's statement (`summary-statement.ts` `foldedBlocks`) list their days in no order, the four
 * lists aligned.
 */
export type MonthBlock = [days: number[], sums: number[], toFirstReview: (number | null)[], toMerge: (number | null)[]];

/** Makes the month blocks of `months` (`[first day, last day]`) of one repository; see `buildSummaryMonthsSql`. */
export async function buildSummaryMonths(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  repoKey: string,
  months: readonly (readonly [number, number])[],
  { maxPerMonth = MONTH_BLOCK_MAX_PULL_REQUESTS, maxBytes = BLOCK_MAX_BYTES }: { maxPerMonth?: number; maxBytes?: number } = {},
): Promise<void> {
  if (months.length === 0) return;
  if (repoKey === "") throw new RangeError("month blocks are a listed repository's; the organization has none");
  for (const [name, value] of [
    ["maxPerMonth", maxPerMonth],
    ["maxBytes", maxBytes],
  ] as const)
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number, got ${value}`);
  await db.prepare(buildSummaryMonthsSql(maxPerMonth, maxBytes)).bind(orgKey, repoKey, JSON.stringify(months)).run();
}
