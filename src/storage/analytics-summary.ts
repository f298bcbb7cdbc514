import { EMPTY_FIGURES } from "../rules/analytics-summary";
import type { AnalyticsSummaryGroup, AnalyticsSummaryTotals, SummaryGroupBy } from "../schemas/analytics-summary";
import { type AnalyticsScope, unionAll } from "./analytics";
import { GAP_TIER_BOUNDS_MS, LAST_GAP_TIER } from "./review-span";

/** What the summary needs, in storage terms: the export's scope (its statement input without the page), and the grouping. */
export type SummaryQuery = AnalyticsScope & { groupBy: SummaryGroupBy };

export interface SummaryFigures {
  /** The groups that have rows, in no particular order. */
  groups: AnalyticsSummaryGroup[];
  totals: AnalyticsSummaryTotals;
  /** D1's count of rows the statement read (`meta.rows_read`). */
  rowsRead: number;
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
  const { groupings, rowsRead } = await summarizeGroupings(db, { ...scope, groupBys: [groupBy] }, limits);
  const [only] = groupings;
  if (!only) throw new Error("summary statement answered no grouping");
  return { ...only, rowsRead };
}

/** Several groupings of one scope's rows (the dashboard's week, repository and author). */
export type GroupingsQuery = AnalyticsScope & { groupBys: readonly SummaryGroupBy[] };

/** Per grouping asked, in the order asked: its groups with rows and the totals (the same for every grouping). */
export interface GroupingsFigures {
  groupings: { groups: AnalyticsSummaryGroup[]; totals: AnalyticsSummaryTotals }[];
  /** D1's count of rows the statement read (`meta.rows_read`). */
  rowsRead: number;
}

/**
 * Several groupings of the same rows in one statement (`summaryStatement`): the rows are found,
 * checked and measured once, and the totals' medians sorted once, whatever the number of groupings;
 * only the grouping itself is done once per grouping.
 */
export async function summarizeGroupings(
  db: D1Database | D1DatabaseSession,
  q: GroupingsQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
): Promise<GroupingsFigures> {
  const { sql, params } = summaryStatement(q, limits);
  const result = await db
    .prepare(sql)
    .bind(...params)
    .all<
      AnalyticsSummaryGroup & { grouping: number; totalMedianMsToFirstReview: number | null; totalMedianMsToMerge: number | null }
    >();
  const groupings = q.groupBys.map(() => ({ groups: [] as AnalyticsSummaryGroup[], totals: { ...EMPTY_FIGURES } }));
  for (const { grouping, totalMedianMsToFirstReview, totalMedianMsToMerge, ...group } of result.results) {
    const target = groupings[grouping];
    if (!target) throw new Error(`summary statement answered grouping ${grouping}`);
    target.groups.push(group);
    for (const name of SUMMED) target.totals[name] += group[name];
    target.totals.medianMsToFirstReview = totalMedianMsToFirstReview;
    target.totals.medianMsToMerge = totalMedianMsToMerge;
  }
  return { groupings, rowsRead: result.meta.rows_read };
}

/**
 * How the statement computes the groups' medians (see `summaryStatement`): from each group's values
 * aggregated in order into one JSONB array when no group has more than `maxSortedArray` rows, else
 * by ranking them (ROW_NUMBER), slower. The bound keeps every array far below D1's cap on a string
 * or BLOB (1 MB in its documented limits; local D1 does not enforce it, so no test would notice): a
 * duration takes at most 13 bytes in JSONB, so 40,000 of them about 520 KB.
 */
export interface SummaryLimits {
  maxSortedArray: number;
}

export const SUMMARY_LIMITS: SummaryLimits = { maxSortedArray: 40_000 };

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
function groupKeySql(groupBy: SummaryGroupBy): { row: string; key: (k: string) => string } {
  const day = DAY_OF("p.merged_at");
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
      return { row: "p.repo", key: same };
    case "author":
      return { row: "p.author", key: same };
  }
}

/**
 * The statement and its parameters (shared with the benchmark and the tests). The rows are the
 * export's (`storage/analytics.ts`): merged, in the organization (and repository), accessible, and
 * with a completed review in [start, end]. They are found the way the export's walk finds them, as
 * disjoint index ranges of the review span (`review-span.ts`): merged inside the window; merged
 * before it, one range per gap tier of the last review after the merge; merged after it, one per
 * tier of the first review before it. A candidate whose span does not settle it (reviews on both
 * sides of the window) is checked against its reviews.
 *
 * Per row it computes what the export's row shows: findings posted and created in the window (and
 * of them the AI-addressed ones), the AI lines capped at the changed lines, and the two durations.
 * The window-independent figures the write path keeps (`pull-request-figures.ts`) settle the
 * findings of a row whose posted findings all lie inside the window, or all outside it, without
 * reading them; only a row whose findings straddle an edge of the window reads its findings. The
 * capped AI lines are a column.
 * Then per group, and once for all rows (the totals): the sums, and each median as the value at
 * position floor((n-1)/2) in ascending order: that index of the group's values aggregated in
 * order (`jsonb_group_array(... ORDER BY ...)`; when a group has many rows, the row of that rank
 * in its group, ROW_NUMBER), or for the totals the row at that OFFSET.
 */
export function summaryStatement(
  q: SummaryQuery | GroupingsQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
): { sql: string; params: (string | number)[] } {
  const groupBys = "groupBys" in q ? q.groupBys : [q.groupBy];
  if (groupBys.length === 0) throw new RangeError("a summary needs at least one grouping");
  if (!Number.isSafeInteger(limits.maxSortedArray) || limits.maxSortedArray < 0)
    throw new RangeError(`maxSortedArray must be a whole number, got ${limits.maxSortedArray}`);
  const params: (string | number)[] = [q.orgKey, q.start, q.end]; // ?1 ?2 ?3
  const bind = (value: string | number): string => `?${params.push(value)}`;
  // Section 21's lists, each bound once as JSON: the repositories' window walk takes the listed
  // ones from the repository index (no order needed here, so one IN over the list), the authors
  // filter the rows once found (the author is in no index of the walks). One repository is bound
  // as itself: an IN over json_each in each of the ranges cost it about 1 ms more to compile.
  const named = q.repoKeys === null ? null : [...new Set(q.repoKeys)];
  const repo =
    named === null
      ? null
      : named.length === 1
        ? `p.repo_key = ${bind(named[0] as string)}`
        : `p.repo_key IN (SELECT value FROM json_each(${bind(JSON.stringify(named))}))`;
  const authors = q.authorKeys === null ? null : bind(JSON.stringify([...new Set(q.authorKeys)]));
  const access = q.accessibleRepoKeys === null ? null : bind(JSON.stringify(q.accessibleRepoKeys));
  const excluded = q.excludedRepoKeys && q.excludedRepoKeys.length > 0 ? bind(JSON.stringify(q.excludedRepoKeys)) : null;

  const range = (index: string, conditions: string[]): string =>
    `SELECT p.id AS id FROM pull_requests AS p INDEXED BY ${index} WHERE ${[
      "p.org_key = ?1",
      ...conditions,
      ...(repo ? [repo] : []),
      ...(access ? [`p.repo_key IN (SELECT value FROM json_each(${access}))`] : []),
      ...(excluded ? [`p.repo_key NOT IN (SELECT value FROM json_each(${excluded}))`] : []),
      "p.first_reviewed_at <= ?3",
      "p.last_reviewed_at >= ?2",
    ].join(" AND ")}`;
  const tiers = Array.from({ length: LAST_GAP_TIER + 1 }, (_, tier) => ({ tier, bound: GAP_TIER_BOUNDS_MS[tier] }));
  const candidates = [
    range(repo ? "pull_requests_repo_merged_walk" : "pull_requests_merged_walk", ["p.merged_at BETWEEN ?2 AND ?3"]),
    ...tiers.map(({ tier, bound }) =>
      range("pull_requests_after_merge_walk", [
        `p.after_merge_tier = ${tier}`,
        ...(bound === undefined ? [] : [`p.merged_at >= ?2 - ${bound}`]),
        "p.merged_at < ?2",
      ]),
    ),
    ...tiers.map(({ tier, bound }) =>
      range("pull_requests_before_merge_walk", [
        `p.before_merge_tier = ${tier}`,
        "p.merged_at > ?3",
        ...(bound === undefined ? [] : [`p.merged_at <= ?3 + ${bound}`]),
      ]),
    ),
  ];

  // Medians: each group's values in ascending order as one JSONB array (an aggregate with ORDER BY,
  // computed in the same pass as the sums), and the value at the median's index; among all rows,
  // the value at the median's OFFSET of one sort. A ROW_NUMBER per group cost a window pass and
  // one more pass over the rows per median; a ROW_NUMBER over all rows for the totals cost as much
  // as the sums. A group of more than `limits.maxSortedArray` rows makes the statement rank instead
  // (`gate`: counting the groups' rows costs a pass only when the window has more rows than that):
  // the arrays' FILTER then lets no value in, and the ranking's constant condition lets all of them in
  // (SQLite evaluates a condition that reads no row once, before the loop). Only the group's median
  // row of the ranking is kept: joining every ranked row to the groups made SQLite build an
  // automatic index over them. The totals' sums are added up from the groups by the caller, and
  // their medians ride on every group row: a second SELECT for the totals (UNION ALL) made SQLite
  // compile the whole plan again, and local D1 compiles the statement on every request.
  // Several groupings (`groupBys`): each row carries one key per grouping (k0, k1, ...), and
  // `keyed` lists it once per grouping (`grp`, `k`); the medians and groups below partition by both.
  // The totals are the same rows whatever the grouping: their medians are sorted once.
  const arrays = "(SELECT arrays FROM gate)";
  const sorted = (column: string) =>
    `jsonb_group_array(${column} ORDER BY ${column}) FILTER (WHERE ${column} IS NOT NULL AND ${arrays})`;
  const ranked = (column: string, count: string) =>
    `SELECT grp, k, v FROM (SELECT grp, k, ${column} AS v, ROW_NUMBER() OVER (PARTITION BY grp, k ORDER BY ${column}) AS i
      FROM keyed WHERE ${column} IS NOT NULL AND NOT ${arrays})
    WHERE (grp, k, i) IN (SELECT grp, k, (${count} - 1) / 2 + 1 FROM by_group)`;
  const median = (array: string, count: string, rankedTable: string) =>
    `CASE WHEN ${arrays} THEN ${array} ->> ('$[' || ((${count} - 1) / 2) || ']')
      ELSE (SELECT v FROM ${rankedTable} AS r WHERE r.grp = g.grp AND r.k = g.k) END`;
  const totalMedian = (column: string, count: string) =>
    `SELECT ${column} FROM qualifying WHERE ${column} IS NOT NULL
    ORDER BY ${column} LIMIT 1 OFFSET (SELECT (${count} - 1) / 2 FROM counted)`;
  const groupKeys = groupBys.map(groupKeySql);
  const figures = "la, ld, tf, tm, fl, fx, ai";
  const keyed = groupKeys.map((_, i) => `SELECT ${i} AS grp, k${i} AS k, ${figures} FROM qualifying`).join("\n  UNION ALL\n  ");
  const keyOf = (k: string) =>
    groupKeys.length === 1
      ? (groupKeys[0] as (typeof groupKeys)[number]).key(k)
      : `CASE g.grp ${groupKeys.map((key, i) => `WHEN ${i} THEN ${key.key(k)}`).join(" ")} END`;
  const sums = `COUNT(*) AS pullRequests,
    COALESCE(SUM(la), 0) AS linesAdded, COALESCE(SUM(ld), 0) AS linesDeleted,
    COALESCE(SUM(fl), 0) AS serviceIssuesFlagged, COALESCE(SUM(fx), 0) AS serviceIssuesFixed,
    COALESCE(SUM(ai), 0) AS aiLinesAuthored, COUNT(ai) AS pullRequestsWithAiData`;

  const sql = `WITH metrics AS (
  SELECT ${groupKeys.map((key, i) => `${key.row} AS k${i}`).join(", ")}, p.lines_added AS la, p.lines_deleted AS ld,
    p.first_reviewed_at - p.created_at AS tf, p.merged_at - p.created_at AS tm,
    CASE WHEN p.first_finding_at >= ?2 AND p.last_finding_at <= ?3 THEN p.posted_findings
      WHEN p.first_finding_at IS NULL OR p.first_finding_at > ?3 OR p.last_finding_at < ?2 THEN 0
      ELSE (SELECT COUNT(*) FROM findings AS f
        WHERE f.pr_id = p.id AND f.posted = 1 AND f.created_at BETWEEN ?2 AND ?3) END AS fl,
    CASE WHEN p.first_finding_at >= ?2 AND p.last_finding_at <= ?3 THEN p.fixed_findings
      WHEN p.first_finding_at IS NULL OR p.first_finding_at > ?3 OR p.last_finding_at < ?2 OR p.fixed_findings = 0 THEN 0
      ELSE (SELECT COUNT(*) FROM findings AS f
        WHERE f.pr_id = p.id AND f.posted = 1 AND f.ai_addressed = 1 AND f.created_at BETWEEN ?2 AND ?3) END AS fx,
    p.ai_lines AS ai
  FROM (SELECT id FROM (${unionAll(candidates)}) LIMIT -1) AS c
  JOIN pull_requests AS p ON p.id = c.id
  WHERE ${authors ? `lower(p.author) IN (SELECT value FROM json_each(${authors})) AND ` : ""}(p.first_reviewed_at >= ?2 OR p.last_reviewed_at <= ?3 OR EXISTS (SELECT 1 FROM reviews AS r
    WHERE r.pr_id = p.id AND r.status = 'completed' AND r.completed_at BETWEEN ?2 AND ?3))
),
qualifying AS MATERIALIZED (SELECT ${groupKeys.map((_, i) => `k${i}`).join(", ")}, ${figures} FROM metrics),
keyed AS (${keyed}),
gate AS MATERIALIZED (SELECT CASE WHEN (SELECT COUNT(*) FROM qualifying) <= ${limits.maxSortedArray} THEN 1
  ELSE (SELECT MAX(n) <= ${limits.maxSortedArray} FROM (SELECT COUNT(*) AS n FROM keyed GROUP BY grp, k)) END AS arrays),
by_group AS MATERIALIZED (SELECT grp, k, ${sums}, COUNT(tf) AS nf, COUNT(tm) AS nm,
    ${sorted("tf")} AS af, ${sorted("tm")} AS am FROM keyed GROUP BY grp, k),
ranked_tf AS MATERIALIZED (${ranked("tf", "nf")}),
ranked_tm AS MATERIALIZED (${ranked("tm", "nm")}),
counted AS (SELECT SUM(nf) AS nf, SUM(nm) AS nm FROM by_group WHERE grp = 0)
SELECT g.grp AS grouping, ${keyOf("g.k")} AS key, g.pullRequests, g.linesAdded, g.linesDeleted, g.serviceIssuesFlagged,
  g.serviceIssuesFixed, g.aiLinesAuthored, g.pullRequestsWithAiData,
  ${median("g.af", "g.nf", "ranked_tf")} AS medianMsToFirstReview,
  ${median("g.am", "g.nm", "ranked_tm")} AS medianMsToMerge,
  (${totalMedian("tf", "nf")}) AS totalMedianMsToFirstReview,
  (${totalMedian("tm", "nm")}) AS totalMedianMsToMerge
FROM by_group AS g`;
  return { sql, params };
}
