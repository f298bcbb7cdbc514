import { DAY_MS } from "../lib/time";
import { durationBucketSql, SORTED_OFFSET, sortedValueSql } from "../rules/duration-buckets";
import { BLOCK_MAX_BYTES, type BlockSums } from "./summary-days";
import { type GroupingsQuery, isFiltered } from "./summary-rows";

/**
 * The summary's month blocks per group (`summary_group_month_heads` and `summary_group_months`,
 * d1-schema.ts; issue 31): for a summary grouped by repository or by author, a whole calendar month
 * of the window as one row of each group's sums and counts of durations per bucket, instead of its
 * thirty day blocks' every duration and pull request's group. The medians' buckets are then read as
 * slices of the groups' sorted durations (`summary-medians.ts`), as a time grouping reads its days'.
 *
 * Exact by construction, as the day blocks are (`summary-days.ts`): a month is made, in one batch,
 * only when each of its days has the organization's day block with content, from the same rows
 * those blocks hold, and its head records the blocks' versions; deleting one of those day blocks
 * (every write to a pull request of the day does) deletes the month's heads (migration 0015). A
 * head that stands therefore holds the month as its day blocks do, and a summary serves it exactly
 * when it would serve all of those day blocks: each of them in the window (`lo`, `hi` of the month).
 * The summary then checks those day blocks' versions in its statement, as it checks the day blocks
 * it read before it, so a write in between makes it read again.
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
  month: number;
  version: number;
  pullRequests: number;
  days: [day: number, version: number][];
  groups: GroupEntry[] | null;
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

/** The months (`?3`: JSON `[[first day, last day], ...]`) each of whose days has the organization's day block. */
const READY = `wanted AS (SELECT DISTINCT CAST(value ->> 0 AS INTEGER) AS mo, CAST(value ->> 1 AS INTEGER) AS last FROM json_each(?3)),
ready AS MATERIALIZED (
  SELECT w.mo AS mo, w.last AS last, COUNT(*) AS blocks, SUM(d.pull_requests) AS n, MIN(d.lo) AS lo, MAX(d.hi) AS hi,
    COUNT(*) FILTER (WHERE d.pull_requests > 0 AND d.lo IS NULL) AS unfit,
    json_group_array(json_array(d.day, d.version) ORDER BY d.day) AS days
  FROM wanted AS w
  CROSS JOIN summary_days AS d ON d.org_key = ?1 AND d.repo_key = '' AND d.day BETWEEN w.mo AND w.last
  GROUP BY w.mo
  HAVING blocks = w.last - w.mo + 1
)`;

/** The pull requests of the ready months, with their group (`kind`), as the day blocks take them. */
const found = (kind: GroupKind) => `found AS MATERIALIZED (
  SELECT r.mo AS mo, ${COLUMN[kind]} AS g,
    p.lines_added AS la, p.lines_deleted AS ld, p.ai_lines AS al,
    CASE WHEN p.first_finding_at IS NULL THEN 0 ELSE p.posted_findings END AS fl,
    CASE WHEN p.first_finding_at IS NULL THEN 0 ELSE p.fixed_findings END AS fx,
    p.first_reviewed_at - p.created_at AS tf, p.merged_at - p.created_at AS tm
  FROM ready AS r
  CROSS JOIN pull_requests AS p INDEXED BY pull_requests_summary_walk
  ON p.org_key = ?1 AND p.merged_at >= r.mo * ${DAY_MS} AND p.merged_at < (r.last + 1) * ${DAY_MS}
    AND p.merged_at IS NOT NULL AND p.first_reviewed_at IS NOT NULL
  WHERE r.unfit = 0
)`;

/**
 * The group rows of the ready months (`?2` the kind, `?4` the version), after the statement before
 * it deleted the months' old ones: each group's durations to first review ascending, then those to
 * merge, as a day block's `sorted`.
 */
export const buildGroupRowsSql = (kind: GroupKind): string => `WITH ${READY},
${found(kind)}
INSERT INTO summary_group_months (org_key, kind, month, group_key, version, sorted)
SELECT ?1, ?2, mo, g, ?4,
  CAST(COALESCE(group_concat(IIF(tf IS NULL, NULL, ${sortedValueSql("tf")}), '' ORDER BY tf), '')
    || COALESCE(group_concat(IIF(tm IS NULL, NULL, ${sortedValueSql("tm")}), '' ORDER BY tm), '') AS BLOB)
FROM found
WHERE g IS NOT NULL
GROUP BY mo, g`;

/** A group's sums, `BlockSums` order (as a day block's). */
const SUMS = [
  "COUNT(*)",
  "COALESCE(SUM(la), 0)",
  "COALESCE(SUM(ld), 0)",
  "SUM(fl)",
  "SUM(fx)",
  "COALESCE(SUM(al), 0)",
  "COUNT(al)",
];

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
  SELECT mo, g, ${SUMS.map((sum, i) => `${sum} AS s${i}`).join(", ")},
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
  SELECT month AS mo, MAX(length(sorted)) AS biggest FROM summary_group_months
  WHERE org_key = ?1 AND kind = ?2 AND version = ?4 AND month IN (SELECT mo FROM ready)
  GROUP BY month
),
made AS (
  SELECT r.mo AS mo, r.n AS n, r.lo AS lo, r.hi AS hi, r.days AS days, e.groups_json AS groups_json,
    r.unfit = 0 AND COALESCE(e.n, 0) = r.n AND COALESCE(e.encodable, 1)
      AND COALESCE(length(CAST(e.groups_json AS BLOB)), 0) <= ${maxBytes}
      AND COALESCE(z.biggest, 0) <= ${maxBytes} AS fits
  FROM ready AS r LEFT JOIN entries AS e ON e.mo = r.mo LEFT JOIN rows_size AS z ON z.mo = r.mo
)
INSERT OR REPLACE INTO summary_group_month_heads (org_key, month, kind, pull_requests, lo, hi, version, days, groups)
SELECT ?1, mo, ?2, n, IIF(fits, lo, NULL), IIF(fits, hi, NULL), ?4, IIF(fits, days, NULL), IIF(fits AND n > 0, groups_json, NULL)
FROM made`;

/** A random version below 2^53 (read back exactly as a number), the same in a month's head and its group rows. */
function newVersion(): number {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2)) as unknown as [number, number];
  return (high & 0x1f_ffff) * 2 ** 32 + low;
}

/**
 * Makes the month blocks of `kind` for `months` (`[first day, last day]` of whole calendar months)
 * of one organization, in one batch (one transaction): the months' old group rows deleted, the new
 * ones written, then the heads (replacing any stored). A month some day of which has no day block
 * yet is left unmade (a later summary reports it again).
 */
export async function buildGroupMonths(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  kind: GroupKind,
  months: readonly (readonly [number, number])[],
  { maxBytes = BLOCK_MAX_BYTES }: { maxBytes?: number } = {},
): Promise<void> {
  if (months.length === 0) return;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a whole number, got ${maxBytes}`);
  const version = newVersion();
  const params = [orgKey, kind, JSON.stringify(months), version] as const;
  await db.batch([
    db
      .prepare(
        `DELETE FROM summary_group_months WHERE org_key = ?1 AND kind = ?2
  AND month IN (SELECT CAST(value ->> 0 AS INTEGER) FROM json_each(?3)) AND ?4 IS NOT NULL`,
      )
      .bind(...params),
    db.prepare(buildGroupRowsSql(kind)).bind(...params),
    db.prepare(buildGroupHeadsSql(kind, maxBytes)).bind(...params),
  ]);
}

/**
 * Reads the heads of `kinds` for `months` (their first days) that can serve a window from `start`
 * to `end` (ms): every review and finding of their pull requests inside it, or none. A month is
 * served only when it has a servable head of every kind asked, all made from the same day blocks;
 * a month without a head of a kind is `missing` that kind (to build after the answer).
 */
export async function readGroupMonths(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  kinds: readonly GroupKind[],
  months: readonly number[],
  start: number,
  end: number,
): Promise<{ served: GroupMonth[]; missing: { kind: GroupKind; month: number }[]; rowsRead: number }> {
  if (months.length === 0 || kinds.length === 0) return { served: [], missing: [], rowsRead: 0 };
  const { results, meta } = await db
    .prepare(
      `SELECT h.month AS month, h.kind AS kind, h.version AS version, h.pull_requests AS n, h.days AS days, h.groups AS groups,
  h.pull_requests = 0 OR (h.lo >= ?2 AND h.hi <= ?3) AS usable
FROM json_each(?4) AS m CROSS JOIN json_each(?5) AS k
CROSS JOIN summary_group_month_heads AS h ON h.org_key = ?1 AND h.month = m.value AND h.kind = k.value`,
    )
    .bind(orgKey, start, end, JSON.stringify(months), JSON.stringify(kinds))
    .all<{
      month: number;
      kind: GroupKind;
      version: number;
      n: number;
      days: string | null;
      groups: string | null;
      usable: number;
    }>();
  const byMonth = new Map<number, typeof results>();
  for (const row of results) byMonth.set(row.month, [...(byMonth.get(row.month) ?? []), row]);
  const served: GroupMonth[] = [];
  const missing: { kind: GroupKind; month: number }[] = [];
  for (const month of months) {
    const heads = byMonth.get(month) ?? [];
    if (heads.length < kinds.length) {
      for (const kind of kinds) if (!heads.some((h) => h.kind === kind)) missing.push({ kind, month });
      continue;
    }
    if (!heads.every((h) => h.usable && h.days !== null && h.days === heads[0]?.days)) continue;
    for (const h of heads)
      served.push({
        kind: h.kind,
        month,
        version: h.version,
        pullRequests: h.n,
        days: JSON.parse(h.days as string) as [number, number][],
        groups: h.groups === null ? null : (JSON.parse(h.groups) as GroupEntry[]),
      });
  }
  return { served, missing, rowsRead: meta.rows_read };
}
