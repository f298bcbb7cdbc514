import { integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Analytics data in D1. Times are epoch milliseconds. Organizations and repositories are keyed by
 * their lower-cased names (GitHub logins and repository names are case-insensitive).
 *
 * Any event naming a pull request creates its row, so reviews, findings and authorship records
 * that arrive before their pull request still point at a stable integer id. Until the
 * pull_request event arrives the row has `author` null and is never listed.
 */
export const pullRequests = sqliteTable(
  "pull_requests",
  {
    id: integer("id").primaryKey(),
    orgKey: text("org_key").notNull(),
    repoKey: text("repo_key").notNull(),
    prNumber: integer("pr_number").notNull(),
    repo: text("repo").notNull(),
    author: text("author"),
    createdAt: integer("created_at"),
    mergedAt: integer("merged_at"),
    linesAdded: integer("lines_added"),
    linesDeleted: integer("lines_deleted"),
  },
  (t) => [uniqueIndex("pull_requests_ref").on(t.orgKey, t.repoKey, t.prNumber)],
);

export const reviews = sqliteTable(
  "reviews",
  {
    orgKey: text("org_key").notNull(),
    reviewId: text("review_id").notNull(),
    prId: integer("pr_id").notNull(),
    status: text("status", { enum: ["completed", "failed", "in_progress"] }).notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.reviewId] })],
);

export const findings = sqliteTable(
  "findings",
  {
    orgKey: text("org_key").notNull(),
    findingId: text("finding_id").notNull(),
    prId: integer("pr_id").notNull(),
    createdAt: integer("created_at").notNull(),
    posted: integer("posted", { mode: "boolean" }).notNull(),
    aiAddressed: integer("ai_addressed", { mode: "boolean" }).notNull(),
    feedback: text("feedback", { enum: ["positive", "negative"] }),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.findingId] })],
);

export const aiAuthorship = sqliteTable(
  "ai_authorship",
  {
    orgKey: text("org_key").notNull(),
    sourceId: text("source_id").notNull(),
    prId: integer("pr_id").notNull(),
    lines: integer("lines").notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.sourceId] })],
);
