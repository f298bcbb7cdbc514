import type { AnalyticsSummaryGroup, AnalyticsSummaryTotals, SummaryGroupBy } from "../schemas/analytics-summary";
import { GAP_TIER_BOUNDS_MS, LAST_GAP_TIER } from "./review-span";

/** What the summary needs, in storage terms: the export's statement input without the page. */
export interface SummaryQuery {
  orgKey: string;
  /** Only this repository (lower-cased), or every repository. */
  repoKey: string | null;
  /** Only these repositories (lower-cased), or no access restriction (an organization admin). */
  accessibleRepoKeys: string[] | null;
  /** Never these repositories (lower-cased; they left the installation). */
  excludedRepoKeys?: string[];
  /** Review window, inclusive, epoch ms. */
  start: number;
  end: number;
  groupBy: SummaryGroupBy;
}

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
export async function summarizeMergedPullRequests(db: D1Database | D1DatabaseSession, q: SummaryQuery): Promise<SummaryFigures> {
  const { sql, params } = summaryStatement(q);
  const result = await db
    .prepare(sql)
    .bind(...params)
    .all<AnalyticsSummaryGroup & { total: number }>();
  const groups: AnalyticsSummaryGroup[] = [];
  let totals: AnalyticsSummaryTotals | undefined;
  for (const { total, key, ...figures } of result.results) {
    if (total === 1) totals = figures;
    else groups.push({ key, ...figures });
  }
  if (!totals) throw new Error("the summary statement returned no totals row");
  return { groups, totals, rowsRead: result.meta.rows_read };
}

const DAY = 86_400_000;
/** Whole UTC days since 1970 of an instant in ms, rounded down also before 1970 (SQLite's `/` truncates). */
const DAY_OF = (ms: string) => `((${ms} - ((${ms} % ${DAY}) + ${DAY}) % ${DAY}) / ${DAY})`;

/**
 * The group key of a row, as SQL: the first day of its merge's UTC day, ISO week (Monday; 1970-01-01
 * was a Thursday, weekday (d + 3) mod 7 from Monday, as `rules/analytics-summary.ts` computes it) or
 * month, or the repository or author as the row spells it. Integer day arithmetic, so a merge a
 * millisecond before midnight stays on its day.
 */
function groupKeySql(groupBy: SummaryGroupBy): string {
  const day = DAY_OF("p.merged_at");
  switch (groupBy) {
    case "day":
      return `date(${day} * 86400, 'unixepoch')`;
    case "week":
      return `date((${day} - ((${day} + 3) % 7 + 7) % 7) * 86400, 'unixepoch')`;
    case "month":
      return `strftime('%Y-%m-01', ${day} * 86400, 'unixepoch')`;
    case "repo":
      return "p.repo";
    case "author":
      return "p.author";
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
 * Then per group, and once for all rows (the totals): the sums, and each median as the value at
 * position floor((n-1)/2) in ascending order, taken with ROW_NUMBER over the group.
 */
export function summaryStatement(q: SummaryQuery): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [q.orgKey, q.start, q.end]; // ?1 ?2 ?3
  const bind = (value: string | number): string => `?${params.push(value)}`;
  const repo = q.repoKey === null ? null : bind(q.repoKey);
  const access = q.accessibleRepoKeys === null ? null : bind(JSON.stringify(q.accessibleRepoKeys));
  const excluded = q.excludedRepoKeys && q.excludedRepoKeys.length > 0 ? bind(JSON.stringify(q.excludedRepoKeys)) : null;

  const range = (index: string, conditions: string[]): string =>
    `SELECT p.id AS id FROM pull_requests AS p INDEXED BY ${index} WHERE ${[
      "p.org_key = ?1",
      ...conditions,
      ...(repo ? [`p.repo_key = ${repo}`] : []),
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

  const median = (column: string, partition: string) => `SELECT ${partition ? "k, " : ""}v FROM (
    SELECT ${partition ? "k, " : ""}${column} AS v,
      ROW_NUMBER() OVER (${partition} ORDER BY ${column}) AS i, COUNT(*) OVER (${partition}) AS n
    FROM qualifying WHERE ${column} IS NOT NULL)
  WHERE i = (n - 1) / 2 + 1`;
  const sums = `COUNT(*) AS pullRequests,
    COALESCE(SUM(la), 0) AS linesAdded, COALESCE(SUM(ld), 0) AS linesDeleted,
    COALESCE(SUM(fl), 0) AS serviceIssuesFlagged, COALESCE(SUM(fx), 0) AS serviceIssuesFixed,
    COALESCE(SUM(ai), 0) AS aiLinesAuthored, COUNT(ai) AS pullRequestsWithAiData`;

  const sql = `WITH metrics AS (
  SELECT ${groupKeySql(q.groupBy)} AS k, p.lines_added AS la, p.lines_deleted AS ld,
    p.first_reviewed_at - p.created_at AS tf, p.merged_at - p.created_at AS tm,
    (SELECT COUNT(*) FROM findings AS f
      WHERE f.pr_id = p.id AND f.posted = 1 AND f.created_at BETWEEN ?2 AND ?3) AS fl,
    (SELECT COUNT(*) FROM findings AS f
      WHERE f.pr_id = p.id AND f.posted = 1 AND f.ai_addressed = 1 AND f.created_at BETWEEN ?2 AND ?3) AS fx,
    (SELECT SUM(a.lines) FROM ai_authorship AS a WHERE a.pr_id = p.id) AS ai_sum
  FROM (${unionAll(candidates)}) AS c
  JOIN pull_requests AS p ON p.id = c.id
  WHERE p.first_reviewed_at >= ?2 OR p.last_reviewed_at <= ?3 OR EXISTS (SELECT 1 FROM reviews AS r
    WHERE r.pr_id = p.id AND r.status = 'completed' AND r.completed_at BETWEEN ?2 AND ?3)
),
qualifying AS MATERIALIZED (
  SELECT k, la, ld, tf, tm, fl, fx,
    CASE WHEN ai_sum IS NULL OR (la IS NULL AND ld IS NULL) THEN ai_sum
      ELSE MIN(ai_sum, COALESCE(la, 0) + COALESCE(ld, 0)) END AS ai
  FROM metrics
),
by_group AS (SELECT k, ${sums} FROM qualifying GROUP BY k),
first_review AS (${median("tf", "PARTITION BY k")}),
to_merge AS (${median("tm", "PARTITION BY k")})
SELECT 0 AS total, g.k AS key, g.pullRequests, g.linesAdded, g.linesDeleted, g.serviceIssuesFlagged,
  g.serviceIssuesFixed, g.aiLinesAuthored, g.pullRequestsWithAiData,
  f.v AS medianMsToFirstReview, m.v AS medianMsToMerge
FROM by_group AS g LEFT JOIN first_review AS f ON f.k IS g.k LEFT JOIN to_merge AS m ON m.k IS g.k
UNION ALL
SELECT 1, NULL, ${sums},
  (${median("tf", "")}), (${median("tm", "")})
FROM qualifying`;
  return { sql, params };
}

/** D1 allows at most 5 terms per compound SELECT; longer unions are nested in groups of at most 5. */
function unionAll(terms: string[]): string {
  if (terms.length <= 5) return terms.join("\nUNION ALL\n");
  const size = Math.ceil(terms.length / 5);
  const groups: string[] = [];
  for (let i = 0; i < terms.length; i += size) {
    const group = terms.slice(i, i + size);
    groups.push(group.length === 1 ? (group[0] as string) : `SELECT * FROM (${unionAll(group)})`);
  }
  return groups.join("\nUNION ALL\n");
}
