import { type SQL, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";

/** What the analytics page needs, in storage terms. */
export interface MergedPullRequestQuery {
  orgKey: string;
  /** Only this repository (lower-cased), or every repository. */
  repoKey: string | null;
  /** Only these repositories (lower-cased), or no access restriction (an organization admin). */
  accessibleRepoKeys: string[] | null;
  /** Never these repositories (lower-cased; they left the installation). Usually empty. */
  excludedRepoKeys?: string[];
  /** Review window, inclusive, epoch ms. */
  start: number;
  end: number;
  /** Strictly after this (merged_at, id) position in (merged_at DESC, id DESC) order. */
  after: { mergedAt: number; id: number } | null;
  limit: number;
}

export interface MergedPullRequest {
  id: number;
  repo: string;
  prNumber: number;
  author: string;
  createdAt: number;
  mergedAt: number;
  linesAdded: number | null;
  linesDeleted: number | null;
  firstReviewedAt: number;
  findingsFlagged: number;
  findingsFixed: number;
  aiLines: number | null;
}

/**
 * Merged pull requests with at least one review completed inside the window, newest merge first,
 * with their metrics. One statement; the plan (docs/performance.md) walks the organization's (or
 * repository's) merged pull requests backwards in index order from the cursor and computes the
 * metrics only for the page rows, each from a covering index.
 *
 * The walk is bounded by merge time: a qualifying pull request was merged within
 * [start - maxAfterMerge, end + maxBeforeMerge] (see `orgReviewLag`). SQLite uses one upper bound
 * to limit an index range, so the window's and the cursor's upper bounds are one MIN(...).
 * `merged_at IS NOT NULL` rows always come from a pull_request event (placeholders have none).
 */
export async function listMergedPullRequests(
  db: D1Database | D1DatabaseSession,
  q: MergedPullRequestQuery,
): Promise<MergedPullRequest[]> {
  // Rows as arrays (D1 raw()): a page is 101 rows, and arrays cross the binding cheaper than objects.
  const rows = await drizzle(db as D1Database).values(mergedPullRequestsSql(q));
  return rows.map((row) => Object.fromEntries(PAGE_COLUMNS.map((name, i) => [name, row[i]])) as unknown as MergedPullRequest);
}

/** The select list of `mergedPullRequestsSql`, in order. */
const PAGE_COLUMNS = [
  "id",
  "repo",
  "prNumber",
  "author",
  "createdAt",
  "mergedAt",
  "linesAdded",
  "linesDeleted",
  "firstReviewedAt",
  "findingsFlagged",
  "findingsFixed",
  "aiLines",
] as const satisfies readonly (keyof MergedPullRequest)[];

/** The statement itself, shared with the benchmark and the query-plan test so they run the same SQL. */
export function mergedPullRequestsSql(q: MergedPullRequestQuery): SQL {
  const upper = q.after
    ? sql`MIN(${q.end} + (SELECT before FROM lag), ${q.after.mergedAt})`
    : sql`${q.end} + (SELECT before FROM lag)`;
  const filters: SQL[] = [
    sql`p.org_key = ${q.orgKey}`,
    sql`p.merged_at >= ${q.start} - (SELECT after FROM lag)`,
    sql`p.merged_at <= ${upper}`,
  ];
  if (q.after) filters.push(sql`(p.merged_at < ${q.after.mergedAt} OR p.id < ${q.after.id})`);
  if (q.repoKey !== null) filters.push(sql`p.repo_key = ${q.repoKey}`);
  if (q.accessibleRepoKeys !== null) {
    filters.push(sql`p.repo_key IN (SELECT value FROM json_each(${JSON.stringify(q.accessibleRepoKeys)}))`);
  }
  if (q.excludedRepoKeys && q.excludedRepoKeys.length > 0) {
    filters.push(sql`p.repo_key NOT IN (SELECT value FROM json_each(${JSON.stringify(q.excludedRepoKeys)}))`);
  }
  filters.push(sql`EXISTS (
    SELECT 1 FROM reviews AS r
    WHERE r.pr_id = p.id AND r.status = 'completed' AND r.completed_at BETWEEN ${q.start} AND ${q.end})`);

  return sql`
    WITH lag AS (
      SELECT COALESCE(MAX(max_before_merge), 0) AS before, COALESCE(MAX(max_after_merge), 0) AS after
      FROM org_review_lag WHERE org_key = ${q.orgKey}
    ),
    page AS (
      SELECT p.id, p.repo, p.pr_number, p.author, p.created_at, p.merged_at, p.lines_added, p.lines_deleted
      FROM pull_requests AS p
      WHERE ${sql.join(filters, sql` AND `)}
      ORDER BY p.merged_at DESC, p.id DESC
      LIMIT ${q.limit}
    )
    SELECT
      page.id AS id, page.repo AS repo, page.pr_number AS prNumber, page.author AS author,
      page.created_at AS createdAt, page.merged_at AS mergedAt,
      page.lines_added AS linesAdded, page.lines_deleted AS linesDeleted,
      (SELECT MIN(r.completed_at) FROM reviews AS r WHERE r.pr_id = page.id AND r.status = 'completed') AS firstReviewedAt,
      (SELECT COUNT(*) FROM findings AS f
        WHERE f.pr_id = page.id AND f.posted = 1 AND f.created_at BETWEEN ${q.start} AND ${q.end}) AS findingsFlagged,
      (SELECT COUNT(*) FROM findings AS f
        WHERE f.pr_id = page.id AND f.posted = 1 AND f.created_at BETWEEN ${q.start} AND ${q.end} AND f.ai_addressed = 1) AS findingsFixed,
      (SELECT SUM(a.lines) FROM ai_authorship AS a WHERE a.pr_id = page.id) AS aiLines
    FROM page
    ORDER BY page.merged_at DESC, page.id DESC`;
}
