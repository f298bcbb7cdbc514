import type { Event } from "../schemas/events";

/**
 * Stores a validated event batch in one D1 transaction (`batch()`): all of it or nothing.
 * Each event type becomes one set-based upsert over a JSON array (`json_each`), so a batch of
 * 1,000 events is at most five statements with one bound parameter each.
 *
 * Order inside the transaction matters: first every referenced pull request gets a row (so a
 * review arriving before its pull request still has a stable id), then the pull request data,
 * then the rows that point at pull requests, and last the organization's merge/review lag bound
 * (see `orgReviewLag`) over the touched pull requests. Replaying a batch rewrites the same values.
 */
export async function storeEvents(db: D1Database, events: readonly Event[]): Promise<void> {
  if (events.length === 0) return;
  const refs = new Map<string, unknown[]>();
  const pullRequests: unknown[][] = [];
  const reviews: unknown[][] = [];
  const findings: unknown[][] = [];
  const authorship: unknown[][] = [];

  for (const e of events) {
    const orgKey = e.org.toLowerCase();
    const repoKey = e.repo.toLowerCase();
    const ref = [orgKey, repoKey, e.prNumber];
    // JSON of the tuple: unambiguous whatever characters the names hold (a joined string is not).
    const refKey = JSON.stringify(ref);
    if (!refs.has(refKey)) refs.set(refKey, [...ref, e.repo]);
    switch (e.type) {
      case "pull_request":
        pullRequests.push([...ref, e.repo, e.author, e.createdAt, e.mergedAt, e.linesAdded, e.linesDeleted]);
        break;
      case "review":
        reviews.push([...ref, e.reviewId, e.status, e.completedAt]);
        break;
      case "finding":
        findings.push([...ref, e.findingId, e.createdAt, e.posted, e.aiAddressed, e.feedback]);
        break;
      case "ai_authorship":
        authorship.push([...ref, e.sourceId, e.lines]);
        break;
    }
  }

  const statements: D1PreparedStatement[] = [db.prepare(ENSURE_PULL_REQUESTS).bind(JSON.stringify([...refs.values()]))];
  if (pullRequests.length > 0) statements.push(db.prepare(UPSERT_PULL_REQUESTS).bind(JSON.stringify(pullRequests)));
  if (reviews.length > 0) statements.push(db.prepare(UPSERT_REVIEWS).bind(JSON.stringify(reviews)));
  if (findings.length > 0) statements.push(db.prepare(UPSERT_FINDINGS).bind(JSON.stringify(findings)));
  if (authorship.length > 0) statements.push(db.prepare(UPSERT_AI_AUTHORSHIP).bind(JSON.stringify(authorship)));
  if (pullRequests.length > 0 || reviews.length > 0) {
    statements.push(db.prepare(WIDEN_REVIEW_LAG).bind(JSON.stringify([...refs.values()])));
  }
  await db.batch(statements);
}

// `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT's join.
const ENSURE_PULL_REQUESTS = `
INSERT INTO pull_requests (org_key, repo_key, pr_number, repo)
SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?1) WHERE true
ON CONFLICT (org_key, repo_key, pr_number) DO NOTHING`;

const UPSERT_PULL_REQUESTS = `
INSERT INTO pull_requests (org_key, repo_key, pr_number, repo, author, created_at, merged_at, lines_added, lines_deleted)
SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8
FROM json_each(?1) WHERE true
ON CONFLICT (org_key, repo_key, pr_number) DO UPDATE SET
  repo = excluded.repo, author = excluded.author, created_at = excluded.created_at,
  merged_at = excluded.merged_at, lines_added = excluded.lines_added, lines_deleted = excluded.lines_deleted`;

/** Child rows find their pull request through the unique (org_key, repo_key, pr_number) index. */
const childSource = `
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> 0 AND p.repo_key = e.value ->> 1 AND p.pr_number = e.value ->> 2
WHERE true`;

const UPSERT_REVIEWS = `
INSERT INTO reviews (org_key, review_id, pr_id, status, completed_at)
SELECT p.org_key, e.value ->> 3, p.id, e.value ->> 4, e.value ->> 5 ${childSource}
ON CONFLICT (org_key, review_id) DO UPDATE SET
  pr_id = excluded.pr_id, status = excluded.status, completed_at = excluded.completed_at`;

const UPSERT_FINDINGS = `
INSERT INTO findings (org_key, finding_id, pr_id, created_at, posted, ai_addressed, feedback)
SELECT p.org_key, e.value ->> 3, p.id, e.value ->> 4, e.value ->> 5, e.value ->> 6, e.value ->> 7 ${childSource}
ON CONFLICT (org_key, finding_id) DO UPDATE SET
  pr_id = excluded.pr_id, created_at = excluded.created_at, posted = excluded.posted,
  ai_addressed = excluded.ai_addressed, feedback = excluded.feedback`;

const UPSERT_AI_AUTHORSHIP = `
INSERT INTO ai_authorship (org_key, source_id, pr_id, lines)
SELECT p.org_key, e.value ->> 3, p.id, e.value ->> 4 ${childSource}
ON CONFLICT (org_key, source_id) DO UPDATE SET pr_id = excluded.pr_id, lines = excluded.lines`;

/** Widens (never narrows) each organization's merge/review lag bound by the touched pull requests. */
const WIDEN_REVIEW_LAG = `
INSERT INTO org_review_lag (org_key, max_before_merge, max_after_merge)
SELECT p.org_key, MAX(MAX(p.merged_at - r.completed_at, 0)), MAX(MAX(r.completed_at - p.merged_at, 0))
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> 0 AND p.repo_key = e.value ->> 1 AND p.pr_number = e.value ->> 2
JOIN reviews AS r ON r.pr_id = p.id AND r.status = 'completed'
WHERE p.merged_at IS NOT NULL AND r.completed_at IS NOT NULL
GROUP BY p.org_key
ON CONFLICT (org_key) DO UPDATE SET
  max_before_merge = MAX(max_before_merge, excluded.max_before_merge),
  max_after_merge = MAX(max_after_merge, excluded.max_after_merge)`;
