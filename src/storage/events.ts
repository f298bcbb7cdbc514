import { foldName, repoKey } from "../lib/names";
import type { Event } from "../schemas/events";
import { ACTIVITY_OF_BATCH, type ActivityRef, type StoredActivity, toStoredActivity } from "./activity";
import {
  AUTHORSHIP_COLUMNS,
  type ChildColumns,
  eventFields,
  FINDING_COLUMNS,
  jsonFields,
  names,
  PULL_REQUEST_DATA,
  REVIEW_COLUMNS,
} from "./analytics-columns";
import { refreshPullRequestFiguresSql } from "./pull-request-figures";
import { refreshReviewSpansSql } from "./review-span";

/** What one `writeEvents` call did to D1. */
export interface StoredEvents {
  /** D1's `meta.rows_written` summed over the batch's statements (index entries included). */
  rowsWritten: number;
  /** The pull requests' activity after the batch, for their organizations' objects (`activity.ts`). */
  activity: StoredActivity[];
}

/**
 * Writes a validated event batch in one D1 transaction (`batch()`): all of it or nothing.
 * Each event type becomes one set-based upsert over a JSON array of objects (`json_each`, fields
 * read by name), so a batch of 1,000 events is at most eight statements with at most one bound
 * parameter each.
 *
 * Versions (contract section 5): every row keeps the `updatedAt` of the event it holds in
 * `updated_at`, and an event replaces a row only when its `updatedAt` is strictly greater. So for
 * one record the greatest `updatedAt` wins whatever the arrival order, an older or equal one
 * changes nothing (equal version, different content: the state stored first stays), and a replay
 * writes nothing at all. Pull requests add the merge rule of contract section 17
 * (`rules/pull-request-state.ts`): a merge beats an unmerged state of the same version, and once
 * stored as merged a pull request stays merged. Inside a batch, a child record's events are folded
 * to one before anything is sent (the greatest `updatedAt`, the earliest in the batch among
 * equals): the same result as storing them one by one in order. A pull request's are not folded:
 * they are sent in the batch's order and the upsert applies each against the row the ones before
 * it left, so the batch stores what its events sent one at a time would. A fold of the batch alone
 * cannot do that under the merge rule, whose outcome depends on the stored row (an outside review
 * found a fold of an equal version's state and an older merge replacing the stored state's fields,
 * which either event alone leaves).
 *
 * Order inside the transaction: pull request data first; then a placeholder
 * row for each pull request that a child event will point at but that has no row yet (a review
 * arriving before its pull request still gets a stable id; a placeholder has `updated_at` NULL, so
 * the real pull_request event always replaces it); then reviews, findings and authorship records;
 * last the review span (see `review-span.ts`) of every pull request whose merge or reviews the
 * batch may have changed, and the window-independent figures (`pull-request-figures.ts`) of every
 * one whose line counts, findings or AI-authorship records it may have changed, each recomputed
 * from what is stored and written only where it changed. A review, finding or authorship record
 * that moves to another pull request also changes the one it leaves: that one is noted in
 * `pull_requests_to_refresh` just before the children are stored, and the note is gone again at
 * the end of the batch.
 *
 * Events name organizations by login; rows are keyed by the organization's home key: `homes` maps
 * each folded login to its home (a login it does not hold is its own home). Resolving them, and the
 * shard to write to, is the directory's job (`directory/events.ts`).
 *
 * Pull request ids (`ids`): a new row gets `sequence * 1024 + shard index` from the shard's own
 * sequence (`shard_counters`), unique across shards; or the id `ids.given` names for its key (the
 * id the same pull request already has on another shard: while an organization moves, a write to
 * the second shard and the move's copy keep the first shard's ids, so an export cursor stays exact
 * across the switch). An existing row keeps its id.
 */
export async function writeEvents(
  db: D1Database,
  events: readonly Event[],
  homes: ReadonlyMap<string, string>,
  ids: PullRequestIds,
): Promise<StoredEvents> {
  // In the batch's order, every one (see above): the upsert applies them one by one.
  const pullRequests: PullRequestRow[] = [];
  const reviews = new Latest<ReviewRow>();
  const findings = new Latest<FindingRow>();
  const authorship = new Latest<AuthorshipRow>();

  for (const e of events) {
    // Event names are validated GitHub names (ASCII): toLowerCase below is the ASCII fold too.
    const loginKey = foldName(e.org);
    const orgKey = homes.get(loginKey) ?? loginKey;
    const ref: Ref = { orgKey, repoKey: repoKey(e.repo), prNumber: e.prNumber, repo: e.repo };
    const { updatedAt } = e;
    switch (e.type) {
      // Each row carries the event's data fields (`analytics-columns.ts`: one per data column).
      case "pull_request":
        pullRequests.push({ ...ref, ...(eventFields(PULL_REQUEST_DATA, e) as Omit<PullRequestRow, keyof Ref>) });
        break;
      case "review":
        reviews.offer([orgKey, e.reviewId], updatedAt, childRow(ref, e.reviewId, REVIEW_COLUMNS, e));
        break;
      case "finding":
        findings.offer([orgKey, e.findingId], updatedAt, childRow(ref, e.findingId, FINDING_COLUMNS, e));
        break;
      case "ai_authorship":
        authorship.offer([orgKey, e.sourceId], updatedAt, childRow(ref, e.sourceId, AUTHORSHIP_COLUMNS, e));
        break;
    }
  }

  // Children whose pull request has no event in this batch may need a placeholder row.
  const inBatch = new Set(pullRequests.map(refKey));
  const placeholders: Placeholder[] = [];
  for (const [table, rows] of [
    ["reviews", reviews],
    ["findings", findings],
    ["ai_authorship", authorship],
  ] as const) {
    for (const { orgKey, repoKey, prNumber, repo, id, updatedAt } of rows.rows()) {
      if (!inBatch.has(refKey({ orgKey, repoKey, prNumber }))) {
        placeholders.push({ orgKey, repoKey, prNumber, repo, table, id, updatedAt });
      }
    }
  }
  // The review span depends on merge times and completed reviews only; the figures on line
  // counts, findings and authorship records.
  const refsOf = (rows: PullRequestKey[]) => {
    const refs = new Map<string, PullRequestKey>();
    for (const { orgKey, repoKey, prNumber } of rows)
      refs.set(refKey({ orgKey, repoKey, prNumber }), { orgKey, repoKey, prNumber });
    return [...refs.values()];
  };
  const spanRefs = refsOf([...pullRequests, ...reviews.rows()]);
  const figureRefs = refsOf([...pullRequests, ...findings.rows(), ...authorship.rows()]);
  const children = reviews.rows().length + findings.rows().length + authorship.rows().length;

  const statements: D1PreparedStatement[] = [];
  const add = (sql: string, rows: object[]) => {
    if (rows.length > 0) statements.push(db.prepare(sql).bind(JSON.stringify(rows)));
  };
  /**
   * Inserts of pull request rows: each row may carry its given id (the insert trigger moves the
   * sequence past every id stored). `firstOnly` (the pull request events, applied one by one): only
   * the first row of a pull request carries it, since a later one updates the row the first
   * inserted and its id would collide with it. Placeholders keep it on every row: their statement
   * skips the rows whose child is not stored, so the one that inserts may be any of them (and it
   * inserts nothing over a row that exists).
   */
  const insert = (sql: string, rows: PullRequestKey[], { firstOnly }: { firstOnly: boolean }) => {
    if (rows.length === 0) return;
    const seen = new Set<string>();
    const withIds = rows.map((r) => {
      const key = refKey(r);
      const given = firstOnly && seen.has(key) ? null : (ids.given?.get(key) ?? null);
      seen.add(key);
      return { ...r, prId: given };
    });
    statements.push(db.prepare(sql).bind(JSON.stringify(withIds), ids.shardIndex));
  };
  insert(UPSERT_PULL_REQUESTS, pullRequests, { firstOnly: true });
  insert(ENSURE_PLACEHOLDERS, placeholders, { firstOnly: false });
  add(NOTE_PULL_REQUESTS_LEFT_BY_REVIEWS, reviews.rows());
  add(NOTE_PULL_REQUESTS_LEFT_BY_FINDINGS, findings.rows());
  add(NOTE_PULL_REQUESTS_LEFT_BY_AUTHORSHIP, authorship.rows());
  add(UPSERT_REVIEWS, reviews.rows());
  add(UPSERT_FINDINGS, findings.rows());
  add(UPSERT_AI_AUTHORSHIP, authorship.rows());
  add(REFRESH_REVIEW_SPANS, spanRefs);
  add(REFRESH_FIGURES, figureRefs);
  if (children > 0) statements.push(db.prepare(FORGET_NOTED_PULL_REQUESTS));
  // Read last, in the same transaction: the activity of what the batch named (contract section 20).
  const activityRefs: ActivityRef[] = [
    ...refsOf(pullRequests).map((r) => ({ ...r, learned: true })),
    ...reviews.rows().map((r) => ({ ...keyOf(r), learned: false })),
  ];
  add(ACTIVITY_OF_BATCH, activityRefs);
  if (statements.length === 0) return { rowsWritten: 0, activity: [] };
  const results = await db.batch(statements);
  const activity = activityRefs.length > 0 ? toStoredActivity((results.at(-1)?.results ?? []) as Record<string, unknown>[]) : [];
  return { rowsWritten: results.reduce((sum, r) => sum + (r.meta.rows_written ?? 0), 0), activity };
}

/** Where new pull request rows get their ids (see `writeEvents`). */
export interface PullRequestIds {
  /** The shard's position in the shard list (0 to 1023). */
  shardIndex: number;
  /** Ids to keep, by `refKey`. */
  given?: ReadonlyMap<string, number>;
}

/** A pull request's key: the organization's home key, the folded repository name, the number. */
export interface PullRequestKey {
  orgKey: string;
  repoKey: string;
  prNumber: number;
}
/** The pull request a row belongs to, with its repository name as the event gave it. */
type Ref = PullRequestKey & { repo: string };

type Of<T extends Event["type"]> = Extract<Event, { type: T }>;
type PullRequestEvent = Of<"pull_request">;

// The rows sent to the statements below, which read their fields by these names: the reference,
// and the event's data fields (`analytics-columns.ts`). Children's `id` is the review, finding or
// authorship source id.
type PullRequestRow = Ref & Omit<PullRequestEvent, "type" | "org" | "repo" | "prNumber">;
type ChildRow = Ref & { id: string; updatedAt: number };
type ReviewRow = ChildRow;
type FindingRow = ChildRow;
type AuthorshipRow = ChildRow;

/** A child event's row: its reference, its id and its data fields. */
const childRow = (ref: Ref, id: string, columns: ChildColumns, e: Event): ChildRow => ({
  ...ref,
  ...eventFields(columns.data, e),
  id,
  updatedAt: e.updatedAt,
});
/** A child's pull request, which may need a placeholder row, with the child's table, id and version. */
type Placeholder = Ref & { table: "reviews" | "findings" | "ai_authorship"; id: string; updatedAt: number };

const keyOf = ({ orgKey, repoKey, prNumber }: PullRequestKey): PullRequestKey => ({ orgKey, repoKey, prNumber });

/** JSON of the key: unambiguous whatever characters the names hold (a joined string is not). */
export const refKey = ({ orgKey, repoKey, prNumber }: PullRequestKey): string => JSON.stringify([orgKey, repoKey, prNumber]);

/** Per record, the row of the event with the greatest version, the first among equals. */
class Latest<Row> {
  private readonly byRecord = new Map<string, { version: number; row: Row }>();

  offer(record: readonly unknown[], version: number, row: Row): void {
    const key = JSON.stringify(record);
    const held = this.byRecord.get(key);
    if (held === undefined || version > held.version) this.byRecord.set(key, { version, row });
  }

  rows(): Row[] {
    return [...this.byRecord.values()].map((v) => v.row);
  }
}

/**
 * A new pull request row's id: the given one (`v`: the JSON row), else the shard's next sequence
 * number (plus the row's position in the statement's JSON array) times 1024 plus the shard's index
 * (?2). A row already stored keeps its id (the given one is not even offered: it would collide).
 */
const NEW_ID = (v: string, position: string) => `coalesce(
    CASE WHEN NOT EXISTS (SELECT 1 FROM pull_requests AS x
      WHERE x.org_key = ${v} ->> '$.orgKey' AND x.repo_key = ${v} ->> '$.repoKey' AND x.pr_number = ${v} ->> '$.prNumber')
    THEN ${v} ->> '$.prId' END,
    ((SELECT next_sequence FROM shard_counters WHERE one = 1) + ${position}) * 1024 + ?2)`;

// `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT's join.
// Every DO UPDATE is guarded by the version: an event that is not newer writes nothing (for pull
// requests, but for the merge rule). A stored version of NULL (placeholder pull request, row from
// before versions) is older than any event.

/**
 * `supersedes` of `rules/pull-request-state.ts` in SQL: newer, or the same version merging an
 * unmerged state. A stored version of NULL (a placeholder) is older than any event. When it does
 * not hold, the WHERE lets through only an older merge onto an unmerged row, which sets merged_at
 * alone (the merge rule's third case).
 */
const SUPERSEDES = `(pull_requests.updated_at IS NULL OR excluded.updated_at > pull_requests.updated_at
    OR (excluded.updated_at = pull_requests.updated_at AND pull_requests.merged_at IS NULL AND excluded.merged_at IS NOT NULL))`;

/** A pull request's data columns but the merge time, which follows the merge rule. */
const VERSIONED_DATA = PULL_REQUEST_DATA.filter((c) => c.name !== "merged_at");

const UPSERT_PULL_REQUESTS = `
INSERT INTO pull_requests (id, org_key, repo_key, pr_number, repo, ${names(PULL_REQUEST_DATA)})
SELECT ${NEW_ID("value", "key")}, value ->> '$.orgKey', value ->> '$.repoKey', value ->> '$.prNumber', value ->> '$.repo', ${jsonFields(PULL_REQUEST_DATA, "value")}
FROM json_each(?1) WHERE true
ON CONFLICT (org_key, repo_key, pr_number) DO UPDATE SET
  ${["repo", ...VERSIONED_DATA.map((c) => c.name)].map((c) => `${c} = iif(${SUPERSEDES}, excluded.${c}, pull_requests.${c})`).join(",\n  ")},
  merged_at = iif(${SUPERSEDES}, coalesce(excluded.merged_at, pull_requests.merged_at), excluded.merged_at)
WHERE ${SUPERSEDES} OR (pull_requests.merged_at IS NULL AND excluded.merged_at IS NOT NULL)`;

/**
 * A placeholder only where it is needed: no row for the pull request yet, and the child event will
 * be stored (its record is not already stored at the same or a newer version). An old child event
 * so leaves no trace, and a replay inserts nothing. DO NOTHING (any constraint) covers siblings of
 * one batch that need the same placeholder, with a given id too.
 */
const ENSURE_PLACEHOLDERS = `
INSERT INTO pull_requests (id, org_key, repo_key, pr_number, repo)
SELECT ${NEW_ID("e.value", "e.key")}, e.value ->> '$.orgKey', e.value ->> '$.repoKey', e.value ->> '$.prNumber', e.value ->> '$.repo'
FROM json_each(?1) AS e
WHERE NOT EXISTS (
    SELECT 1 FROM pull_requests AS p
    WHERE p.org_key = e.value ->> '$.orgKey' AND p.repo_key = e.value ->> '$.repoKey' AND p.pr_number = e.value ->> '$.prNumber')
  AND NOT EXISTS (
    SELECT 1 FROM reviews AS r
    WHERE e.value ->> '$.table' = 'reviews' AND r.org_key = e.value ->> '$.orgKey' AND r.review_id = e.value ->> '$.id'
      AND r.updated_at >= e.value ->> '$.updatedAt')
  AND NOT EXISTS (
    SELECT 1 FROM findings AS f
    WHERE e.value ->> '$.table' = 'findings' AND f.org_key = e.value ->> '$.orgKey' AND f.finding_id = e.value ->> '$.id'
      AND f.updated_at >= e.value ->> '$.updatedAt')
  AND NOT EXISTS (
    SELECT 1 FROM ai_authorship AS a
    WHERE e.value ->> '$.table' = 'ai_authorship' AND a.org_key = e.value ->> '$.orgKey' AND a.source_id = e.value ->> '$.id'
      AND a.updated_at >= e.value ->> '$.updatedAt')
ON CONFLICT DO NOTHING`;

/** Child rows find their pull request through the unique (org_key, repo_key, pr_number) index. */
const childSource = `
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> '$.orgKey' AND p.repo_key = e.value ->> '$.repoKey' AND p.pr_number = e.value ->> '$.prNumber'
WHERE true`;

/** A child record's upsert: stored with its pull request's id, replaced only by a newer version (its data and its pull request). */
const upsertChildren = ({ table, key, data }: ChildColumns) => `
INSERT INTO ${table} (org_key, ${key.name}, pr_id, ${names(data)})
SELECT p.org_key, e.value ->> '$.id', p.id, ${jsonFields(data, "e.value")} ${childSource}
ON CONFLICT (org_key, ${key.name}) DO UPDATE SET
  pr_id = excluded.pr_id, ${data.map((c) => `${c.name} = excluded.${c.name}`).join(", ")}
WHERE ${table}.updated_at IS NULL OR excluded.updated_at > ${table}.updated_at`;

const UPSERT_REVIEWS = upsertChildren(REVIEW_COLUMNS);
const UPSERT_FINDINGS = upsertChildren(FINDING_COLUMNS);
const UPSERT_AI_AUTHORSHIP = upsertChildren(AUTHORSHIP_COLUMNS);

/**
 * Notes the pull request a child record (review, finding, authorship record) is about to leave: the
 * record is stored, points elsewhere now, and the event is newer than the stored record (so the
 * upsert below will move it). Nothing is written otherwise, so a replay still writes nothing.
 */
const noteLeftSql = (table: string, key: string) => `
INSERT INTO pull_requests_to_refresh (pr_id)
SELECT r.pr_id
FROM json_each(?1) AS e
JOIN pull_requests AS p
  ON p.org_key = e.value ->> '$.orgKey' AND p.repo_key = e.value ->> '$.repoKey' AND p.pr_number = e.value ->> '$.prNumber'
JOIN ${table} AS r ON r.org_key = e.value ->> '$.orgKey' AND r.${key} = e.value ->> '$.id'
WHERE r.pr_id <> p.id AND (r.updated_at IS NULL OR e.value ->> '$.updatedAt' > r.updated_at)
ON CONFLICT (pr_id) DO NOTHING`;

const NOTE_PULL_REQUESTS_LEFT_BY_REVIEWS = noteLeftSql("reviews", "review_id");
const NOTE_PULL_REQUESTS_LEFT_BY_FINDINGS = noteLeftSql("findings", "finding_id");
const NOTE_PULL_REQUESTS_LEFT_BY_AUTHORSHIP = noteLeftSql("ai_authorship", "source_id");

/** The pull requests of the batch's refs (?1), and those noted above. */
const NAMED_OR_NOTED = `
  SELECT p.id AS id FROM json_each(?1) AS e
  JOIN pull_requests AS p
    ON p.org_key = e.value ->> '$.orgKey' AND p.repo_key = e.value ->> '$.repoKey' AND p.pr_number = e.value ->> '$.prNumber'
  UNION
  SELECT pr_id AS id FROM pull_requests_to_refresh`;

/** The pull requests the batch names through merges or reviews, and those noted above. */
const REFRESH_REVIEW_SPANS = refreshReviewSpansSql(NAMED_OR_NOTED);

/** The pull requests the batch names through pull request data, findings or authorship, and those noted. */
const REFRESH_FIGURES = refreshPullRequestFiguresSql(NAMED_OR_NOTED);

const FORGET_NOTED_PULL_REQUESTS = "DELETE FROM pull_requests_to_refresh";
