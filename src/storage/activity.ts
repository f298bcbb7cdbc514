/**
 * The activity the event write path reports to each organization's object (contract section 20):
 * for every pull request a batch names through its own event or a review, as stored after the
 * batch (the same transaction, last statement), its author and the newest of its creation, merge
 * and last completed review. Read from the stored row, not the events, so the answer does not
 * depend on arrival order: a review stored before its pull request counts once the pull request
 * names its author. Placeholders (no author yet) report nothing.
 */

/** One pull request's activity, as `ACTIVITY_OF_BATCH` answers it. */
export interface StoredActivity {
  prId: number;
  orgKey: string;
  author: string;
  at: number;
  /** The batch carried the pull request's own event (not only a review of it). */
  learned: boolean;
}

/** A pull request the batch names: its key, and whether its own event was in the batch. */
export interface ActivityRef {
  orgKey: string;
  repoKey: string;
  prNumber: number;
  learned: boolean;
}

export const ACTIVITY_OF_BATCH = `
SELECT p.id AS prId, p.org_key AS orgKey, p.author AS author,
  max(coalesce(p.created_at, 0), coalesce(p.merged_at, 0), coalesce(p.last_reviewed_at, 0)) AS at,
  max(e.value ->> '$.learned') AS learned
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> '$.orgKey' AND p.repo_key = e.value ->> '$.repoKey' AND p.pr_number = e.value ->> '$.prNumber'
WHERE p.author IS NOT NULL
GROUP BY p.id`;

/** The rows D1 answers, typed (SQLite answers the flag as 0 or 1). */
export const toStoredActivity = (rows: readonly Record<string, unknown>[]): StoredActivity[] =>
  rows.map((r) => ({
    prId: Number(r.prId),
    orgKey: String(r.orgKey),
    author: String(r.author),
    at: Number(r.at),
    learned: Number(r.learned) === 1,
  }));
