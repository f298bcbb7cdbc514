import { refreshReviewSpansSql } from "./review-span";

/**
 * Moves an organization's analytics rows from one repository name to another (a GitHub rename):
 * pull requests, and with them their reviews, findings and AI authorship (which point at the pull
 * request's id). One D1 transaction; idempotent (a second run finds nothing under the old name).
 *
 * A pull request may already have a row under the new name (a delivery or reviewer event that used
 * the new name arrived before the rename was applied). Then the two rows become one: the newer
 * version of the pull request's data wins (as in `storeEvents`), the children of the old row move
 * to the surviving row, and the old row goes. The surviving row's review span (review-span.ts) is
 * recomputed in the same transaction: it gained the old row's reviews and maybe its merge, and the
 * export finds rows by their span (and shows its first review).
 */
export async function renameRepositoryRows(db: D1Database, orgKey: string, fromKey: string, toName: string): Promise<void> {
  const toKey = toName.toLowerCase();
  const statements: D1PreparedStatement[] = [];
  if (fromKey !== toKey) {
    statements.push(db.prepare(NOTE_MERGED).bind(orgKey, fromKey, toKey));
    statements.push(db.prepare(MERGE_NEWER_DATA).bind(orgKey, fromKey, toKey));
    for (const table of ["reviews", "findings", "ai_authorship"]) {
      statements.push(db.prepare(MOVE_CHILDREN.replaceAll("<table>", table)).bind(orgKey, fromKey, toKey));
    }
    statements.push(db.prepare(DROP_MERGED).bind(orgKey, fromKey, toKey));
    statements.push(db.prepare(REFRESH_NOTED_SPANS), db.prepare(FORGET_NOTED));
  }
  statements.push(
    db
      .prepare("UPDATE pull_requests SET repo_key = ?3, repo = ?4 WHERE org_key = ?1 AND repo_key = ?2")
      .bind(orgKey, fromKey, toKey, toName),
  );
  await db.batch(statements);
}

/**
 * The surviving rows of pull requests held under both names, noted for the span refresh at the end
 * of the batch (as the event write path notes the rows a review leaves).
 */
const NOTE_MERGED = `
INSERT INTO pull_requests_to_refresh (pr_id)
SELECT t.id FROM pull_requests AS o
JOIN pull_requests AS t ON t.org_key = o.org_key AND t.repo_key = ?3 AND t.pr_number = o.pr_number
WHERE o.org_key = ?1 AND o.repo_key = ?2
ON CONFLICT (pr_id) DO NOTHING`;

/** Where both names hold the same pull request: the old row's data when its version is newer. */
const MERGE_NEWER_DATA = `
UPDATE pull_requests AS t SET
  author = o.author, created_at = o.created_at, merged_at = o.merged_at,
  lines_added = o.lines_added, lines_deleted = o.lines_deleted, updated_at = o.updated_at
FROM pull_requests AS o
WHERE t.org_key = ?1 AND t.repo_key = ?3 AND o.org_key = ?1 AND o.repo_key = ?2 AND o.pr_number = t.pr_number
  AND o.updated_at IS NOT NULL AND (t.updated_at IS NULL OR o.updated_at > t.updated_at)`;

const MOVE_CHILDREN = `
UPDATE <table> SET pr_id = (
  SELECT t.id FROM pull_requests AS o
  JOIN pull_requests AS t ON t.org_key = o.org_key AND t.repo_key = ?3 AND t.pr_number = o.pr_number
  WHERE o.id = <table>.pr_id)
WHERE org_key = ?1 AND pr_id IN (
  SELECT o.id FROM pull_requests AS o
  JOIN pull_requests AS t ON t.org_key = o.org_key AND t.repo_key = ?3 AND t.pr_number = o.pr_number
  WHERE o.org_key = ?1 AND o.repo_key = ?2)`;

const DROP_MERGED = `
DELETE FROM pull_requests
WHERE org_key = ?1 AND repo_key = ?2
  AND pr_number IN (SELECT pr_number FROM pull_requests WHERE org_key = ?1 AND repo_key = ?3)`;

const REFRESH_NOTED_SPANS = refreshReviewSpansSql("SELECT pr_id AS id FROM pull_requests_to_refresh");

const FORGET_NOTED = "DELETE FROM pull_requests_to_refresh";
