import { repoKey } from "../lib/names";
import type { Event } from "../schemas/events";
import { CHILD_COLUMNS, type ChildColumns, dataFields, names, PULL_REQUEST_DATA } from "./analytics-columns";
import { refKey, writeEvents } from "./events";

/**
 * Copies an organization's analytics rows to another database (a move between shards,
 * `directory/moves.ts`, or stray rows joining their organization on another shard,
 * `directory/rows.ts`), a page of pull requests at a time, in pull request id order.
 *
 * Each stored row is written to the target as the event that holds its state (its `updated_at` as
 * the version), through the event write path itself (`writeEvents`): the target then holds, per
 * record, the newest of what it had and what the source has, by the same version rule as every
 * event, whatever the order in which a copy and live writes arrive. Pull requests keep their ids
 * (unique across shards), so an export cursor issued on the source is exact on the target.
 *
 * `ORGANIZATION_TABLES` and `DERIVED_TABLES` list every table keyed by `org_key`; a test compares
 * them with the schema, so a table added later cannot be forgotten by the copy and the delete.
 */
export const ORGANIZATION_TABLES = ["pull_requests", "reviews", "findings", "ai_authorship"] as const;

/**
 * Tables derived from the organization's rows, never copied: the summary's day and month blocks
 * (`summary-days.ts`), its month blocks per group (`summary-group-months.ts`) and their spans
 * (`summary-group-spans.ts`) are rebuilt from the copied rows by the target's first summaries (copying them would be wasted: the copy's own
 * writes to a day delete its blocks). The delete removes them with the rest.
 */
export const DERIVED_TABLES = [
  "summary_days",
  "summary_months",
  "summary_group_month_heads",
  "summary_group_months",
  "summary_group_month_buckets",
  "summary_group_span_heads",
  "summary_group_span_buckets",
] as const;

/**
 * Tables keyed by `org_key` that a move between shards keeps by its own steps (`directory/moves.ts`),
 * neither copied page by page nor rebuilt: `renames_followed` (the last rename log entry followed,
 * carried to the target by `carryRenamesFollowed` once the source is fenced, deleted with the rows),
 * and `move_fences` (`fenceOrganization`, kept after the rows have left: see d1-schema.ts).
 */
export const MOVE_TABLES = ["renames_followed", "move_fences"] as const;

/**
 * Fences an organization on a shard of a move (its source, and its target until the switch:
 * `d1-schema.ts` `move_fences`): from the write on, no move of rows between keys changes its rows
 * there (`renames.ts` `moveRows`). Idempotent.
 */
export async function fenceOrganization(db: D1Database, orgKey: string, startedAt: number): Promise<void> {
  // A repeat of the same move's begin writes nothing (a shard locked against writes does not hold
  // it), and a late step of an older move never replaces a newer move's fence (moves of one
  // organization start one after the other).
  const held = await db.prepare("SELECT started_at FROM move_fences WHERE org_key = ?1").bind(orgKey).first<number>("started_at");
  if (held !== null && held >= startedAt) return;
  await db
    .prepare(
      `INSERT INTO move_fences (org_key, started_at) VALUES (?1, ?2)
       ON CONFLICT (org_key) DO UPDATE SET started_at = excluded.started_at
       WHERE excluded.started_at > move_fences.started_at`,
    )
    .bind(orgKey, startedAt)
    .run();
}

/**
 * Lifts an organization's fence on a shard (its move failed, or it moves back there); with
 * `startedAt`, only the fence of that move (a newer move's fence stays). Idempotent.
 */
export async function unfenceOrganization(db: D1Database, orgKey: string, startedAt?: number): Promise<void> {
  await db
    .prepare("DELETE FROM move_fences WHERE org_key = ?1 AND (?2 IS NULL OR started_at = ?2)")
    .bind(orgKey, startedAt ?? null)
    .run();
}

/** The fences on a shard of these keys: key → the start of the move that set it. */
export async function fencesOf(db: D1Database, orgKeys: readonly string[]): Promise<Map<string, number>> {
  const { results } = await db
    .prepare("SELECT org_key, started_at FROM move_fences WHERE org_key IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(orgKeys))
    .all<{ org_key: string; started_at: number }>();
  return new Map(results.map((r) => [r.org_key, r.started_at]));
}

/**
 * Carries the last rename log entry followed of an organization from a move's source to its
 * target, once the source is fenced (so it no longer changes there): the target keeps the greater.
 */
export async function carryRenamesFollowed(from: D1Database, to: D1Database, orgKey: string): Promise<void> {
  const row = await from.prepare("SELECT seq FROM renames_followed WHERE org_key = ?1").bind(orgKey).first<{ seq: number }>();
  if (!row) return;
  await to
    .prepare(
      `INSERT INTO renames_followed (org_key, seq) VALUES (?1, ?2)
       ON CONFLICT (org_key) DO UPDATE SET seq = MAX(seq, excluded.seq)`,
    )
    .bind(orgKey, row.seq)
    .run();
}

/** Source and target of a copy: a database, the organization's key there, the target shard's index. */
export interface CopyTarget {
  db: D1Database;
  orgKey: string;
  shardIndex: number;
}

/** At most this many events per write (the control plane's own batch size). */
const EVENTS_PER_WRITE = 1000;

/** One of the tables a copy walks, in this order (pull requests first: children then find their rows). */
export type CopiedTable = (typeof ORGANIZATION_TABLES)[number];

/** A copy's position: the table and the last key copied of it (null: from its start). */
export interface CopyPosition {
  table: CopiedTable;
  after: string | null;
}

/**
 * Copies the next page (at most `limit` rows) of one table of the organization, in key order from
 * `position` (each table is walked through its primary key: a page costs an index range, whatever
 * the organization's size). Children name their pull request by (repository, number) and keep its
 * id. Answers the position after the page (the next table's start when this one is done; null when
 * every table is) and the rows copied. Idempotent: copying a page again writes nothing not newer.
 */
export async function copyPage(
  source: { db: D1Database; orgKey: string },
  target: CopyTarget,
  position: CopyPosition,
  limit: number,
): Promise<{ next: CopyPosition | null; rows: number }> {
  const { sql, key } = PAGES[position.table];
  // From the start: below every key (repository keys and ids are non-empty text, numbers positive).
  // A bound, not `?2 IS NULL OR ...`, so the page is one range of an index, not a scan from its start.
  const after = position.after ?? (position.table === "pull_requests" ? '["", 0]' : "");
  const { results } = await source.db.prepare(sql).bind(source.orgKey, after, limit).all<SourceRow>();
  await writeAsEvents(
    target,
    results.map((row) => ({ table: position.table, row })),
  );
  const last = results.at(-1);
  if (last && results.length === limit)
    return { next: { table: position.table, after: String(last[key]) }, rows: results.length };
  const following = ORGANIZATION_TABLES[ORGANIZATION_TABLES.indexOf(position.table) + 1];
  return { next: following ? { table: following, after: null } : null, rows: results.length };
}

/** The row of a page: its table's columns, and its pull request's id, repository name and number. */
type SourceRow = Record<string, unknown> & { pr_id: number; repo: string; pr_number: number };

/** A child table's columns by name. */
const CHILD: Record<Exclude<CopiedTable, "pull_requests">, ChildColumns> = Object.fromEntries(
  CHILD_COLUMNS.map((c) => [c.table, c]),
) as Record<Exclude<CopiedTable, "pull_requests">, ChildColumns>;

/** What a page or record statement selects of a child (`c`): its id, its data, and its pull request's id, repository and number. */
const childSelect = ({ key, data }: ChildColumns) => `c.${key.name}, ${names(data, "c.")}, c.pr_id, p.repo, p.pr_number`;

/** What they select of a pull request (`p`): its id, reference and data (`analytics-columns.ts`). */
const PULL_REQUEST_SELECT = `p.id AS pr_id, p.repo, p.pr_number, ${names(PULL_REQUEST_DATA, "p.")}`;

/** Per table: the page statement (?1 org key, ?2 the last key copied, ?3 the page size) and the key column. */
const childPage = (columns: ChildColumns) => ({
  key: columns.key.name,
  sql: `SELECT ${childSelect(columns)}
      FROM ${columns.table} AS c JOIN pull_requests AS p ON p.id = c.pr_id
      WHERE c.org_key = ?1 AND c.${columns.key.name} > ?2 ORDER BY c.${columns.key.name} LIMIT ?3`,
});

const PAGES: Record<CopiedTable, { sql: string; key: string }> = {
  // By the unique (org_key, repo_key, pr_number) index: ?2 is the last [repo_key, pr_number] as JSON.
  pull_requests: {
    key: "position",
    sql: `SELECT json_array(p.repo_key, p.pr_number) AS position, ${PULL_REQUEST_SELECT}
      FROM pull_requests AS p WHERE p.org_key = ?1 AND (p.repo_key, p.pr_number) > (?2 ->> '$[0]', ?2 ->> '$[1]')
      ORDER BY p.repo_key, p.pr_number LIMIT ?3`,
  },
  reviews: childPage(CHILD.reviews),
  findings: childPage(CHILD.findings),
  ai_authorship: childPage(CHILD.ai_authorship),
};

/** The event that holds a stored row's state (its version: `updated_at`, 0 for a row stored before versions). */
function toEvent(table: CopiedTable, org: string, r: SourceRow): Event | null {
  const at = { org, repo: r.repo, prNumber: r.pr_number };
  const version = { updatedAt: (r.updated_at as number | null) ?? 0 };
  if (table === "pull_requests") {
    // A placeholder (no pull_request event yet) is recreated by its children's events, with its id.
    if (r.author === null || r.created_at === null) return null;
    return { type: "pull_request", ...at, ...dataFields(PULL_REQUEST_DATA, r), ...version } as Event;
  }
  const { key, data } = CHILD[table];
  const type = table === "reviews" ? "review" : table === "findings" ? "finding" : "ai_authorship";
  return { type, ...at, [key.field]: r[key.name], ...dataFields(data, r), ...version } as Event;
}

/** Records of one organization by their keys: pull requests by (repository key, number), the others by id. */
export interface RecordKeys {
  pullRequests: { repoKey: string; prNumber: number }[];
  reviews: string[];
  findings: string[];
  authorship: string[];
}

/** The records an event batch names (give it the events of one organization). */
export function recordKeys(events: readonly Event[]): RecordKeys {
  const keys: RecordKeys = { pullRequests: [], reviews: [], findings: [], authorship: [] };
  for (const e of events) {
    if (e.type === "pull_request") keys.pullRequests.push({ repoKey: repoKey(e.repo), prNumber: e.prNumber });
    else if (e.type === "review") keys.reviews.push(e.reviewId);
    else if (e.type === "finding") keys.findings.push(e.findingId);
    else keys.authorship.push(e.sourceId);
  }
  return keys;
}

/**
 * Copies these records as they are stored in the source now (the state its version rule kept,
 * with their pull request ids) to the target: what a write does to a move's target after writing
 * the source (`directory/events.ts`). Copying the source's state rather than the events again
 * keeps the target exact where the events tie (same version, different content: the source kept
 * the one it stored first, which the target may not have seen first). Answers the rows written.
 */
export async function copyRecords(
  source: { db: D1Database; orgKey: string },
  target: CopyTarget,
  keys: RecordKeys,
): Promise<number> {
  const statements = (
    [
      ["pull_requests", keys.pullRequests],
      ["reviews", keys.reviews],
      ["findings", keys.findings],
      ["ai_authorship", keys.authorship],
    ] as const
  )
    .filter(([, list]) => list.length > 0)
    .map(([table, list]) => ({ table, statement: source.db.prepare(RECORDS[table]).bind(source.orgKey, JSON.stringify(list)) }));
  if (statements.length === 0) return 0;
  const results = await source.db.batch(statements.map((s) => s.statement));
  const rows = statements.flatMap(({ table }, i) => ((results[i]?.results ?? []) as SourceRow[]).map((row) => ({ table, row })));
  return writeAsEvents(target, rows);
}

/** Per table: the records named by key (?1 org key, ?2 JSON array of keys), shaped as `PAGES` rows. */
const childRecords = (columns: ChildColumns) => `SELECT ${childSelect(columns)}
    FROM json_each(?2) AS k JOIN ${columns.table} AS c ON c.org_key = ?1 AND c.${columns.key.name} = k.value
    JOIN pull_requests AS p ON p.id = c.pr_id`;

const RECORDS: Record<CopiedTable, string> = {
  pull_requests: `SELECT ${PULL_REQUEST_SELECT}
    FROM json_each(?2) AS k JOIN pull_requests AS p
      ON p.org_key = ?1 AND p.repo_key = k.value ->> '$.repoKey' AND p.pr_number = k.value ->> '$.prNumber'`,
  reviews: childRecords(CHILD.reviews),
  findings: childRecords(CHILD.findings),
  ai_authorship: childRecords(CHILD.ai_authorship),
};

/** Writes stored rows to the target as the events that hold their state, keeping their pull request ids. */
async function writeAsEvents(target: CopyTarget, rows: { table: CopiedTable; row: SourceRow }[]): Promise<number> {
  const org = target.orgKey;
  const events: Event[] = [];
  const ids = new Map<string, number>();
  for (const { table, row } of rows) {
    ids.set(refKey({ orgKey: org, repoKey: repoKey(row.repo), prNumber: row.pr_number }), row.pr_id);
    const event = toEvent(table, org, row);
    if (event) events.push(event);
  }
  // The events name the target's key as their "login": it maps to itself.
  const homes = new Map([[org, org]]);
  let written = 0;
  for (let i = 0; i < events.length; i += EVENTS_PER_WRITE) {
    const slice = events.slice(i, i + EVENTS_PER_WRITE);
    written += (await writeEvents(target.db, slice, homes, { shardIndex: target.shardIndex, given: ids })).rowsWritten;
  }
  return written;
}

/**
 * Deletes an organization's rows from a database, children first, a chunk at a time (each chunk
 * one statement: a large organization never holds the database for long), until done or past
 * `until` (epoch ms), with its derived rows and its last rename followed (not its fence:
 * `MOVE_TABLES`). Answers the rows deleted and whether none is left.
 */
export async function deleteOrganizationRows(
  db: D1Database,
  orgKey: string,
  { chunk = 5000, until = Number.POSITIVE_INFINITY }: { chunk?: number; until?: number } = {},
): Promise<{ deleted: number; done: boolean }> {
  let deleted = 0;
  for (const table of ["reviews", "findings", "ai_authorship", "pull_requests", ...DERIVED_TABLES, "renames_followed"] satisfies (
    | (typeof ORGANIZATION_TABLES)[number]
    | (typeof DERIVED_TABLES)[number]
    | (typeof MOVE_TABLES)[number]
  )[]) {
    for (;;) {
      const result = await db
        .prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE org_key = ?1 LIMIT ?2)`)
        .bind(orgKey, chunk)
        .run();
      const n = result.meta.changes ?? 0;
      deleted += n;
      if (n < chunk) break;
      if (Date.now() >= until) return { deleted, done: false };
    }
  }
  return { deleted, done: true };
}

/**
 * What every write to an organization's rows changes: per table, the count of its rows, of those
 * with a version (an event at version 0 replacing a placeholder or a row from before versions, NULL,
 * changes no sum), and the sums of their versions and rowids (and of pull requests' merge times,
 * which the merge rule may set without a newer version). A write stores a record only when it is
 * newer, adds a row, or merges an unmerged pull request, so a write between two readings always
 * changes it.
 */
const FINGERPRINT_PARTS: Record<CopiedTable, string> = {
  pull_requests:
    "COUNT(*), COUNT(updated_at), COALESCE(SUM(updated_at), 0), COALESCE(SUM(rowid), 0), COALESCE(SUM(merged_at), 0)",
  reviews: "COUNT(*), COUNT(updated_at), COALESCE(SUM(updated_at), 0), COALESCE(SUM(rowid), 0)",
  findings: "COUNT(*), COUNT(updated_at), COALESCE(SUM(updated_at), 0), COALESCE(SUM(rowid), 0)",
  ai_authorship: "COUNT(*), COUNT(updated_at), COALESCE(SUM(updated_at), 0), COALESCE(SUM(rowid), 0)",
};
/** The children first, as the delete goes: a pull request row goes after the rows that point at it. */
const DELETE_ORDER = ["reviews", "findings", "ai_authorship", "pull_requests"] as const satisfies readonly CopiedTable[];
const fingerprintOf = (table: CopiedTable) => `(SELECT json_array(${FINGERPRINT_PARTS[table]}) FROM ${table} WHERE org_key = ?1)`;

/** Whether any analytics row is stored under the key (one probe per table). */
export async function hasOrganizationRows(db: D1Database, orgKey: string): Promise<boolean> {
  const row = await db
    .prepare(`SELECT ${DELETE_ORDER.map((t) => `EXISTS (SELECT 1 FROM ${t} WHERE org_key = ?1)`).join(" OR ")} AS any_row`)
    .bind(orgKey)
    .first<{ any_row: number }>();
  return row?.any_row === 1;
}

/** The organization's rows as `organizationFingerprint` reads them: one text per table. */
export type RowsFingerprint = Record<CopiedTable, string>;

/** Reads the fingerprint of an organization's rows (`FINGERPRINT_PARTS`), in one statement. */
export async function organizationFingerprint(db: D1Database, orgKey: string): Promise<RowsFingerprint> {
  const row = await db
    .prepare(`SELECT ${DELETE_ORDER.map((t) => `${fingerprintOf(t)} AS ${t}`).join(", ")}`)
    .bind(orgKey)
    .first<RowsFingerprint>();
  if (!row) throw new Error("the fingerprint statement answered no row");
  return row;
}

/**
 * Deletes every row of the organization (and its derived rows) in one transaction, but only if
 * none was written since `fingerprint` was read: each statement checks that the tables deleted
 * before it are empty and that the others still read as `fingerprint`. Answers whether it deleted.
 * A gather of stray rows into another shard copies them and then deletes them (`directory/rows.ts`):
 * a write landing between the copy and the delete makes the delete do nothing, and the gather
 * copies again (an outside review found such a write deleted uncopied when the delete was plain).
 */
export async function deleteOrganizationRowsIfUnchanged(
  db: D1Database,
  orgKey: string,
  fingerprint: RowsFingerprint,
): Promise<boolean> {
  const unchanged = (from: number) =>
    [
      ...DELETE_ORDER.slice(0, from).map((t) => `NOT EXISTS (SELECT 1 FROM ${t} WHERE org_key = ?1)`),
      ...DELETE_ORDER.slice(from).map((t) => `${fingerprintOf(t)} = ?${2 + DELETE_ORDER.indexOf(t)}`),
    ].join(" AND ");
  const values = DELETE_ORDER.map((t) => fingerprint[t]);
  const statements = [
    ...DELETE_ORDER.map((table, k) =>
      db.prepare(`DELETE FROM ${table} WHERE org_key = ?1 AND ${unchanged(k)}`).bind(orgKey, ...values),
    ),
    ...[...DERIVED_TABLES, "renames_followed"].map((table) =>
      db.prepare(`DELETE FROM ${table} WHERE org_key = ?1 AND ${unchanged(DELETE_ORDER.length)}`).bind(orgKey),
    ),
  ];
  await db.batch(statements);
  const left = await db
    .prepare(`SELECT ${DELETE_ORDER.map((t) => `EXISTS (SELECT 1 FROM ${t} WHERE org_key = ?1)`).join(" OR ")} AS left`)
    .bind(orgKey)
    .first<{ left: number }>();
  return left?.left === 0;
}

/**
 * How many rows of each table an organization has (the move's check before its switch); pull
 * requests without their own event (placeholders) are not copied as such, so not counted.
 */
export async function organizationRowCounts(db: D1Database, orgKey: string): Promise<Record<string, number>> {
  const where = (t: string) => (t === "pull_requests" ? "org_key = ?1 AND author IS NOT NULL" : "org_key = ?1");
  const results = await db.batch(
    ORGANIZATION_TABLES.map((t) => db.prepare(`SELECT count(*) AS n FROM ${t} WHERE ${where(t)}`).bind(orgKey)),
  );
  return Object.fromEntries(
    ORGANIZATION_TABLES.map((t, i) => [t, (results[i]?.results?.[0] as { n: number } | undefined)?.n ?? 0]),
  );
}
