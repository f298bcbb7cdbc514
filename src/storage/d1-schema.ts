import { sql } from "drizzle-orm";
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Analytics data in D1. Times are epoch milliseconds. Repositories are keyed by their lower-cased
 * names (GitHub repository names are case-insensitive), organizations by their home key
 * (`directory/resolve.ts`): the lower-cased login for every organization never renamed.
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
    // The review span, derived from the completed reviews and the merge by the event write path
    // (`storage/review-span.ts`); every column is null until it applies.
    /** Earliest and latest completion time of the pull request's completed reviews. */
    firstReviewedAt: integer("first_reviewed_at"),
    lastReviewedAt: integer("last_reviewed_at"),
    /** Gap tier of `last_reviewed_at - merged_at` when a review completed after the merge. */
    afterMergeTier: integer("after_merge_tier"),
    /** Gap tier of `merged_at - first_reviewed_at` when a review completed before the merge. */
    beforeMergeTier: integer("before_merge_tier"),
    // The figures that depend on no analytics window, derived from the findings, AI-authorship
    // records and line counts by the event write path (`storage/pull-request-figures.ts`).
    /** The sum of the AI-authorship records, capped at the changed lines; null when none. */
    aiLines: integer("ai_lines"),
    /** Posted findings, and of them the AI-addressed ones. */
    postedFindings: integer("posted_findings").notNull().default(0),
    fixedFindings: integer("fixed_findings").notNull().default(0),
    /** Earliest and latest creation time of the posted findings. */
    firstFindingAt: integer("first_finding_at"),
    lastFindingAt: integer("last_finding_at"),
  },
  (t) => [
    uniqueIndex("pull_requests_ref").on(t.orgKey, t.repoKey, t.prNumber),
    // The analytics walks (storage/analytics.ts), each scanned backwards in (merged_at, id) order.
    // The review span rides along so that a pull request without a completed review in the window
    // is skipped without a table lookup; repo_key does the same for access filtering.
    // Merged inside the window:
    index("pull_requests_merged_walk")
      .on(t.orgKey, t.mergedAt, t.id, t.repoKey, t.firstReviewedAt, t.lastReviewedAt)
      .where(sql`merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL`),
    index("pull_requests_repo_merged_walk")
      .on(t.orgKey, t.repoKey, t.mergedAt, t.id, t.firstReviewedAt, t.lastReviewedAt)
      .where(sql`merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL`),
    // Merged before the window (reviewed after the merge) and after it (reviewed before), one
    // range per gap tier:
    index("pull_requests_after_merge_walk")
      .on(t.orgKey, t.afterMergeTier, t.mergedAt, t.id, t.repoKey, t.firstReviewedAt, t.lastReviewedAt)
      .where(sql`after_merge_tier IS NOT NULL`),
    index("pull_requests_before_merge_walk")
      .on(t.orgKey, t.beforeMergeTier, t.mergedAt, t.id, t.repoKey, t.firstReviewedAt, t.lastReviewedAt)
      .where(sql`before_merge_tier IS NOT NULL`),
    // The summary's walk over the merges in a window (storage/analytics-summary.ts): every column
    // a row of the window needs rides along, so such a row costs its index entry and no table row.
    index("pull_requests_summary_walk")
      .on(
        t.orgKey,
        t.mergedAt,
        t.repoKey,
        t.firstReviewedAt,
        t.lastReviewedAt,
        t.createdAt,
        t.linesAdded,
        t.linesDeleted,
        t.aiLines,
        t.postedFindings,
        t.fixedFindings,
        t.firstFindingAt,
        t.lastFindingAt,
        t.repo,
        t.author,
      )
      .where(sql`merged_at IS NOT NULL AND first_reviewed_at IS NOT NULL`),
  ],
);

/**
 * The summary's day blocks (storage/summary-days.ts): per organization and UTC day of the merge,
 * what the summary needs of every merged and reviewed pull request of that day, built by one
 * statement from `pull_requests` when a summary first covers the day, and deleted by triggers
 * (migration 0012) whenever a pull request row of that day is inserted, deleted or changes a
 * column the summary reads. A block therefore always equals what a build would write now.
 *
 * - `lo`, `hi`: the earliest and latest of the day's pull requests' completed reviews and posted
 *   findings (null for a day without any): a window from `lo` to `hi` holds every review and
 *   finding of every pull request of the day, so each counts wholly, from the block.
 * - `totals`, `repos`, `authors`, `repo_of`, `author_of`, `figures`, `durations`: JSON
 *   (summary-days.ts `BlockColumns`), each read
 *   only by the requests that need it; null for a day without any (so an empty day is known, not
 *   walked).
 * - `version`: random at every build (below 2^53, so it reads back exactly as a number): a summary
 *   that read a block in an earlier statement checks that it is still the one stored.
 * - `edge_version`: 0 at every build, counted up by triggers (migration 0019) whenever a completed
 *   review or a posted finding of one of the day's pull requests is written, which a pull request
 *   column does not always show (a review or finding between its first and last). With `version`,
 *   it names the day's reviews and findings as an isolate keeps them (`summary-edges.ts`).
 */
export const summaryDays = sqliteTable(
  "summary_days",
  {
    orgKey: text("org_key").notNull(),
    /** '' for the organization's block of the day; a repository's key for that repository's. */
    repoKey: text("repo_key").notNull(),
    day: integer("day").notNull(),
    pullRequests: integer("pull_requests").notNull(),
    lo: integer("lo"),
    hi: integer("hi"),
    version: integer("version").notNull(),
    edgeVersion: integer("edge_version").notNull().default(0),
    totals: text("totals"),
    counts: text("counts"),
    sorted: blob("sorted"),
    repos: text("repos"),
    authors: text("authors"),
    repoOf: text("repo_of"),
    authorOf: text("author_of"),
    figures: text("figures"),
    durations: text("durations"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.repoKey, t.day] })],
);

/**
 * The summary's month blocks of a listed repository (storage/summary-days.ts `buildSummaryMonths`;
 * issue 33): one row per repository and UTC calendar month, made from the repository's day blocks
 * of that month when a summary of listed repositories first covers the whole month, so that such a
 * summary reads a dozen rows per repository and year instead of 365. Deleted by the same triggers
 * as the day blocks (migration 0014), so it always equals its days' blocks as a build would make
 * them now.
 *
 * - `month`: the UTC day number of the month's first day;
 * - `pull_requests`, `lo`, `hi`: as a day block's, over the month (`lo` null with pull requests: a
 *   month that is never served, e.g. one of a day without a block's content, or too many pull
 *   requests to send as durations);
 * - `days`: JSON, the days' totals and durations one after the other (summary-days.ts `MonthBlock`).
 */
export const summaryMonths = sqliteTable(
  "summary_months",
  {
    orgKey: text("org_key").notNull(),
    repoKey: text("repo_key").notNull(),
    month: integer("month").notNull(),
    pullRequests: integer("pull_requests").notNull(),
    lo: integer("lo"),
    hi: integer("hi"),
    days: text("days"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.repoKey, t.month] })],
);

/**
 * The summary's month blocks per group (storage/summary-group-months.ts; issue 31): for an
 * organization, a UTC calendar month (or a run of its days) and a kind of grouping (`repo` or `author`), what a summary
 * grouped by repository or author reads of the month: each group's sums and its durations' counts
 * per bucket, in one row (the head), and each group's durations sorted, in a row of its own (read
 * only in slices, for the medians' buckets). Made from the month's rows when every day of it has
 * the organization's day block, and deleted (the head) whenever one of those day blocks is
 * (migration 0015's trigger): a head that stands equals what a build would write now.
 *
 * - `first_day`, `last_day`: the run of the month's days it holds (UTC day numbers): the whole
 *   month, or at a window's edge the days its window could be served, from and to a week's
 *   boundary of the month (summary-group-months.ts); a month may hold a few runs;
 * - `built`: when it was made (ms), so that a month keeps only its latest few runs;
 * - `pull_requests`, `lo`, `hi`: as a day block's, over those days (`lo` null with pull requests: a
 *   head never served, e.g. one of a day block without content, or of a group too big for a row);
 * - `days`: JSON, `[day, version]` of each of the month's day blocks it was made from;
 * - `groups`: JSON, per group `[key as the rows spell it, ...BlockSums, tf buckets, tf counts, tm
 *   buckets, tm counts]` (summary-group-months.ts `GroupEntry`);
 * - `version`: random at every build, the same in the head and its group rows.
 */
export const summaryGroupMonthHeads = sqliteTable(
  "summary_group_month_heads",
  {
    orgKey: text("org_key").notNull(),
    month: integer("month").notNull(),
    kind: text("kind", { enum: ["repo", "author"] }).notNull(),
    firstDay: integer("first_day").notNull(),
    lastDay: integer("last_day").notNull(),
    built: integer("built").notNull(),
    pullRequests: integer("pull_requests").notNull(),
    lo: integer("lo"),
    hi: integer("hi"),
    version: integer("version").notNull(),
    days: text("days"),
    groups: text("groups"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.month, t.kind, t.firstDay, t.lastDay] })],
);

/**
 * A group's durations of a month's run (`summary_group_month_heads`): `sorted` as a day block's (those to
 * first review ascending, then those to merge), fixed-width text in a BLOB, read in slices. Served
 * only while its head stands with the same `version`.
 */
export const summaryGroupMonths = sqliteTable(
  "summary_group_months",
  {
    orgKey: text("org_key").notNull(),
    kind: text("kind", { enum: ["repo", "author"] }).notNull(),
    month: integer("month").notNull(),
    firstDay: integer("first_day").notNull(),
    lastDay: integer("last_day").notNull(),
    groupKey: text("group_key").notNull(),
    version: integer("version").notNull(),
    sorted: blob("sorted"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.kind, t.month, t.firstDay, t.lastDay, t.groupKey] })],
);

/**
 * A month block's durations of one bucket, of every group together (`summary_group_month_heads`):
 * `metric` 0 for the durations to first review, 1 to merge; `sorted` the bucket's values ascending,
 * as a day block's. The totals' medians read one such row per month instead of a slice of every
 * group's row. Served only with a head of the same `version`.
 */
export const summaryGroupMonthBuckets = sqliteTable(
  "summary_group_month_buckets",
  {
    orgKey: text("org_key").notNull(),
    kind: text("kind", { enum: ["repo", "author"] }).notNull(),
    month: integer("month").notNull(),
    firstDay: integer("first_day").notNull(),
    lastDay: integer("last_day").notNull(),
    metric: integer("metric").notNull(),
    bucket: integer("bucket").notNull(),
    version: integer("version").notNull(),
    sorted: blob("sorted"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.kind, t.month, t.firstDay, t.lastDay, t.metric, t.bucket] })],
);

/**
 * A span of whole calendar months of month blocks per group (issue 31, tenth session;
 * summary-group-spans.ts), made from the heads a summary served when they held three or more whole
 * months in a row: one head and rows per bucket for the span, so a year by repository or author
 * reads a few heads and a seek per group and duration instead of a dozen of each.
 * - `first_day`, `last_day`: the span's first and last day (a month's first, a month's last);
 * - `built`, `pull_requests`, `lo`, `hi`, `version`, `days`, `groups`: as a month head's, over the span
 *   (`lo` null with pull requests: a marker, never served, e.g. a group too big for a row);
 * - `months`: JSON, `[first day, last day, version]` of each head it was made from (months' runs, or
 *   an older span and the months beside it);
 * - `sorted_from` (migration 0017): its rows of every group together of at least this many values
 *   are sorted (`summary-medians.ts` reads a window of them); null: none is (a span made before, or
 *   by a Worker of before, while a deploy follows the migration).
 * A trigger (migration 0016) deletes a span's head whenever one of its day blocks is deleted.
 */
export const summaryGroupSpanHeads = sqliteTable(
  "summary_group_span_heads",
  {
    orgKey: text("org_key").notNull(),
    kind: text("kind", { enum: ["repo", "author"] }).notNull(),
    firstDay: integer("first_day").notNull(),
    lastDay: integer("last_day").notNull(),
    built: integer("built").notNull(),
    pullRequests: integer("pull_requests").notNull(),
    lo: integer("lo"),
    hi: integer("hi"),
    version: integer("version").notNull(),
    days: text("days"),
    groups: text("groups"),
    months: text("months"),
    sortedFrom: integer("sorted_from"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.kind, t.firstDay, t.lastDay] })],
);

/**
 * A span's durations of one bucket (`summary_group_span_heads`): of one group (`group_key`), that
 * group's values of the bucket ascending; of every group together (`group_key` ''), its heads'
 * bucket rows one after the other (in no order: the median's rank is selected from them), or, with
 * at least the head's `sorted_from` values, ascending. A row per
 * bucket and not per group: a group's year is some 30 KB, which SQLite reads whole for each slice.
 * Served only with a head of the same `version`.
 */
export const summaryGroupSpanBuckets = sqliteTable(
  "summary_group_span_buckets",
  {
    orgKey: text("org_key").notNull(),
    kind: text("kind", { enum: ["repo", "author"] }).notNull(),
    firstDay: integer("first_day").notNull(),
    lastDay: integer("last_day").notNull(),
    groupKey: text("group_key").notNull(),
    metric: integer("metric").notNull(),
    bucket: integer("bucket").notNull(),
    version: integer("version").notNull(),
    sorted: blob("sorted"),
  },
  (t) => [primaryKey({ columns: [t.orgKey, t.kind, t.firstDay, t.lastDay, t.groupKey, t.metric, t.bucket] })],
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
    // The conditions must stay literal in queries (`status = 'completed'`) for SQLite to use these
    // partial indexes. By pull request: "has a completed review in the window", the review span.
    index("reviews_completed_by_pr").on(t.prId, t.completedAt).where(sql`status = 'completed'`),
    // By completion time: the analytics plan for narrow windows.
    index("reviews_completed_by_time").on(t.orgKey, t.completedAt, t.prId).where(sql`status = 'completed'`),
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
    // Flagged = unaddressed + addressed: two tight ranges per pull request, each read once.
    index("findings_posted_by_pr_outcome").on(t.prId, t.aiAddressed, t.createdAt).where(sql`posted = 1`),
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
 * Pull requests whose review span must be recomputed at the end of the current batch: for the event
 * write path, besides the ones its events name, the previous pull request of a review that moves to
 * another one; for a move of rows (`renames.ts`), the rows that gain, lose or merge reviews. Filled
 * and emptied inside one `batch()` transaction, so it is empty between batches.
 */
export const pullRequestsToRefresh = sqliteTable("pull_requests_to_refresh", {
  prId: integer("pr_id").primaryKey(),
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

/**
 * The organization directory (see `directory/resolve.ts`). An organization's data lives under its
 * home key: its object's name and the `org_key` of its rows. For an organization never renamed that
 * is its folded login, and nothing is written here. A row maps a login whose home is another key:
 * a renamed organization's new login, or a login re-used while its folded key was another
 * organization's home. The organization's object holds its current login and verifies it on every
 * call, so a stale row is harmless.
 */
export const organizationNames = sqliteTable(
  "organization_names",
  {
    loginKey: text("login_key").primaryKey(),
    homeKey: text("home_key").notNull(),
  },
  (t) => [index("organization_names_by_home").on(t.homeKey)],
);

/**
 * GitHub account id → home key, for every organization a webhook named by id: the identity that
 * survives renames, so a delivery that still carries an old login (or already a new one) finds the
 * organization whatever the order of arrival.
 */
export const organizationAccounts = sqliteTable("organization_accounts", {
  accountId: integer("account_id").primaryKey(),
  homeKey: text("home_key").notNull(),
});

/**
 * The version of the identity each home last wrote to the directory (its object's membership
 * clock, raised by every change of login or account id). Directory writes of one organization may
 * run concurrently (two queue messages of it in flight); one applies only when its version is not
 * older than the one stored, so a late write of an older identity cannot undo a newer one.
 */
export const organizationHomes = sqliteTable("organization_homes", {
  homeKey: text("home_key").primaryKey(),
  version: integer("version").notNull(),
});

/**
 * GitHub installation id → home key, for every installation the control plane or GitHub
 * registered: an installation belongs to one organization for good, so the control plane's
 * `PUT /internal/v1/organizations/{org}` finds it whatever login it names (an old one, or a new one
 * the organization's object has not applied yet).
 */
export const organizationInstallations = sqliteTable("organization_installations", {
  installationId: integer("installation_id").primaryKey(),
  homeKey: text("home_key").notNull(),
});

/**
 * Shards (contract section 16, `directory/shards.ts`). Every shard carries every table (one
 * migrations folder for all of them); the directory's tables, and these two, are used only in the
 * main database (`DB`).
 *
 * The shard each organization's analytics rows live in, by home key (stable across renames and
 * reinstalls, like the home key itself). `moving_to`: the shard a running move copies it to
 * (writes then go to both). Organizations stored before shards existed are recorded on `DB`.
 */
export const analyticsPlacements = sqliteTable(
  "analytics_placements",
  {
    homeKey: text("home_key").primaryKey(),
    shard: text("shard").notNull(),
    movingTo: text("moving_to"),
  },
  (t) => [index("analytics_placements_by_shard").on(t.shard)],
);

/** The last move of each organization that was ever moved (`GET /internal/v1/organizations/{org}/move`). */
export const analyticsMoves = sqliteTable("analytics_moves", {
  homeKey: text("home_key").primaryKey(),
  login: text("login").notNull(),
  fromShard: text("from_shard").notNull(),
  toShard: text("to_shard").notNull(),
  state: text("state", { enum: ["copying", "catching_up", "switched", "done", "failed"] }).notNull(),
  rowsCopied: integer("rows_copied").notNull(),
  /** The copy's position: the table being copied and the last key copied of it (null: from its start). */
  copyTable: text("copy_table"),
  copyAfter: text("copy_after"),
  error: text("error"),
  startedAt: integer("started_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  /**
   * When a failed move's undo ended (`directory/moves.ts` `undoCopy`: the source's fence lifted, the
   * placement back to the source alone, the target's copy deleted); null until then. A new move is
   * recorded only over a move done, or failed and undone.
   */
  undoneAt: integer("undone_at"),
});

/**
 * Per shard, in the shard itself: the pull request rows it stores (kept by triggers, so placement
 * reads one row per shard instead of counting), and the next pull request id sequence. A pull
 * request's id is `sequence * 1024 + shard index`: unique across every shard, so a move keeps
 * the ids (an export cursor issued before the switch stays exact after it). Ids stored before
 * shards existed are below 2^32, under every allocated one.
 */
export const shardCounters = sqliteTable("shard_counters", {
  one: integer("one").primaryKey(),
  pullRequests: integer("pull_requests").notNull(),
  nextSequence: integer("next_sequence").notNull(),
});

/**
 * Per shard, the organizations whose rows a move between shards has begun to copy away from it
 * (`directory/moves.ts` `beginMove` writes the row on the move's source before its copy starts).
 * A move of rows between keys (a repository rename, a stray key gathered: `storage/renames.ts`
 * `moveRows`) checks it in its own transaction and does nothing on a fenced shard: a move of rows
 * changes no row count, so the move's catch-up could not see one that landed behind its copy. The
 * row stays after the move (the organization's rows are gone from the shard; a rename that read the
 * old placement long ago must still find the fence). The move's target is fenced too until its
 * switch (its partial copy is no place for a rename), and stays fenced when the move fails. A
 * failed move lifts its source's fence (`undoCopy`); one no move holds is lifted by the rename that
 * meets it (`directory/moves.ts` `liftStaleFences`).
 */
export const moveFences = sqliteTable("move_fences", {
  orgKey: text("org_key").primaryKey(),
  /** The start of the move that set it (its `analytics_moves.started_at`): only that move lifts it. */
  startedAt: integer("started_at").notNull(),
});

/**
 * Per organization, in its shard with its rows: the last entry of its organization object's
 * pending-rename log (`pending_renames.seq`) whose move of rows ran here (`storage/renames.ts`).
 * Checked and raised in the move of rows' own transaction, so an entry followed once is never
 * followed again, also by a second webhook consumer replaying an older copy of the log. Moves
 * between shards carry it with the rows (`directory/moves.ts` `beginMove`).
 */
export const renamesFollowed = sqliteTable("renames_followed", {
  orgKey: text("org_key").primaryKey(),
  seq: integer("seq").notNull(),
});
