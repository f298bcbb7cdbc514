import { DAY_MS } from "../lib/time";

/**
 * The review span of a pull request: when its completed reviews happened relative to its merge.
 * Derived data on `pull_requests` (see d1-schema.ts), recomputed by the event write path for every
 * pull request a batch touches, and read by the analytics walk (storage/analytics.ts):
 *
 * - `first_reviewed_at`, `last_reviewed_at`: earliest and latest completed review.
 * - `after_merge_tier`: the gap tier of `last_reviewed_at - merged_at` when some completed review
 *   lies after the merge. A pull request merged before a window starts can only qualify through
 *   such a review, so within one tier it was merged less than the tier's bound before the window.
 * - `before_merge_tier`: the same for `merged_at - first_reviewed_at` and merges after the window.
 *
 * Tiers are geometric, so each tier's range around a window is at most twice as wide as the gaps
 * it holds: a review two years from its merge sits in the last tier with the few like it, and widens
 * nothing for the pull requests reviewed within days.
 */

/** Exclusive upper bounds (ms) of the gap tiers; tier k holds gaps in [bound(k-1), bound(k)). */
export const GAP_TIER_BOUNDS_MS: readonly number[] = [1, 2, 4, 8, 32, 128, 512].map((days) => days * DAY_MS);

/** Tiers are numbered 0 to LAST_GAP_TIER; the last one has no upper bound. */
export const LAST_GAP_TIER = GAP_TIER_BOUNDS_MS.length;

/** SQL for the tier of a gap (an SQL expression in ms): NULL when the gap is NULL or not positive. */
export function gapTierSql(gap: string): string {
  const steps = GAP_TIER_BOUNDS_MS.map((bound, tier) => `WHEN ${gap} < ${bound} THEN ${tier}`).join(" ");
  return `CASE WHEN ${gap} > 0 THEN CASE ${steps} ELSE ${LAST_GAP_TIER} END END`;
}

/**
 * Recomputes the review span of the pull requests whose ids `targets` (a SELECT of one column named
 * `id`) yields, from their merge and reviews as stored, so the result does not depend on the order
 * in which events arrived. Set-based (one statement for any number of pull requests), and it
 * writes only the rows whose span changed.
 */
export function refreshReviewSpansSql(targets: string): string {
  return `
UPDATE pull_requests AS p SET
  first_reviewed_at = span.first_at, last_reviewed_at = span.last_at,
  after_merge_tier = span.after_tier, before_merge_tier = span.before_tier
FROM (
  SELECT id, first_at, last_at,
    ${gapTierSql("last_at - merged_at")} AS after_tier,
    ${gapTierSql("merged_at - first_at")} AS before_tier
  FROM (
    SELECT t.id AS id, q.merged_at AS merged_at, MIN(r.completed_at) AS first_at, MAX(r.completed_at) AS last_at
    FROM (${targets}) AS t
    JOIN pull_requests AS q ON q.id = t.id
    LEFT JOIN reviews AS r ON r.pr_id = t.id AND r.status = 'completed'
    GROUP BY t.id
  )
) AS span
WHERE p.id = span.id
  AND (p.first_reviewed_at IS NOT span.first_at OR p.last_reviewed_at IS NOT span.last_at
    OR p.after_merge_tier IS NOT span.after_tier OR p.before_merge_tier IS NOT span.before_tier)`;
}
