/**
 * The figures of a pull request that do not depend on an analytics window: derived data on
 * `pull_requests` (see d1-schema.ts), recomputed by the event write path (`events.ts`) and by moves
 * of rows (`renames.ts`) for every pull request whose findings, AI-authorship records or line
 * counts may have changed, and read by the analytics summary (`analytics-summary.ts`):
 *
 * - `ai_lines`: the sum of its AI-authorship records, capped at `(lines_added ?? 0) +
 *   (lines_deleted ?? 0)` unless both are null; null when it has none (the export's
 *   `totalAiLinesAuthored`, which depends on no window).
 * - `posted_findings`, `fixed_findings`: how many of its findings were posted, and of them how many
 *   are AI-addressed.
 * - `first_finding_at`, `last_finding_at`: the earliest and latest creation time of its posted
 *   findings (null when none).
 *
 * A row's findings count in a window when posted and created inside it. When its posted findings
 * lie wholly inside the window (`first_finding_at >= start AND last_finding_at <= end`) the counts
 * are the two columns; wholly outside, zero; only a pull request whose findings straddle an edge of
 * the window needs them read.
 */

/** The columns of a pull request that `findingsInWindowSql` reads, as SQL expressions. */
export interface FindingsColumns {
  id: string;
  first: string;
  last: string;
  posted: string;
  fixed: string;
}

/**
 * A pull request's findings in the window [?2, ?3], both counts in one value (the flagged ones
 * times 2^32 plus the AI-addressed ones; `flaggedOf` and `fixedOf` take them apart): from its
 * figures when its posted findings lie wholly inside the window or wholly outside it, else read in
 * one range of `findings_posted_by_pr_outcome`. The export's page and the summary count findings
 * with this one expression.
 */
export function findingsInWindowSql(c: FindingsColumns): string {
  return `CASE WHEN ${c.first} >= ?2 AND ${c.last} <= ?3 THEN ${c.posted} * 4294967296 + ${c.fixed}
      WHEN ${c.first} IS NULL OR ${c.first} > ?3 OR ${c.last} < ?2 THEN 0
      ELSE (SELECT COUNT(*) * 4294967296 + COALESCE(SUM(fi.ai_addressed), 0) FROM findings AS fi
        WHERE fi.pr_id = ${c.id} AND fi.posted = 1 AND fi.created_at BETWEEN ?2 AND ?3) END`;
}

/** The flagged findings of a value of `findingsInWindowSql`. */
export const flaggedOf = (packed: string): string => `(${packed} >> 32)`;
/** The AI-addressed findings of a value of `findingsInWindowSql`. */
export const fixedOf = (packed: string): string => `(${packed} & 4294967295)`;

/** The capped AI lines as SQL, from the sum of the records and the two line counts (SQL expressions). */
export function cappedAiLinesSql(sum: string, added: string, deleted: string): string {
  return `CASE WHEN ${sum} IS NULL OR (${added} IS NULL AND ${deleted} IS NULL) THEN ${sum}
      ELSE MIN(${sum}, COALESCE(${added}, 0) + COALESCE(${deleted}, 0)) END`;
}

/**
 * Recomputes the figures of the pull requests whose ids `targets` (a SELECT of one column named
 * `id`) yields, from their findings, AI-authorship records and line counts as stored, so the result
 * does not depend on the order in which events arrived. Set-based, and it writes only the rows
 * whose figures changed. Each figure reads a covering index (`findings_posted_by_pr_outcome`,
 * `ai_authorship_by_pr`).
 */
export function refreshPullRequestFiguresSql(targets: string): string {
  return `
UPDATE pull_requests AS p SET
  ai_lines = fig.ai_lines, posted_findings = fig.posted, fixed_findings = fig.fixed,
  first_finding_at = fig.first_at, last_finding_at = fig.last_at
FROM (
  SELECT id, ${cappedAiLinesSql("ai_sum", "la", "ld")} AS ai_lines, posted, fixed, first_at, last_at
  FROM (
    SELECT t.id AS id, q.lines_added AS la, q.lines_deleted AS ld,
      (SELECT SUM(a.lines) FROM ai_authorship AS a WHERE a.pr_id = t.id) AS ai_sum,
      (SELECT COUNT(*) FROM findings AS f WHERE f.pr_id = t.id AND f.posted = 1) AS posted,
      (SELECT COUNT(*) FROM findings AS f WHERE f.pr_id = t.id AND f.posted = 1 AND f.ai_addressed = 1) AS fixed,
      (SELECT MIN(f.created_at) FROM findings AS f WHERE f.pr_id = t.id AND f.posted = 1) AS first_at,
      (SELECT MAX(f.created_at) FROM findings AS f WHERE f.pr_id = t.id AND f.posted = 1) AS last_at
    FROM (SELECT DISTINCT id FROM (${targets})) AS t
    JOIN pull_requests AS q ON q.id = t.id
  )
) AS fig
WHERE p.id = fig.id
  AND (p.ai_lines IS NOT fig.ai_lines OR p.posted_findings IS NOT fig.posted OR p.fixed_findings IS NOT fig.fixed
    OR p.first_finding_at IS NOT fig.first_at OR p.last_finding_at IS NOT fig.last_at)`;
}
