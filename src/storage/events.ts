import { foldName } from "../lib/names";
import type { Event } from "../schemas/events";
import { homesOf } from "./directory";
import { refreshReviewSpansSql } from "./review-span";

/** What one `storeEvents` call did to D1. */
export interface StoredEvents {
  /** D1's `meta.rows_written` summed over the batch's statements (index entries included). */
  rowsWritten: number;
}

/**
 * Stores a validated event batch in one D1 transaction (`batch()`): all of it or nothing.
 * Each event type becomes one set-based upsert over a JSON array (`json_each`), so a batch of
 * 1,000 events is at most eight statements with at most one bound parameter each.
 *
 * Versions (contract section 5): every row keeps the `updatedAt` of the event it holds in
 * `updated_at`, and an event replaces a row only when its `updatedAt` is strictly greater. So for
 * one record the greatest `updatedAt` wins whatever the arrival order, an older or equal one
 * changes nothing (equal version, different content: the state stored first stays), and a replay
 * writes nothing at all. Inside a batch the same rule picks one event per record before anything
 * is sent: the greatest `updatedAt`, the earliest in the batch among equals — the same result as
 * storing the batch's events one by one in order.
 *
 * Order inside the transaction: pull request data first; then a placeholder row for each pull
 * request that a child event will point at but that has no row yet (a review arriving before its
 * pull request still gets a stable id; a placeholder has `updated_at` NULL, so the real
 * pull_request event always replaces it); then reviews, findings and authorship records; last
 * the review span (see `review-span.ts`) of every pull request whose merge or reviews the batch
 * may have changed, recomputed from what is stored and written only where it changed. A review
 * that moves to another pull request also changes the span of the one it leaves: that one is
 * noted in `pull_requests_to_refresh` just before the reviews are stored, and the note is gone
 * again at the end of the batch.
 *
 * Events name organizations by login; rows are keyed by the organization's home key
 * (`durable/directory.ts`), so a renamed organization's events land with its earlier rows. `homes`
 * maps each folded login to its home; without it, one read of the directory resolves the batch's
 * distinct logins before the transaction (a login the directory does not name is its own home),
 * and the transaction checks first that the directory still says so. If a rename's directory write
 * came in between (after which the consumer gathers the rows under the new login's folded key
 * once: rows committed after that would stay stranded there), the transaction writes nothing and
 * the batch is resolved and stored again.
 */
export async function storeEvents(
  db: D1Database,
  events: readonly Event[],
  homes?: ReadonlyMap<string, string>,
): Promise<StoredEvents> {
  if (homes) return storeAt(db, events, homes, false);
  for (let attempt = 1; ; attempt++) {
    const read = await homesOf(
      db,
      events.map((e) => e.org),
    );
    try {
      return await storeAt(db, events, read, true);
    } catch (error) {
      if (attempt >= DIRECTORY_ATTEMPTS || !String(error).includes(DIRECTORY_MOVED)) throw error;
    }
  }
}

/** How often a batch is resolved again when the directory moves under it (renames are rare). */
const DIRECTORY_ATTEMPTS = 3;

async function storeAt(
  db: D1Database,
  events: readonly Event[],
  homeOf: ReadonlyMap<string, string>,
  checkHomes: boolean,
): Promise<StoredEvents> {
  const pullRequests = new Latest();
  const reviews = new Latest();
  const findings = new Latest();
  const authorship = new Latest();

  for (const e of events) {
    // Event names are validated GitHub names (ASCII): toLowerCase below is the ASCII fold too.
    const loginKey = foldName(e.org);
    const orgKey = homeOf.get(loginKey) ?? loginKey;
    const repoKey = e.repo.toLowerCase();
    const ref = [orgKey, repoKey, e.prNumber, e.repo] as const;
    switch (e.type) {
      case "pull_request":
        pullRequests.offer([orgKey, repoKey, e.prNumber], e.updatedAt, [
          ...ref,
          e.author,
          e.createdAt,
          e.mergedAt,
          e.linesAdded,
          e.linesDeleted,
          e.updatedAt,
        ]);
        break;
      case "review":
        reviews.offer([orgKey, e.reviewId], e.updatedAt, [...ref, e.reviewId, e.updatedAt, e.status, e.completedAt]);
        break;
      case "finding":
        findings.offer([orgKey, e.findingId], e.updatedAt, [
          ...ref,
          e.findingId,
          e.updatedAt,
          e.createdAt,
          e.posted,
          e.aiAddressed,
          e.feedback,
        ]);
        break;
      case "ai_authorship":
        authorship.offer([orgKey, e.sourceId], e.updatedAt, [...ref, e.sourceId, e.updatedAt, e.lines]);
        break;
    }
  }

  // Children whose pull request has no event in this batch may need a placeholder row. Child rows
  // are laid out as reference (0-3), id (4), version (5), then their data; a placeholder entry is
  // the reference (0-3), the child's table (4), its id and version (5, 6).
  const inBatch = new Set(pullRequests.rows().map((row) => refKey(row)));
  const placeholders: unknown[][] = [];
  for (const [table, rows] of [
    ["reviews", reviews],
    ["findings", findings],
    ["ai_authorship", authorship],
  ] as const) {
    for (const row of rows.rows()) {
      if (!inBatch.has(refKey(row))) placeholders.push([row[0], row[1], row[2], row[3], table, row[4], row[5]]);
    }
  }
  // The review span depends on merge times and completed reviews only.
  const spanRefs = new Map<string, unknown[]>();
  for (const row of [...pullRequests.rows(), ...reviews.rows()]) spanRefs.set(refKey(row), row.slice(0, 3));

  const statements: D1PreparedStatement[] = [];
  const add = (sql: string, rows: unknown[][]) => {
    if (rows.length > 0) statements.push(db.prepare(sql).bind(JSON.stringify(rows)));
  };
  if (checkHomes) add(FAIL_IF_HOMES_MOVED, [...homeOf]);
  add(UPSERT_PULL_REQUESTS, pullRequests.rows());
  add(ENSURE_PLACEHOLDERS, placeholders);
  add(NOTE_PULL_REQUESTS_LEFT_BY_REVIEWS, reviews.rows());
  add(UPSERT_REVIEWS, reviews.rows());
  add(UPSERT_FINDINGS, findings.rows());
  add(UPSERT_AI_AUTHORSHIP, authorship.rows());
  add(REFRESH_REVIEW_SPANS, [...spanRefs.values()]);
  if (reviews.rows().length > 0) statements.push(db.prepare(FORGET_NOTED_PULL_REQUESTS));
  if (statements.length <= (checkHomes ? 1 : 0)) return { rowsWritten: 0 };
  const results = await db.batch(statements);
  return { rowsWritten: results.reduce((sum, r) => sum + (r.meta.rows_written ?? 0), 0) };
}

/** JSON of the tuple: unambiguous whatever characters the names hold (a joined string is not). */
const refKey = (row: readonly unknown[]): string => JSON.stringify(row.slice(0, 3));

/** Per record, the row of the event with the greatest version; the first among equals stays. */
class Latest {
  private readonly byRecord = new Map<string, { version: number; row: unknown[] }>();

  offer(record: readonly unknown[], version: number, row: unknown[]): void {
    const key = JSON.stringify(record);
    const held = this.byRecord.get(key);
    if (held === undefined || version > held.version) this.byRecord.set(key, { version, row });
  }

  rows(): unknown[][] {
    return [...this.byRecord.values()].map((v) => v.row);
  }
}

/**
 * Fails the transaction (SQLite has no RAISE outside triggers: an integer overflow, evaluated only
 * when needed) when a folded login of the batch no longer resolves to the home it was stored under.
 */
const DIRECTORY_MOVED = "integer overflow";
const FAIL_IF_HOMES_MOVED = `
SELECT CASE WHEN EXISTS (
  SELECT 1 FROM json_each(?1) AS h
  WHERE coalesce((SELECT home_key FROM organization_names WHERE login_key = h.value ->> 0), h.value ->> 0) <> h.value ->> 1
) THEN abs(-9223372036854775807 - 1) ELSE 0 END AS moved`;

// `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT's join.
// Every DO UPDATE is guarded by the version: an event that is not newer writes nothing. A stored
// version of NULL (placeholder pull request, row from before versions) is older than any event.

const UPSERT_PULL_REQUESTS = `
INSERT INTO pull_requests (org_key, repo_key, pr_number, repo, author, created_at, merged_at, lines_added, lines_deleted, updated_at)
SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9
FROM json_each(?1) WHERE true
ON CONFLICT (org_key, repo_key, pr_number) DO UPDATE SET
  repo = excluded.repo, author = excluded.author, created_at = excluded.created_at,
  merged_at = excluded.merged_at, lines_added = excluded.lines_added, lines_deleted = excluded.lines_deleted,
  updated_at = excluded.updated_at
WHERE pull_requests.updated_at IS NULL OR excluded.updated_at > pull_requests.updated_at`;

/**
 * A placeholder only where it is needed: no row for the pull request yet, and the child event will
 * be stored (its record is not already stored at the same or a newer version). An old child event
 * so leaves no trace, and a replay inserts nothing. DO NOTHING covers siblings of one batch that
 * need the same placeholder.
 */
const ENSURE_PLACEHOLDERS = `
INSERT INTO pull_requests (org_key, repo_key, pr_number, repo)
SELECT e.value ->> 0, e.value ->> 1, e.value ->> 2, e.value ->> 3
FROM json_each(?1) AS e
WHERE NOT EXISTS (
    SELECT 1 FROM pull_requests AS p
    WHERE p.org_key = e.value ->> 0 AND p.repo_key = e.value ->> 1 AND p.pr_number = e.value ->> 2)
  AND NOT EXISTS (
    SELECT 1 FROM reviews AS r
    WHERE e.value ->> 4 = 'reviews' AND r.org_key = e.value ->> 0 AND r.review_id = e.value ->> 5
      AND r.updated_at >= e.value ->> 6)
  AND NOT EXISTS (
    SELECT 1 FROM findings AS f
    WHERE e.value ->> 4 = 'findings' AND f.org_key = e.value ->> 0 AND f.finding_id = e.value ->> 5
      AND f.updated_at >= e.value ->> 6)
  AND NOT EXISTS (
    SELECT 1 FROM ai_authorship AS a
    WHERE e.value ->> 4 = 'ai_authorship' AND a.org_key = e.value ->> 0 AND a.source_id = e.value ->> 5
      AND a.updated_at >= e.value ->> 6)
ON CONFLICT (org_key, repo_key, pr_number) DO NOTHING`;

/** Child rows find their pull request through the unique (org_key, repo_key, pr_number) index. */
const childSource = `
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> 0 AND p.repo_key = e.value ->> 1 AND p.pr_number = e.value ->> 2
WHERE true`;

const UPSERT_REVIEWS = `
INSERT INTO reviews (org_key, review_id, pr_id, updated_at, status, completed_at)
SELECT p.org_key, e.value ->> 4, p.id, e.value ->> 5, e.value ->> 6, e.value ->> 7 ${childSource}
ON CONFLICT (org_key, review_id) DO UPDATE SET
  pr_id = excluded.pr_id, status = excluded.status, completed_at = excluded.completed_at, updated_at = excluded.updated_at
WHERE reviews.updated_at IS NULL OR excluded.updated_at > reviews.updated_at`;

const UPSERT_FINDINGS = `
INSERT INTO findings (org_key, finding_id, pr_id, updated_at, created_at, posted, ai_addressed, feedback)
SELECT p.org_key, e.value ->> 4, p.id, e.value ->> 5, e.value ->> 6, e.value ->> 7, e.value ->> 8, e.value ->> 9 ${childSource}
ON CONFLICT (org_key, finding_id) DO UPDATE SET
  pr_id = excluded.pr_id, created_at = excluded.created_at, posted = excluded.posted,
  ai_addressed = excluded.ai_addressed, feedback = excluded.feedback, updated_at = excluded.updated_at
WHERE findings.updated_at IS NULL OR excluded.updated_at > findings.updated_at`;

const UPSERT_AI_AUTHORSHIP = `
INSERT INTO ai_authorship (org_key, source_id, pr_id, updated_at, lines)
SELECT p.org_key, e.value ->> 4, p.id, e.value ->> 5, e.value ->> 6 ${childSource}
ON CONFLICT (org_key, source_id) DO UPDATE SET
  pr_id = excluded.pr_id, lines = excluded.lines, updated_at = excluded.updated_at
WHERE ai_authorship.updated_at IS NULL OR excluded.updated_at > ai_authorship.updated_at`;

/**
 * Notes the pull request a review is about to leave: the review is stored, points elsewhere now,
 * and the event is newer than the stored review (so the upsert below will move it). Nothing is
 * written otherwise, so a replay still writes nothing.
 */
const NOTE_PULL_REQUESTS_LEFT_BY_REVIEWS = `
INSERT INTO pull_requests_to_refresh (pr_id)
SELECT r.pr_id
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> 0 AND p.repo_key = e.value ->> 1 AND p.pr_number = e.value ->> 2
JOIN reviews AS r ON r.org_key = e.value ->> 0 AND r.review_id = e.value ->> 4
WHERE r.pr_id <> p.id AND (r.updated_at IS NULL OR e.value ->> 5 > r.updated_at)
ON CONFLICT (pr_id) DO NOTHING`;

/** The pull requests the batch names through merges or reviews, and those noted above. */
const REFRESH_REVIEW_SPANS = refreshReviewSpansSql(`
  SELECT p.id AS id FROM json_each(?1) AS e
  JOIN pull_requests AS p
    ON p.org_key = e.value ->> 0 AND p.repo_key = e.value ->> 1 AND p.pr_number = e.value ->> 2
  UNION
  SELECT pr_id AS id FROM pull_requests_to_refresh`);

const FORGET_NOTED_PULL_REQUESTS = "DELETE FROM pull_requests_to_refresh";
