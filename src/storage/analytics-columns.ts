import { getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { aiAuthorship, findings, pullRequests, reviews } from "./d1-schema";

/**
 * The column lists of the analytics tables that the SQL texts of the write path (`events.ts`), the
 * copy between shards (`copy.ts`) and the moves of rows (`renames.ts`) spell, derived from the
 * schema (`d1-schema.ts`): a column added to a table is carried by all of them, or the test that
 * fills every column (`test/worker/analytics-columns.test.ts`) fails.
 *
 * Each table's columns are its key (how a record is found: the organization, the pull request,
 * the record's id), its derived columns (recomputed from other rows by the write path:
 * `review-span.ts`, `pull-request-figures.ts`), and its data: every other column, the fields of
 * the event that holds the record's state. A column's event field is its schema property name
 * (`linesAdded` for `lines_added`), so an event carries exactly the data columns.
 */
export interface DataColumn {
  /** The column's name in SQL. */
  name: string;
  /** The event's field (the schema's property name). */
  field: string;
  /** Stored as 0/1, carried by events as false/true. */
  boolean: boolean;
}

function dataColumns<T extends SQLiteTable>(
  table: T,
  notData: readonly (keyof T["$inferSelect"] & string)[],
): readonly DataColumn[] {
  return Object.entries(getTableColumns(table))
    .filter(([field]) => !notData.includes(field as keyof T["$inferSelect"] & string))
    .map(([field, column]) => ({ field, name: column.name, boolean: column.dataType === "boolean" }));
}

/** The review span and the window-independent figures: recomputed by the write path, never copied. */
export const DERIVED_PULL_REQUEST_FIELDS = [
  "firstReviewedAt",
  "lastReviewedAt",
  "afterMergeTier",
  "beforeMergeTier",
  "aiLines",
  "postedFindings",
  "fixedFindings",
  "firstFindingAt",
  "lastFindingAt",
] as const satisfies readonly (keyof typeof pullRequests.$inferSelect)[];

/**
 * A pull request's data: what its `pull_request` event carries besides the reference (organization,
 * repository, number; the repository's spelling `repo` goes with the reference). `merged_at`
 * follows the merge rule (`rules/pull-request-state.ts`), every other column the version rule.
 */
export const PULL_REQUEST_DATA = dataColumns(pullRequests, [
  "id",
  "orgKey",
  "repoKey",
  "prNumber",
  "repo",
  ...DERIVED_PULL_REQUEST_FIELDS,
]);

/** A child record's table: its id column (and event field) and its data, besides the organization and the pull request. */
export interface ChildColumns {
  table: "reviews" | "findings" | "ai_authorship";
  key: { name: string; field: string };
  data: readonly DataColumn[];
}

export const REVIEW_COLUMNS: ChildColumns = {
  table: "reviews",
  key: { name: "review_id", field: "reviewId" },
  data: dataColumns(reviews, ["orgKey", "reviewId", "prId"]),
};

export const FINDING_COLUMNS: ChildColumns = {
  table: "findings",
  key: { name: "finding_id", field: "findingId" },
  data: dataColumns(findings, ["orgKey", "findingId", "prId"]),
};

export const AUTHORSHIP_COLUMNS: ChildColumns = {
  table: "ai_authorship",
  key: { name: "source_id", field: "sourceId" },
  data: dataColumns(aiAuthorship, ["orgKey", "sourceId", "prId"]),
};

export const CHILD_COLUMNS: readonly ChildColumns[] = [REVIEW_COLUMNS, FINDING_COLUMNS, AUTHORSHIP_COLUMNS];

/** `c1, c2, ...` of columns, each prefixed (`p.c1`) when asked. */
export const names = (columns: readonly DataColumn[], prefix = ""): string => columns.map((c) => `${prefix}${c.name}`).join(", ");

/** `value ->> '$.field', ...`: the columns' values from a JSON row of the statement's array. */
export const jsonFields = (columns: readonly DataColumn[], value: string): string =>
  columns.map((c) => `${value} ->> '$.${c.field}'`).join(", ");

/** The event fields of a stored row's data columns (booleans as booleans). */
export function dataFields(columns: readonly DataColumn[], row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(columns.map((c) => [c.field, c.boolean ? row[c.name] === 1 : row[c.name]]));
}

/** The data fields of an event (to hand to a statement's JSON row). */
export function eventFields(columns: readonly DataColumn[], event: object): Record<string, unknown> {
  const fields = event as Record<string, unknown>;
  return Object.fromEntries(columns.map((c) => [c.field, fields[c.field]]));
}
