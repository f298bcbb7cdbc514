import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Analytics data in D1. Times are epoch milliseconds. Organizations and repositories are keyed by
 * their lower-cased names (GitHub logins and repository names are case-insensitive).
 *
 * Any event naming a pull request creates its row, so reviews, findings and authorship records
 * that arrive before their pull request still point at a stable integer id. Until the
 * pull_request event arrives the row has `author` null and is never listed.
 *
 * `updated_at` on every event-fed table is the version of the row: the source's `updatedAt` of the
 * event whose state the row holds (epoch ms). An event replaces a row only with a strictly greater
 * version (contract section 5, "Versions"). NULL means "no version known": a placeholder pull
 * request, or a row stored before versions existed; any event replaces it.
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
    updatedAt: integer("updated_at"),
  },
  (t) => [
    uniqueIndex("pull_requests_ref").on(t.orgKey, t.repoKey, t.prNumber),
    // The analytics walk: an organization's merged pull requests in (merged_at, id) order, scanned
    // backwards; repo_key rides along so access filtering needs no table lookup.
    index("pull_requests_org_merged").on(t.orgKey, t.mergedAt, t.id, t.repoKey).where(sql`merged_at IS NOT NULL`),
    index("pull_requests_repo_merged").on(t.orgKey, t.repoKey, t.mergedAt, t.id).where(sql`merged_at IS NOT NULL`),
  ],
);

export const reviews = sqliteTable(
  "reviews",
  {
    orgKey: text("org_key").notNull(),
    reviewId: text("review_id").notNull(),
    prId: integer("pr_id").notNull(),
    status: text("status", { enum: ["completed", "failed", "in_progress"] }).notNull(),
    completedAt: integer("completed_at"),
    updatedAt: integer("updated_at"),
  },
  (t) => [
    primaryKey({ columns: [t.orgKey, t.reviewId] }),
    // "Has a completed review in the window" and "first completed review"; the condition must stay
    // literal in queries (`status = 'completed'`) for SQLite to use this partial index.
    index("reviews_completed_by_pr").on(t.prId, t.completedAt).where(sql`status = 'completed'`),
  ],
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
    updatedAt: integer("updated_at"),
  },
  (t) => [
    primaryKey({ columns: [t.orgKey, t.findingId] }),
    index("findings_posted_by_pr").on(t.prId, t.createdAt, t.aiAddressed).where(sql`posted = 1`),
  ],
);

export const aiAuthorship = sqliteTable(
  "ai_authorship",
  {
    orgKey: text("org_key").notNull(),
    sourceId: text("source_id").notNull(),
    prId: integer("pr_id").notNull(),
    lines: integer("lines").notNull(),
    updatedAt: integer("updated_at"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.sourceId] }), index("ai_authorship_by_pr").on(t.prId, t.lines)],
);

/**
 * How far completed reviews and merges of an organization's pull requests lie apart, at most,
 * in each direction (ms, never negative). A pull request with a review completed inside
 * [start, end] was merged inside [start - maxAfterMerge, end + maxBeforeMerge], which bounds
 * the analytics walk. Kept up to date by the event write path; it only grows, so it is always
 * a safe (if sometimes loose) bound.
 */
export const orgReviewLag = sqliteTable("org_review_lag", {
  orgKey: text("org_key").primaryKey(),
  maxBeforeMerge: integer("max_before_merge").notNull(),
  maxAfterMerge: integer("max_after_merge").notNull(),
});

/**
 * GitHub webhook messages the queue gave up on (the dead-letter queue's consumer copies each one
 * here), for an operator to list and replay through the control plane. `message` is the queue
 * message as it was sent (JSON); `id` is its delivery id and part.
 */
export const parkedDeliveries = sqliteTable("parked_deliveries", {
  id: text("id").primaryKey(),
  delivery: text("delivery").notNull(),
  event: text("event").notNull(),
  message: text("message").notNull(),
  attempts: integer("attempts").notNull(),
  parkedAt: integer("parked_at").notNull(),
});
