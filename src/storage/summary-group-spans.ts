import { errorField, log } from "../lib/log";
import { DAY_MS } from "../lib/time";
import { DURATION_BUCKETS, durationBucketSql, SORTED_WIDTH, sortedValueSql } from "../rules/duration-buckets";
import { BLOCK_FIGURES, BLOCK_MAX_BYTES, monthLastDay, monthStartDay } from "./summary-days";
import { type GroupEntry, type GroupKind, type GroupMonth, newVersion } from "./summary-group-months";
import { SORTED_ROW_MIN } from "./summary-medians";

/**
 * Spans of month blocks per group (issue 31, tenth session; `summary_group_span_heads`,
 * `summary_group_span_buckets`, d1-schema.ts): three or more whole calendar months of one kind made
 * into one head and a row per group, duration and bucket (and per bucket of every group together,
 * group key ''). A year by repository or by author read a dozen month heads (2.1 MB of JSON by
 * author at 1,000,000 pull requests) and, for its medians, a slice of a dozen rows per group (4,800
 * seeks by author); with a span it reads one head and a row per group and duration for the span,
 * and month blocks only for the months at the window's edges.
 *
 * Made after an answer that served `SPAN_MIN_MONTHS` or more whole months in a row from their heads
 * (months' runs, or a span and the months beside it: `summary-group-plan.ts` serves the span that
 * covers most of a window's days, and months around it), once no whole month of the window is left
 * to build: its head from those heads (each group's sums and counts per bucket added up), its
 * groups' rows from the span's pull requests (each bucket's values ascending, a few groups per
 * statement so that no statement sorts more than `SPAN_PULL_REQUESTS_PER_STATEMENT` pull requests),
 * the rows of every group together from the heads' bucket rows one after the other (a bucket's
 * values are then in no order: the median is selected from them by rank), those of at least
 * `SORTED_ROW_MIN` values sorted (the head's `sorted_from`: a summary reads a window of them). Its head is written last,
 * by a statement that writes it only when every day block the heads stand for is still stored with
 * the version they recorded, and the rows hold the values the head promises.
 *
 * Exact by construction, as the month blocks are: a day block stands exactly as long as no pull
 * request of its day changed (every write to one deletes it), and a month head records the
 * versions of the day blocks it was made from; so when those day blocks all stand as the head is
 * written, the span's pull requests are the ones the heads counted, whenever in between its rows
 * read them. A trigger (migration 0016) deletes the span's head whenever one of those day blocks is
 * deleted; a summary serves the head as it would serve those day blocks (with the corrections of
 * those whose pull requests straddle an edge of the window), adds its days with their versions to
 * the blocks its statement checks, and its slices check the head's version.
 */

/** A span is made of at least this many whole months in a row (two months' heads are read about as fast as a span's). */
export const SPAN_MIN_MONTHS = 3;

/**
 * At most this many spans of one kind are kept, the latest built: a window that moves a day a day
 * asks for a new one each month, and a few windows of different months (a dashboard's year and a
 * quarter) each keep theirs.
 */
export const KEPT_SPANS = 3;

/** At most this many pull requests sorted by one statement that writes a span's group rows (about a tenth of a second at 1M). */
export const SPAN_PULL_REQUESTS_PER_STATEMENT = 50_000;

const COLUMN: Record<GroupKind, string> = { repo: "p.repo", author: "p.author" };

/**
 * A span's rows of its groups listed in `?6` (JSON; `?3`..`?4` its days, `?5` the version): per
 * group, duration (`metric` 0 to first review, 1 to merge) and bucket, the group's values ascending.
 */
const groupRowsSql = (kind: GroupKind) => `WITH found AS (
  SELECT ${COLUMN[kind]} AS g, ${BLOCK_FIGURES}
  FROM pull_requests AS p INDEXED BY pull_requests_summary_walk
  WHERE p.org_key = ?1 AND p.merged_at >= ?3 * ${DAY_MS} AND p.merged_at < (?4 + 1) * ${DAY_MS}
    AND p.merged_at IS NOT NULL AND p.first_reviewed_at IS NOT NULL AND ${COLUMN[kind]} IN (SELECT value FROM json_each(?6))
)
INSERT INTO summary_group_span_buckets (org_key, kind, first_day, last_day, group_key, metric, bucket, version, sorted)
SELECT ?1, ?2, ?3, ?4, g, metric, b, ?5, CAST(group_concat(${sortedValueSql("v")}, '' ORDER BY v) AS BLOB)
FROM (
  SELECT g, 0 AS metric, ${durationBucketSql("tf")} AS b, tf AS v FROM found WHERE tf IS NOT NULL
  UNION ALL
  SELECT g, 1, ${durationBucketSql("tm")}, tm FROM found WHERE tm IS NOT NULL
)
GROUP BY g, metric, b`;

/** The span's parts' bucket rows (`?6` JSON `[[span, month, first, last, version], ...]`, `span` 1 for a span's rows, 0 for a month's) of the buckets `bucketsOk`. */
const partRows = (bucketsOk: string) => `SELECT b.metric AS metric, b.bucket AS bucket, b.first_day AS first, b.sorted AS sorted
  FROM json_each(?6) AS m
  CROSS JOIN summary_group_month_buckets AS b ON b.org_key = ?1 AND b.kind = ?2 AND b.month = m.value ->> 1
    AND b.first_day = m.value ->> 2 AND b.last_day = m.value ->> 3 AND b.version = m.value ->> 4
  WHERE m.value ->> 0 = 0 AND ${bucketsOk}
  UNION ALL
  SELECT b.metric, b.bucket, b.first_day, b.sorted
  FROM json_each(?6) AS m
  CROSS JOIN summary_group_span_buckets AS b ON b.org_key = ?1 AND b.kind = ?2
    AND b.first_day = m.value ->> 2 AND b.last_day = m.value ->> 3 AND b.group_key = '' AND b.version = m.value ->> 4
  WHERE m.value ->> 0 = 1 AND ${bucketsOk}`;

/**
 * The bucket rows of every group together (`group_key` '') of the buckets listed in `?7` (JSON
 * `[[metric, bucket], ...]`, those of fewer than `SORTED_ROW_MIN` values): each bucket's values of the
 * span's parts one after the other.
 */
const BUCKET_ROWS_SQL = `INSERT INTO summary_group_span_buckets (org_key, kind, first_day, last_day, group_key, metric, bucket, version, sorted)
SELECT ?1, ?2, ?3, ?4, '', metric, bucket, ?5, CAST(group_concat(CAST(sorted AS TEXT), '' ORDER BY first) AS BLOB)
FROM (${partRows("(b.metric, b.bucket) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?7))")})
GROUP BY metric, bucket`;

/**
 * The bucket row of every group together of bucket `?8` of duration `?7`, of at least
 * `SORTED_ROW_MIN` values: its values sorted, so that a summary reads only the few around the rank
 * it wants (`summary-medians.ts` `rankThroughWindow`; the year's median bucket by author at 1M holds
 * some 40,000). The parts' rows are joined once into a BLOB (a scalar subquery, kept as a value: a
 * BLOB's `substr` counts bytes, a TEXT's characters from its start, which made the cut quadratic),
 * cut into values and sorted: 47 ms for 41,500 values on the 1M file (node:sqlite). One statement
 * per such bucket, so that none holds the database long.
 */
const SORTED_BUCKET_ROW_SQL = `WITH RECURSIVE joined(s) AS (
  SELECT CAST(group_concat(CAST(sorted AS TEXT), '') AS BLOB) FROM (${partRows("b.metric = ?7 AND b.bucket = ?8")})
),
at(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM at WHERE k + 1 < length((SELECT s FROM joined)) / ${SORTED_WIDTH})
INSERT INTO summary_group_span_buckets (org_key, kind, first_day, last_day, group_key, metric, bucket, version, sorted)
SELECT ?1, ?2, ?3, ?4, '', ?7, ?8, ?5, CAST(group_concat(v, '' ORDER BY v) AS BLOB)
FROM (SELECT substr((SELECT s FROM joined), k * ${SORTED_WIDTH} + 1, ${SORTED_WIDTH}) AS v FROM at)`;

/**
 * The span's head, written only when every day block its months stand for is stored as they
 * recorded it (`?6` JSON `[[day, version], ...]`) and the rows of this version hold what the head
 * promises: per group (`?7` `[[key, bytes, rows], ...]`) its rows' bytes and count, per bucket of
 * every group together (`?8` `[[metric, bucket, bytes], ...]`) its row's bytes. `?9` built, `?10`
 * pull requests, `?11` lo, `?12` hi, `?13` groups, `?14` the heads it was made from, `?15` the least
 * count of its rows of every group together that are sorted (`SORTED_ROW_MIN`).
 */
const HEAD_SQL = `INSERT OR REPLACE INTO summary_group_span_heads
  (org_key, kind, first_day, last_day, built, pull_requests, lo, hi, version, days, groups, months, sorted_from)
SELECT ?1, ?2, ?3, ?4, ?9, ?10, ?11, ?12, ?5, ?6, ?13, ?14, ?15
WHERE (SELECT COUNT(*) FROM json_each(?6) AS d CROSS JOIN summary_days AS s
    ON s.org_key = ?1 AND s.repo_key = '' AND s.day = d.value ->> 0 AND s.version = d.value ->> 1) = json_array_length(?6)
  AND (SELECT COUNT(*) FROM json_each(?7) AS g CROSS JOIN (
      SELECT group_key, SUM(length(sorted)) AS bytes, COUNT(*) AS n FROM summary_group_span_buckets
      WHERE org_key = ?1 AND kind = ?2 AND first_day = ?3 AND last_day = ?4 AND version = ?5 AND group_key <> ''
      GROUP BY group_key
    ) AS r ON r.group_key = g.value ->> 0 WHERE r.bytes = g.value ->> 1 AND r.n = g.value ->> 2) = json_array_length(?7)
  AND (SELECT COUNT(*) FROM json_each(?8) AS k CROSS JOIN summary_group_span_buckets AS r
    ON r.org_key = ?1 AND r.kind = ?2 AND r.first_day = ?3 AND r.last_day = ?4 AND r.group_key = ''
      AND r.metric = k.value ->> 0 AND r.bucket = k.value ->> 1
    WHERE r.version = ?5 AND length(r.sorted) = k.value ->> 2) = json_array_length(?8)`;

/** A marker for a span too big for its rows (`?5` the version, `?6` built, `?7` pull requests): never served, not made again until a write to its days. */
const MARKER_SQL = `INSERT OR REPLACE INTO summary_group_span_heads
  (org_key, kind, first_day, last_day, built, pull_requests, lo, hi, version, days, groups, months)
VALUES (?1, ?2, ?3, ?4, ?6, ?7, NULL, NULL, ?5, NULL, NULL, NULL)`;

/** Before a span is made: its head (a marker or an older build) and its rows, of any version. */
const CLEAR_SPAN_SQL = ["summary_group_span_heads", "summary_group_span_buckets"].map(
  (table) => `DELETE FROM ${table} WHERE org_key = ?1 AND kind = ?2 AND first_day = ?3 AND last_day = ?4`,
);

/**
 * After: the heads of `kind` beyond its `KEPT_SPANS` latest, then the group and bucket rows no head
 * of their version stands for (of the heads deleted, of heads a write deleted). Not before: the
 * span made may be made from an older one's rows.
 */
const EVICT_SQL = [
  `DELETE FROM summary_group_span_heads WHERE org_key = ?1 AND kind = ?2 AND (first_day, last_day) IN (
  SELECT first_day, last_day FROM summary_group_span_heads WHERE org_key = ?1 AND kind = ?2
  ORDER BY built DESC LIMIT -1 OFFSET ${KEPT_SPANS})`,
  `DELETE FROM summary_group_span_buckets AS r WHERE org_key = ?1 AND kind = ?2 AND NOT EXISTS (
  SELECT 1 FROM summary_group_span_heads AS h
  WHERE h.org_key = ?1 AND h.kind = ?2 AND h.first_day = r.first_day AND h.last_day = r.last_day AND h.version = r.version)`,
];

/**
 * The heads a span of their kind would be made of: of the heads served (months' runs and at most
 * one span), the longest run of whole months in a row, when it covers at least `SPAN_MIN_MONTHS`
 * months and is more than one span already made; null otherwise.
 */
export function spanOf(served: readonly GroupMonth[]): GroupMonth[] | null {
  const whole = served
    .filter((m) => m.groups !== null && (m.span || (m.first === m.month && m.last === monthLastDay(m.month))))
    .sort((a, b) => a.first - b.first);
  let best: GroupMonth[] = [];
  let run: GroupMonth[] = [];
  const months = (parts: readonly GroupMonth[]) => parts.reduce((n, m) => n + monthsOf(m), 0);
  for (const part of whole) {
    const previous = run.at(-1);
    run = previous !== undefined && previous.last + 1 === part.first ? [...run, part] : [part];
    if (months(run) > months(best)) best = run;
  }
  return best.length >= 2 && months(best) >= SPAN_MIN_MONTHS ? best : null;
}

/** How many calendar months a head's days cover (each starts on a month's first day). */
function monthsOf({ first, last }: { first: number; last: number }): number {
  const from = new Date(first * DAY_MS);
  const to = new Date(last * DAY_MS);
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth() + 1;
}

/**
 * Makes the span of `months` (heads of whole months in a row of one kind, as served: `spanOf`; a
 * span among them counts as its months): see the module's comment. A span whose head, a group's row or a bucket's row would pass `maxBytes`
 * becomes a marker. Answers what it wrote; a head not written (a write to its days in between, or
 * rows that do not hold what the head promises) is logged and left to a later summary.
 */
export async function buildGroupSpan(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  kind: GroupKind,
  months: readonly GroupMonth[],
  {
    maxBytes = BLOCK_MAX_BYTES,
    now = Date.now(),
    pullRequestsPerStatement = SPAN_PULL_REQUESTS_PER_STATEMENT,
    beforeHead,
  }: { maxBytes?: number; now?: number; pullRequestsPerStatement?: number; beforeHead?: () => Promise<void> } = {},
): Promise<"made" | "marker" | "not made"> {
  const first = months[0];
  const last = months.at(-1);
  if (first === undefined || last === undefined) throw new RangeError("a span needs months");
  for (const [i, month] of months.entries()) {
    if (month.kind !== kind || month.groups === null) throw new RangeError("a span is made of served heads of its kind");
    if (month.first !== monthStartDay(month.first) || month.last !== monthLastDay(month.last))
      throw new RangeError(`a span is made of whole months, not ${month.first}..${month.last}`);
    if (i > 0 && (months[i - 1] as GroupMonth).last + 1 !== month.first)
      throw new RangeError("a span's months follow one another");
  }
  const version = newVersion();
  const key = [orgKey, kind, first.first, last.last] as const;
  const { entries, buckets, pullRequests } = mergedGroups(months);
  const groupsJson = JSON.stringify(entries);
  // Per group its rows' bytes and count (a row per duration and bucket); per bucket of every group together its row's bytes.
  const rowBytes = entries.map(([groupKey, , , , , , , , , tfCounts, , tmCounts]) => [
    groupKey,
    (sum(tfCounts) + sum(tmCounts)) * SORTED_WIDTH,
    tfCounts.length + tmCounts.length,
  ]) as [string, number, number][];
  const bucketBytes = buckets.map(([metric, bucket, count]) => [metric, bucket, count * SORTED_WIDTH]);
  let biggest = 0;
  for (const [, , , , , , , , , tfCounts, , tmCounts] of entries)
    for (const count of [...tfCounts, ...tmCounts]) biggest = Math.max(biggest, count);
  const fits =
    new TextEncoder().encode(groupsJson).length <= maxBytes &&
    biggest * SORTED_WIDTH <= maxBytes &&
    bucketBytes.every(([, , bytes]) => (bytes as number) <= maxBytes);
  await db.batch(CLEAR_SPAN_SQL.map((sql) => db.prepare(sql).bind(...key)));
  const evict = () => db.batch(EVICT_SQL.map((sql) => db.prepare(sql).bind(orgKey, kind)));
  if (!fits) {
    await db
      .prepare(MARKER_SQL)
      .bind(...key, version, now, pullRequests)
      .run();
    await evict();
    return "marker";
  }
  // A few groups per statement: each reads the span's index range and sorts its groups' pull requests.
  const sizes = new Map(entries.map((entry) => [entry[0], entry[1]]));
  let batch: string[] = [];
  let inBatch = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await db
      .prepare(groupRowsSql(kind))
      .bind(...key, version, JSON.stringify(batch))
      .run();
    batch = [];
    inBatch = 0;
  };
  for (const [groupKey, size] of sizes) {
    if (inBatch > 0 && inBatch + size > pullRequestsPerStatement) await flush();
    batch.push(groupKey);
    inBatch += size;
  }
  await flush();
  const partsJson = JSON.stringify(months.map((m) => [m.span ? 1 : 0, m.month, m.first, m.last, m.version]));
  const small = buckets.filter(([, , count]) => count < SORTED_ROW_MIN).map(([metric, bucket]) => [metric, bucket]);
  if (small.length > 0)
    await db
      .prepare(BUCKET_ROWS_SQL)
      .bind(...key, version, partsJson, JSON.stringify(small))
      .run();
  for (const [metric, bucket, count] of buckets)
    if (count >= SORTED_ROW_MIN)
      await db
        .prepare(SORTED_BUCKET_ROW_SQL)
        .bind(...key, version, partsJson, metric, bucket)
        .run();
  await beforeHead?.();
  const days = months.flatMap((m) => m.days);
  const written = await db
    .prepare(HEAD_SQL)
    .bind(
      ...key,
      version,
      JSON.stringify(days),
      JSON.stringify(rowBytes),
      JSON.stringify(bucketBytes),
      now,
      pullRequests,
      edge(
        months.map((m) => m.lo),
        Math.min,
      ),
      edge(
        months.map((m) => m.hi),
        Math.max,
      ),
      groupsJson,
      JSON.stringify(months.map((m) => [m.first, m.last, m.version])),
      SORTED_ROW_MIN,
    )
    .run();
  await evict();
  if (written.meta.changes > 0) return "made";
  log.info("summary span not made: its days or rows changed while it was made", { orgKey, kind, months: months.length });
  return "not made";
}

/** Makes the spans a summary's answer asks for (`spanOf`), one per kind; a failure is logged, not answered. */
export async function buildGroupSpans(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  spans: readonly { kind: GroupKind; months: readonly GroupMonth[] }[],
  options: { maxBytes?: number } = {},
): Promise<void> {
  for (const { kind, months } of spans)
    try {
      const made = await buildGroupSpan(db, orgKey, kind, months, options);
      log.info("summary span built", { orgKey, kind, months: months.length, made });
    } catch (error) {
      log.warn("summary span not built", { orgKey, kind, months: months.length, error: errorField(error) });
    }
}

const sum = (values: readonly number[]): number => values.reduce((n, v) => n + v, 0);

/** The least or greatest of the months' `lo` or `hi` (a month without pull requests has none). */
const edge = (values: readonly (number | null)[], pick: (...v: number[]) => number): number | null => {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : pick(...known);
};

/**
 * The months' groups added up (each group's sums, and its counts per bucket of each duration), the
 * counts per bucket of every group together (`[metric, bucket, count]`, the span's bucket rows),
 * and the months' pull requests.
 */
function mergedGroups(months: readonly GroupMonth[]): {
  entries: GroupEntry[];
  buckets: [metric: 0 | 1, bucket: number, count: number][];
  pullRequests: number;
} {
  const groups = new Map<string, { sums: number[]; counts: [Float64Array, Float64Array] }>();
  const totals = [new Float64Array(DURATION_BUCKETS), new Float64Array(DURATION_BUCKETS)] as const;
  let pullRequests = 0;
  for (const month of months) {
    pullRequests += month.pullRequests;
    for (const [key, n, la, ld, fl, fx, al, nal, tfBuckets, tfCounts, tmBuckets, tmCounts] of month.groups ?? []) {
      let group = groups.get(key);
      if (group === undefined) {
        group = { sums: [0, 0, 0, 0, 0, 0, 0], counts: [new Float64Array(DURATION_BUCKETS), new Float64Array(DURATION_BUCKETS)] };
        groups.set(key, group);
      }
      [n, la, ld, fl, fx, al, nal].forEach((value, i) => {
        (group.sums as number[])[i] = ((group.sums as number[])[i] as number) + value;
      });
      for (const [metric, bucketList, countList] of [
        [0, tfBuckets, tfCounts],
        [1, tmBuckets, tmCounts],
      ] as const)
        for (let i = 0; i < bucketList.length; i++) {
          const b = bucketList[i] as number;
          const count = countList[i] as number;
          group.counts[metric][b] = (group.counts[metric][b] as number) + count;
          totals[metric][b] = (totals[metric][b] as number) + count;
        }
    }
  }
  const listed = (counts: Float64Array): [number[], number[]] => {
    const bucketList: number[] = [];
    const countList: number[] = [];
    counts.forEach((count, b) => {
      if (count > 0) {
        bucketList.push(b);
        countList.push(count);
      }
    });
    return [bucketList, countList];
  };
  const entries = [...groups].map(([key, { sums, counts }]): GroupEntry => {
    const [tfBuckets, tfCounts] = listed(counts[0]);
    const [tmBuckets, tmCounts] = listed(counts[1]);
    return [key, ...(sums as [number, number, number, number, number, number, number]), tfBuckets, tfCounts, tmBuckets, tmCounts];
  });
  const buckets: [0 | 1, number, number][] = [];
  for (const metric of [0, 1] as const)
    totals[metric].forEach((count, b) => {
      if (count > 0) buckets.push([metric, b, count]);
    });
  return { entries, buckets, pullRequests };
}
