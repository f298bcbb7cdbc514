import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { SyncFailure, SyncSteps } from "../schemas/sync";

/** Tables inside each organization's Durable Object (one object per organization). */

/**
 * Exactly one row (id = 1) once the control plane or GitHub has registered the installation.
 * `login` is the organization's current login; `home_key` names this object (and the D1 rows of the
 * organization): the folded login it was first installed under, or an allocated `<login>~<id>` when
 * that object was taken (see `directory/resolve.ts`). It never changes, also when the login does.
 */
export const installation = sqliteTable("installation", {
  id: integer("id").primaryKey(),
  login: text("login").notNull(),
  homeKey: text("home_key").notNull(),
  /** GitHub's account id of the organization: its identity across renames. Null until a webhook names it. */
  accountId: integer("account_id"),
  installationId: integer("installation_id").notNull(),
  installedAt: integer("installed_at").notNull(),
  blocked: integer("blocked", { mode: "boolean" }).notNull(),
  plan: text("plan", { enum: ["free", "team", "pro"] }).notNull(),
  subscriptionStatus: text("subscription_status", { enum: ["active", "past_due", "canceled", "none"] }).notNull(),
  billedThroughService: integer("billed_through_service", { mode: "boolean" }).notNull(),
  purchasedSeats: integer("purchased_seats").notNull(),
  /** False after GitHub's `installation` deleted: the organization answers 404, its data is kept. */
  installed: integer("installed", { mode: "boolean" }).notNull().default(true),
  /**
   * GitHub's time (epoch ms) of the suspend or unsuspend `blocked` was last set from
   * (`installation.suspended_at`, else `updated_at`): an older delivery never overwrites a newer
   * one. Null until a delivery carrying a time set it.
   */
  suspensionVersion: integer("suspension_version"),
});

/**
 * `members_by_login` is the order of the member list and its keyset cursor: lower(login), then id.
 * Queries must spell the expression exactly as `lower(github_login)` for SQLite to use it.
 */
export const members = sqliteTable(
  "members",
  {
    githubUserId: text("github_user_id").primaryKey(),
    githubLogin: text("github_login").notNull(),
    /** Null for a member GitHub announced (webhook) until a sync provides the address. */
    workEmail: text("work_email"),
    role: text("role", { enum: ["member", "admin", "viewer"] }).notNull(),
    seat: integer("seat", { mode: "boolean" }).notNull(),
    isBot: integer("is_bot", { mode: "boolean" }).notNull(),
  },
  (t) => [index("members_by_login").on(sql`lower(${t.githubLogin})`, t.githubUserId)],
);

/**
 * Keyed by the lower-cased name (GitHub repository names are case-insensitive; analytics rows in
 * D1 and reviewer events use names). `github_id` is GitHub's numeric repository id, the identity
 * that survives a rename; null for a repository only the control plane registered. A repository
 * removed from the installation (or deleted, or transferred away) stays as a tombstone
 * (`removed` true): its rows are no longer exported and `repo=` on it is 403.
 */
export const repositories = sqliteTable(
  "repositories",
  {
    repoKey: text("repo_key").primaryKey(),
    name: text("name").notNull(),
    private: integer("private", { mode: "boolean" }).notNull(),
    githubId: integer("github_id"),
    removed: integer("removed", { mode: "boolean" }).notNull().default(false),
    /**
     * GitHub's `repository.updated_at` (epoch ms) of the visibility stored: a delivery or read
     * carrying an older one does not change the visibility. Null until one carrying a time set it.
     */
    visibilityVersion: integer("visibility_version"),
  },
  (t) => [uniqueIndex("repositories_github_id").on(t.githubId)],
);

export const collaborators = sqliteTable(
  "collaborators",
  {
    repoKey: text("repo_key").notNull(),
    githubUserId: text("github_user_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.repoKey, t.githubUserId] })],
);

/**
 * PATCH operations that changed something, by the id the Worker gives each HTTP request. A retried
 * call (after a lost answer) finds its own id here and is answered as "already applied" instead of
 * failing its now-stale guard. Entries older than an hour are pruned on write.
 */
export const appliedOperations = sqliteTable("applied_operations", {
  operationId: text("operation_id").primaryKey(),
  appliedAt: integer("applied_at").notNull(),
});

const ROLES = ["member", "admin", "viewer"] as const;
const SEAT_ASSIGNMENTS = ["manual", "automatic"] as const;

/**
 * Every change of a member's seat or role and every member added or removed, written in the same
 * transaction as the change (contract section 8). `id` grows with every entry (AUTOINCREMENT never
 * reuses one, also after pruning), so newest first is `id` descending and the cursor is an id.
 * Entries older than the retention (`AUDIT_RETENTION_MS`, `store/audit-log.ts`) are deleted on write.
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    action: text("action", {
      enum: [
        "member.added",
        "member.updated",
        "member.removed",
        "settings.updated",
        "key.created",
        "key.regenerated",
        "key.revoked",
      ],
    }).notNull(),
    actorUserId: text("actor_user_id"),
    actorLogin: text("actor_login"),
    source: text("source", { enum: ["api", "sync", "github", "automatic"] }).notNull(),
    /** The member the entry is about; "" for an entry about the organization itself (`settings.updated`). */
    githubUserId: text("github_user_id").notNull(),
    beforeSeat: integer("before_seat", { mode: "boolean" }),
    beforeRole: text("before_role", { enum: ROLES }),
    afterSeat: integer("after_seat", { mode: "boolean" }),
    afterRole: text("after_role", { enum: ROLES }),
    /** `settings.updated` only: the organization's seat assignment before and after. */
    beforeSeatAssignment: text("before_seat_assignment", { enum: SEAT_ASSIGNMENTS }),
    afterSeatAssignment: text("after_seat_assignment", { enum: SEAT_ASSIGNMENTS }),
    correlationId: text("correlation_id").notNull(),
    /** The key that made an API change (contract section 18), else null. */
    keyId: text("key_id"),
    keyName: text("key_name"),
    /** The caller's address for a change made over HTTP, else null. */
    ip: text("ip"),
    /** key.* entries: the key's kind and scopes (its id and name are in key_id, key_name). */
    keyKind: text("key_kind", { enum: ["analytics", "members"] }),
    keyScopes: text("key_scopes", { mode: "json" }).$type<string[]>(),
  },
  (t) => [index("audit_log_by_member").on(t.githubUserId, t.id), index("audit_log_by_time").on(t.at)],
);

/**
 * One row (id = 1): a counter raised by every membership write (member put or deleted). Each write
 * tells the member's `UserObject` index its new value, and the index keeps only the highest it has
 * seen, so index updates that arrive out of order cannot undo a later one.
 */
export const membershipClock = sqliteTable("membership_clock", {
  id: integer("id").primaryKey(),
  value: integer("value").notNull(),
});

/**
 * GitHub webhook deliveries (parts) this organization has applied, written in the same transaction
 * as their change: a delivery enqueued twice (two identical deliveries racing past the dedupe
 * marker, or a queue redelivery) changes nothing the second time. Pruned after 8 days, past the
 * 7-day dedupe marker.
 */
export const appliedDeliveries = sqliteTable("applied_deliveries", {
  deliveryKey: text("delivery_key").primaryKey(),
  appliedAt: integer("applied_at").notNull(),
});

/**
 * Repository renames whose analytics rows (D1, keyed by name) still have to follow: written in the
 * transaction that renames the repository here, removed by the webhook consumer once D1 has moved
 * the rows (an outbox: a failure between the two is finished by the retry). A log in the order the
 * renames were applied here (`seq`), followed in that order, each entry removed on its own: while
 * an organization moves between shards renames wait here, and a chain such as old→New, New→old,
 * old→New must reach D1 in its order (until migration 0011 one row per old name, the latest
 * target overwriting it in place, left the rows under old while the repository was New).
 */
export const pendingRenames = sqliteTable("pending_renames", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  fromKey: text("from_key").notNull(),
  toName: text("to_name").notNull(),
});

/**
 * Organization renames (GitHub's `organization` renamed) not applied yet because their `from` is not
 * the current login: an earlier rename of the chain has not arrived. A rename applies when its
 * `from` is the current login, and then every waiting one that continues the chain, oldest first,
 * so a chain delivered in any order ends at its last login. Pruned after 8 days, like the ledger.
 */
export const waitingRenames = sqliteTable(
  "waiting_renames",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    fromKey: text("from_key").notNull(),
    toLogin: text("to_login").notNull(),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [index("waiting_renames_from").on(t.fromKey, t.id)],
);

/**
 * Logins the organization left by a rename, whose stray rows (stored under the login's folded key
 * before the organization's directory entry named it) are set apart and gathered: one entry per
 * rename delivery, recorded with its ledger entry (`delivery_key`), so once per delivery; never
 * for the home's own key, nor for a delivery received (`recorded_at`: the message's `receivedAt`)
 * more than `HOLD_WINDOW_MS` ago. `to_hold`: that delivery's consumer claims it (`holding`, only
 * within the window) and moves the rows under the login's folded key to a holding key of the
 * organization's own (`directory/identity.ts` `heldKey`), before anyone else can take the login on
 * GitHub and store rows there; an entry not claimed within the window (the delivery failed
 * meanwhile, or comes back from the dead-letter queue) is `done` unheld: its rows may be the
 * login's next owner's by then. `held`: the rows wait under the holding key until the
 * organization can gather them (not while it moves between shards; a `holding` entry past the
 * window is gathered as it stands); `done`: gathered, or nothing set apart (dropped after
 * `DONE_HOLD_KEPT_MS`). `directory/learn.ts` `holdLeftLogins`, `gatherHeldLogins`.
 */
export const heldLogins = sqliteTable(
  "held_logins",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    loginKey: text("login_key").notNull(),
    deliveryKey: text("delivery_key").notNull(),
    state: text("state", { enum: ["to_hold", "holding", "held", "done"] }).notNull(),
    recordedAt: integer("recorded_at").notNull(),
  },
  (t) => [index("held_logins_state").on(t.state, t.seq)],
);

/**
 * One row (id = 1) while the members' organizations indexes still have to learn a new login (the
 * order of `GET /api/v1/organizations`) or that the organization was installed or uninstalled (an
 * uninstalled one is not listed): the object's alarm tells them in pages of members after `after`
 * (github_user_id order), and deletes the row when done. A later change restarts it.
 */
export const indexRelogin = sqliteTable("index_relogin", {
  id: integer("id").primaryKey(),
  login: text("login").notNull(),
  after: text("after").notNull(),
  /** The membership clock when the job (re)started: a run finding another one was overtaken by a restart. */
  version: integer("version").notNull().default(0),
});

export type InstallationRow = typeof installation.$inferSelect;
export type HeldLogin = typeof heldLogins.$inferSelect;
export type MemberRow = typeof members.$inferSelect;
export type RepositoryRow = typeof repositories.$inferSelect;
export type AuditRow = typeof auditLog.$inferSelect;

/**
 * Installation syncs with GitHub's API (contract section 17), one row per sync, numbered 1, 2, ...:
 * the progress record `GET .../sync` reads, and the compare-and-set of "one at a time" (a row still
 * `running` refuses a new one). `trigger_key` is what started it (a webhook message's ledger key, a
 * request's correlation id): a retried trigger finds its run instead of starting another.
 * `instance_created`: the Workflow instance `<home key>-<id>` exists. The last 20 are kept.
 */
export const syncRuns = sqliteTable(
  "sync_runs",
  {
    id: integer("id").primaryKey(),
    trigger: text("trigger", { enum: ["installation", "unsuspend", "api", "reconcile"] }).notNull(),
    triggerKey: text("trigger_key").notNull(),
    installationId: integer("installation_id").notNull(),
    state: text("state", { enum: ["running", "complete", "failed"] }).notNull(),
    instanceCreated: integer("instance_created", { mode: "boolean" }).notNull().default(false),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    /** When the sync last reported anything (created, a page, an error): how `sync/start.ts` tells a stalled instance. */
    progressAt: integer("progress_at"),
    steps: text("steps", { mode: "json" }).$type<SyncSteps>().notNull(),
    lastError: text("last_error", { mode: "json" }).$type<SyncFailure>(),
  },
  (t) => [index("sync_runs_by_trigger").on(t.triggerKey)],
);

export type SyncRunRow = typeof syncRuns.$inferSelect;

/**
 * The organization's own keys (contract section 18): owned by the organization, not by a person,
 * so they outlive their creator's membership. Up to 25 of each kind, names unique per kind
 * (`name_key`, lower-cased). Only the SHA-256 hash is kept. `repositories`: the repository keys an
 * analytics key is limited to (empty: every repository). Each key has its own quota window
 * (`window_start`, `used`), counted in the verdict's transaction.
 */
export const orgApiKeys = sqliteTable(
  "org_api_keys",
  {
    keyId: text("key_id").primaryKey(),
    kind: text("kind", { enum: ["analytics", "members"] }).notNull(),
    name: text("name").notNull(),
    nameKey: text("name_key").notNull(),
    keyHash: text("key_hash").notNull(),
    hint: text("hint").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    repositories: text("repositories", { mode: "json" }).$type<string[]>().notNull(),
    allowedNetworks: text("allowed_networks", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: integer("created_at").notNull(),
    /** Who created (or last regenerated) it, for the page; the key does not depend on them. */
    createdBy: text("created_by"),
    expiresAt: integer("expires_at"),
    lastUsedAt: integer("last_used_at"),
    windowStart: integer("window_start"),
    used: integer("used").notNull().default(0),
  },
  (t) => [uniqueIndex("org_api_keys_by_name").on(t.kind, t.nameKey), uniqueIndex("org_api_keys_by_hash").on(t.keyHash)],
);

export type OrgApiKeyRow = typeof orgApiKeys.$inferSelect;

/** One row (id = 1) once an admin changed a setting (contract section 20); absent means the defaults. */
export const settings = sqliteTable("settings", {
  id: integer("id").primaryKey(),
  seatAssignment: text("seat_assignment", { enum: SEAT_ASSIGNMENTS }).notNull(),
});

/**
 * The newest activity (epoch ms) of every pull request author the service has seen in this
 * organization, by folded login (`lib/names.ts` `foldName`, which is SQLite's `lower()` on the
 * ASCII logins GitHub gives): a member's `lastActivityAt` is the row of `lower(github_login)`, so
 * activity recorded before the person became a member, or under a login's other case, still counts.
 * Only ever raised: an older event never moves it back (contract section 20).
 */
export const authorActivity = sqliteTable("author_activity", {
  loginKey: text("login_key").primaryKey(),
  at: integer("at").notNull(),
});

/**
 * The pull requests (D1's pull request id, stable across shards, moves and renames) this
 * organization has learned of with their author: automatic seat assignment acts on the first time
 * only, whatever replays, reorders or concurrency happen. Written for every pull request the event
 * write path, a webhook or a sync reports, in whatever seat mode.
 */
export const knownPullRequests = sqliteTable("known_pull_requests", {
  prId: integer("pr_id").primaryKey(),
});

/**
 * The waiting list (contract section 20): members without a seat whose new pull request found no
 * seat available in automatic mode, since when. A row leaves when the member gets a seat (any way:
 * `store/members.ts` deletes it with the write) or leaves the organization.
 */
export const seatRequests = sqliteTable(
  "seat_requests",
  {
    githubUserId: text("github_user_id").primaryKey(),
    since: integer("since").notNull(),
  },
  (t) => [index("seat_requests_by_since").on(t.since, t.githubUserId)],
);
