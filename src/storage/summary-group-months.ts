import { DAY_MS } from "../lib/time";
import { durationBucketSql, SORTED_OFFSET, SORTED_WIDTH, sortedValueSql } from "../rules/duration-buckets";
import { BLOCK_FIGURES, BLOCK_MAX_BYTES, BLOCK_SUMS, type BlockSums, monthStartDay } from "./summary-days";
import { type GroupingsQuery, isFiltered } from "./summary-rows";

/**
 * The summary's month blocks per group (`summary_group_month_heads`, `summary_group_months` and
 * `summary_group_month_buckets`, d1-schema.ts; issue 31): for a summary grouped by repository or
 * by author, a run of a calendar month's days (the whole month, or at a window's edge the days it
 * can serve, from and to a week's boundary: `summary-group-plan.ts` `alignedRun`) as one row of each group's sums and
 * counts of durations per bucket, instead of its day blocks' every duration and pull request's
 * group. The medians' buckets are then read as slices of the groups' sorted durations, and the
 * totals' from each bucket's values of every group (`summary-medians.ts`), as a time grouping
 * reads its days'.
 *
 * Exact by construction, as the day blocks are (`summary-days.ts`): a run is made, in one batch,
 * only when each of its days has the organization's day block with content, from the same rows
 * those blocks hold, and its head records the blocks' versions; deleting one of those day blocks
 * (every write to a pull request of the day does) deletes the month's heads (migration 0015). A
 * head that stands therefore holds its days as their day blocks do, and a summary serves it exactly
 * when it would serve all of those day blocks: each of them in the window (`lo`, `hi` of the run).
 * The summary then checks those day blocks' versions in its statement, as it checks the day blocks
 * it read before it, so a write in between makes it read again; its slices check the head's
 * version, so a rebuild in between does too.
 */

/** The kinds of grouping a month block per group serves. */
export type GroupKind = "repo" | "author";

/**
 * One group of a month (`groups` in the head): its key as the rows spell it (the answer's group
 * key), its sums, and per duration the buckets that hold its values (ascending) and their counts.
 */
export type GroupEntry = [
  key: string,
  ...sums: BlockSums,
  tfBuckets: number[],
  tfCounts: number[],
  tmBuckets: number[],
  tmCounts: number[],
];

/** A served head: its month, kind and version, the day blocks it stands for, and its groups (null for an empty month). */
export interface GroupMonth {
  kind: GroupKind;
  /** The month's first day; a span's: its first month's. */
  month: number;
  /** The first and last day of the head's run (its rows' key beside the month), or of a span (`summary-group-spans.ts`). */
  first: number;
  last: number;
  /** A span of whole months (`summary_group_span_heads`), not a month's run. */
  span: boolean;
  version: number;
  pullRequests: number;
  /** The head's `lo` and `hi` (it serves the window: both lie in it; null when it has no pull request). */
  lo: number | null;
  hi: number | null;
  days: [day: number, version: number][];
  groups: GroupEntry[] | null;
  /** A span's rows of every group together of at least this many values are sorted (its head's `sorted_from`); null: none is, or a month's run. */
  sortedFrom: number | null;
}

/**
 * The kinds of month block per group that serve a request: its groupings, when every one is by
 * repository or author and it counts every pull request of the organization's blocks (no list, no
 * filter); null otherwise.
 */
export function groupMonthKinds(q: GroupingsQuery): GroupKind[] | null {
  if (q.repoKeys !== null || isFiltered(q)) return null;
  const kinds: GroupKind[] = [];
  for (const groupBy of q.groupBys) {
    if (groupBy !== "repo" && groupBy !== "author") return null;
    if (!kinds.includes(groupBy)) kinds.push(groupBy);
  }
  return kinds.length > 0 ? kinds : null;
}

const COLUMN: Record<GroupKind, string> = { repo: "p.repo", author: "p.author" };

/**
 * The runs of days (`?3`: JSON `[[first day, last day, month's first day], ...]`, one run per month)
 * each of whose days has the organization's day block.
 */
const READY = `wanted AS (
  SELECT DISTINCT CAST(value ->> 0 AS INTEGER) AS first, CAST(value ->> 1 AS INTEGER) AS last, CAST(value ->> 2 AS INTEGER) AS mo
  FROM json_each(?3)
),
ready AS MATERIALIZED (
  SELECT w.mo AS mo, w.first AS first, w.last AS last, COUNT(*) AS blocks, SUM(d.pull_requests) AS n, MIN(d.lo) AS lo,
    MAX(d.hi) AS hi, COUNT(*) FILTER (WHERE d.pull_requests > 0 AND d.lo IS NULL) AS unfit,
    json_group_array(json_array(d.day, d.version) ORDER BY d.day) AS days
  FROM wanted AS w
  CROSS JOIN summary_days AS d ON d.org_key = ?1 AND d.repo_key = '' AND d.day BETWEEN w.first AND w.last
  GROUP BY w.mo
  HAVING blocks = w.last - w.first + 1
)`;

/** The pull requests of the ready runs, with their group (`kind`), as the day blocks take them. */
const found = (kind: GroupKind) => `found AS MATERIALIZED (
  SELECT r.mo AS mo, r.first AS fd, r.last AS ldy, ${COLUMN[kind]} AS g, ${BLOCK_FIGURES}
  FROM ready AS r
  CROSS JOIN pull_requests AS p INDEXED BY pull_requests_summary_walk
  ON p.org_key = ?1 AND p.merged_at >= r.first * ${DAY_MS} AND p.merged_at < (r.last + 1) * ${DAY_MS}
    AND p.merged_at IS NOT NULL AND p.first_reviewed_at IS NOT NULL
  WHERE r.unfit = 0
)`;

/**
 * The group rows of the ready months (`?2` the kind, `?4` the version), after the statement before
 * it deleted the months' old ones: each group's durations to first review ascending, then those to
 * merge, as a day block's `sorted`.
 */
export const buildGroupRowsSql = (kind: GroupKind, maxBytes: number = BLOCK_MAX_BYTES): string => `WITH ${READY},
${found(kind)}
INSERT INTO summary_group_months (org_key, kind, month, first_day, last_day, group_key, version, sorted)
SELECT ?1, ?2, mo, fd, ldy, g, ?4,
  CAST(COALESCE(group_concat(IIF(tf IS NULL, NULL, ${sortedValueSql("tf")}), '' ORDER BY tf), '')
    || COALESCE(group_concat(IIF(tm IS NULL, NULL, ${sortedValueSql("tm")}), '' ORDER BY tm), '') AS BLOB)
FROM found
WHERE g IS NOT NULL AND ?5 IS NOT NULL
GROUP BY mo, fd, ldy, g
HAVING ${GROUP_ROW_BYTES} <= ${maxBytes}`;

/** A group row's bytes (a bucket row's: `COUNT(*)` values), from its values' count: rows over D1's cap are never written. */
const GROUP_ROW_BYTES = `(COUNT(tf) + COUNT(tm)) * ${SORTED_WIDTH}`;

/**
 * The bucket rows of the ready runs (`?4` the version): per duration and bucket, the values of every
 * group together, ascending (`summary_group_month_buckets`).
 */
export const buildBucketRowsSql = (kind: GroupKind, maxBytes: number = BLOCK_MAX_BYTES): string => `WITH ${READY},
${found(kind)}
INSERT INTO summary_group_month_buckets (org_key, kind, month, first_day, last_day, metric, bucket, version, sorted)
SELECT ?1, ?2, mo, fd, ldy, metric, b, ?4, CAST(group_concat(${sortedValueSql("v")}, '' ORDER BY v) AS BLOB)
FROM (
  SELECT mo, fd, ldy, 0 AS metric, ${durationBucketSql("tf")} AS b, tf AS v FROM found WHERE tf IS NOT NULL
  UNION ALL
  SELECT mo, fd, ldy, 1, ${durationBucketSql("tm")}, tm FROM found WHERE tm IS NOT NULL
)
WHERE ?5 IS NOT NULL
GROUP BY mo, fd, ldy, metric, b
HAVING COUNT(*) * ${SORTED_WIDTH} <= ${maxBytes}`;

/**
 * The heads of the ready months (written after their group rows, in the same batch): the month's
 * sums and counts per group, and the day blocks it was made from. A month is a marker (`lo` null:
 * never served) when a day block has no content, when its rows do not add up to its day blocks'
 * count, when a duration is too far from zero to encode, or when its groups or one group's sorted
 * durations would pass `maxBytes` (D1's cap on a row).
 */
export const buildGroupHeadsSql = (kind: GroupKind, maxBytes: number = BLOCK_MAX_BYTES): string => `WITH ${READY},
${found(kind)},
bucket_counts AS (
  SELECT mo, g, 0 AS metric, ${durationBucketSql("tf")} AS b, COUNT(*) AS c FROM found WHERE tf IS NOT NULL GROUP BY mo, g, b
  UNION ALL
  SELECT mo, g, 1, ${durationBucketSql("tm")} AS b, COUNT(*) FROM found WHERE tm IS NOT NULL GROUP BY mo, g, b
),
counts AS (
  SELECT mo, g,
    json(COALESCE(json_group_array(b ORDER BY b) FILTER (WHERE metric = 0), '[]')) AS tfb,
    json(COALESCE(json_group_array(c ORDER BY b) FILTER (WHERE metric = 0), '[]')) AS tfc,
    json(COALESCE(json_group_array(b ORDER BY b) FILTER (WHERE metric = 1), '[]')) AS tmb,
    json(COALESCE(json_group_array(c ORDER BY b) FILTER (WHERE metric = 1), '[]')) AS tmc
  FROM bucket_counts GROUP BY mo, g
),
sums AS (
  SELECT mo, g, ${BLOCK_SUMS.map((sum, i) => `${sum} AS s${i}`).join(", ")}, ${GROUP_ROW_BYTES} AS bytes,
    MAX(COALESCE(MAX(abs(tf)), 0), COALESCE(MAX(abs(tm)), 0)) < ${SORTED_OFFSET} AS encodable
  FROM found GROUP BY mo, g
),
entries AS (
  SELECT s.mo AS mo, COUNT(*) AS groups, SUM(s.s0) AS n, MIN(s.encodable AND s.g IS NOT NULL) AS encodable,
    json_group_array(json_array(s.g, s.s0, s.s1, s.s2, s.s3, s.s4, s.s5, s.s6,
      json(COALESCE(k.tfb, '[]')), json(COALESCE(k.tfc, '[]')), json(COALESCE(k.tmb, '[]')), json(COALESCE(k.tmc, '[]')))) AS groups_json
  FROM sums AS s LEFT JOIN counts AS k ON k.mo = s.mo AND k.g = s.g
  GROUP BY s.mo
),
rows_size AS (
  SELECT mo, MAX(bytes) AS biggest FROM (
    SELECT mo, bytes FROM sums
    UNION ALL
    SELECT mo, SUM(c) * ${SORTED_WIDTH} FROM bucket_counts GROUP BY mo, metric, b
  ) GROUP BY mo
),
made AS (
  SELECT r.mo AS mo, r.first AS first, r.last AS last, r.n AS n, r.lo AS lo, r.hi AS hi, r.days AS days, e.groups_json AS groups_json,
    r.unfit = 0 AND COALESCE(e.n, 0) = r.n AND COALESCE(e.encodable, 1)
      AND COALESCE(length(CAST(e.groups_json AS BLOB)), 0) <= ${maxBytes}
      AND COALESCE(z.biggest, 0) <= ${maxBytes} AS fits
  FROM ready AS r LEFT JOIN entries AS e ON e.mo = r.mo LEFT JOIN rows_size AS z ON z.mo = r.mo
)
INSERT OR REPLACE INTO summary_group_month_heads
  (org_key, month, kind, first_day, last_day, built, pull_requests, lo, hi, version, days, groups)
SELECT ?1, mo, ?2, first, last, ?5, n, IIF(fits, lo, NULL), IIF(fits, hi, NULL), ?4, IIF(fits, days, NULL),
  IIF(fits AND n > 0, groups_json, NULL)
FROM made`;

/** A random version below 2^53 (read back exactly as a number), the same in a month's head and its group rows. */
export function newVersion(): number {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2)) as unknown as [number, number];
  return (high & 0x1f_ffff) * 2 ** 32 + low;
}

/** A run of a month's days: its first and last day (UTC day numbers) and the month's first day. */
export interface DayRun {
  first: number;
  last: number;
  month: number;
}

/**
 * Makes the month blocks of `kind` for `runs` (at most one per month) of one organization, in one
 * batch (one transaction): the rows of the runs rebuilt, of the runs beyond each month's
 * `KEPT_RUNS` latest and of heads already gone deleted, the new rows written, then the heads
 * (replacing a stored run of the same days). A run some day of which has no day block yet is left
 * unmade (a later summary asks for it again).
 */
export async function buildGroupMonths(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  kind: GroupKind,
  runs: readonly DayRun[],
  { maxBytes = BLOCK_MAX_BYTES, now = Date.now() }: { maxBytes?: number; now?: number } = {},
): Promise<void> {
  if (runs.length === 0) return;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a whole number, got ${maxBytes}`);
  for (const { first, last, month } of runs)
    if (monthStartDay(first) !== month || monthStartDay(last) !== month || last < first)
      throw new RangeError(`a run of days must lie in its month: ${first}..${last} of ${month}`);
  if (new Set(runs.map(({ month }) => month)).size !== runs.length) throw new RangeError("at most one run of a month per build");
  const version = newVersion();
  const params = [
    orgKey,
    kind,
    JSON.stringify(runs.map(({ first, last, month }) => [first, last, month])),
    version,
    now,
  ] as const;
  await db.batch([
    ...["summary_group_months", "summary_group_month_buckets"].map((table) => db.prepare(clearRowsSql(table)).bind(...params)),
    db.prepare(clearHeadsSql).bind(...params),
    db.prepare(buildGroupRowsSql(kind, maxBytes)).bind(...params),
    db.prepare(buildBucketRowsSql(kind, maxBytes)).bind(...params),
    db.prepare(buildGroupHeadsSql(kind, maxBytes)).bind(...params),
  ]);
}

/**
 * At most this many runs of one month and kind are kept, the latest built: runs start and end on a
 * week's boundary of their month (`alignedRun`), so the windows that meet a month ask for a few
 * runs at most, and a window that moves a day a day asks for a new one once a week.
 */
export const KEPT_RUNS = 6;

/** The heads of `kind` (`?2`) beyond the month's `KEPT_RUNS - 1` latest other than the run built (`?3`). */
const DOOMED = `wanted_run AS (
  SELECT DISTINCT CAST(value ->> 0 AS INTEGER) AS first, CAST(value ->> 1 AS INTEGER) AS last, CAST(value ->> 2 AS INTEGER) AS mo
  FROM json_each(?3)
),
doomed AS (
  SELECT h.month AS month, h.first_day AS first_day, h.last_day AS last_day
  FROM wanted_run AS w
  CROSS JOIN summary_group_month_heads AS h ON h.org_key = ?1 AND h.month = w.mo AND h.kind = ?2
  WHERE (h.first_day, h.last_day) IN (
    SELECT o.first_day, o.last_day FROM summary_group_month_heads AS o
    WHERE o.org_key = ?1 AND o.month = w.mo AND o.kind = ?2 AND NOT (o.first_day = w.first AND o.last_day = w.last)
    ORDER BY o.built DESC LIMIT -1 OFFSET ${KEPT_RUNS - 1})
)`;

/**
 * Deletes the group or bucket rows (`table`) of the run's month that no head will stand for: of
 * the run rebuilt, of the doomed heads, and of heads already gone (a write deleted them). `?4`,
 * `?5` unused (the batch binds one list).
 */
const clearRowsSql = (table: string) => `WITH ${DOOMED}
DELETE FROM ${table} WHERE org_key = ?1 AND kind = ?2
  AND month IN (SELECT mo FROM wanted_run)
  AND ((first_day, last_day) IN (SELECT first, last FROM wanted_run)
    OR (month, first_day, last_day) IN (SELECT month, first_day, last_day FROM doomed)
    OR NOT EXISTS (SELECT 1 FROM summary_group_month_heads AS h WHERE h.org_key = ?1 AND h.kind = ?2
      AND h.month = ${table}.month AND h.first_day = ${table}.first_day AND h.last_day = ${table}.last_day))
  AND ?4 IS NOT NULL AND ?5 IS NOT NULL`;

/** Deletes the doomed heads (after their rows). */
const clearHeadsSql = `WITH ${DOOMED}
DELETE FROM summary_group_month_heads WHERE org_key = ?1 AND kind = ?2
  AND (month, first_day, last_day) IN (SELECT month, first_day, last_day FROM doomed)
  AND ?4 IS NOT NULL AND ?5 IS NOT NULL`;
