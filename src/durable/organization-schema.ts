import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Tables inside each organization's Durable Object (one object per organization). */

/** Exactly one row (id = 1) once the control plane has registered the installation. */
export const installation = sqliteTable("installation", {
  id: integer("id").primaryKey(),
  login: text("login").notNull(),
  installationId: integer("installation_id").notNull(),
  installedAt: integer("installed_at").notNull(),
  blocked: integer("blocked", { mode: "boolean" }).notNull(),
  plan: text("plan", { enum: ["free", "team", "pro"] }).notNull(),
  subscriptionStatus: text("subscription_status", { enum: ["active", "past_due", "canceled", "none"] }).notNull(),
  billedThroughService: integer("billed_through_service", { mode: "boolean" }).notNull(),
  purchasedSeats: integer("purchased_seats").notNull(),
});

export const members = sqliteTable("members", {
  githubUserId: text("github_user_id").primaryKey(),
  githubLogin: text("github_login").notNull(),
  workEmail: text("work_email").notNull(),
  role: text("role", { enum: ["member", "admin", "viewer"] }).notNull(),
  seat: integer("seat", { mode: "boolean" }).notNull(),
  isBot: integer("is_bot", { mode: "boolean" }).notNull(),
});

/** Keyed by the lower-cased name: GitHub repository names are case-insensitive. */
export const repositories = sqliteTable("repositories", {
  repoKey: text("repo_key").primaryKey(),
  name: text("name").notNull(),
  private: integer("private", { mode: "boolean" }).notNull(),
});

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
