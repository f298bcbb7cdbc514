import { getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { DERIVED_PULL_REQUEST_FIELDS } from "../../src/storage/analytics-columns";
import { copyPage, ORGANIZATION_TABLES } from "../../src/storage/copy";
import { aiAuthorship, findings, pullRequests, reviews } from "../../src/storage/d1-schema";
import { refreshPullRequestFiguresSql } from "../../src/storage/pull-request-figures";
import { moveRows } from "../../src/storage/renames";
import { refreshReviewSpansSql } from "../../src/storage/review-span";
import { env, unique } from "./helpers";

/**
 * Issue 28 item 2: the SQL texts that carry analytics rows (the write path, the copy between
 * shards, the moves of a repository rename and of an organization rename) take their column lists
 * from the schema. Here every column of every analytics table, as the schema lists it now, is
 * filled with a value no other column holds (the derived ones by the write path's own
 * recomputation), and every value must come out of each kind of move as it went in: a column
 * added later and forgotten by one of the texts fails here without this test changing.
 */

const TABLES: Record<(typeof ORGANIZATION_TABLES)[number], SQLiteTable> = {
  pull_requests: pullRequests,
  reviews,
  findings,
  ai_authorship: aiAuthorship,
};

/** Columns the fixture places itself (the record's identity and the times that shape the derived columns). */
type Fixed = Record<string, string | number>;
type Row = Record<string, unknown>;

/** Distinct values: every integer and text column gets one no other column of the fixture holds. */
class Values {
  #n: number;
  constructor(base: number) {
    this.#n = base;
  }
  next(): number {
    this.#n += 1_000;
    return this.#n;
  }
}

/** Inserts one row of `table` with every column but the derived ones filled: `fixed`, else a distinct value. */
async function insertRow(db: D1Database, table: SQLiteTable, name: string, fixed: Fixed, values: Values): Promise<void> {
  const derived: readonly string[] = name === "pull_requests" ? DERIVED_PULL_REQUEST_FIELDS : [];
  const columns = Object.entries(getTableColumns(table)).filter(([field]) => !derived.includes(field));
  const row = columns.map(([, column]) => {
    if (column.name in fixed) return fixed[column.name];
    const enumValues = (column as { enumValues?: string[] }).enumValues;
    if (column.dataType === "boolean") return 1;
    if (enumValues && enumValues.length > 0) return enumValues[0];
    return column.dataType === "string" ? `${column.name}-${values.next()}` : values.next();
  });
  await db
    .prepare(
      `INSERT INTO ${name} (${columns.map(([, c]) => c.name).join(", ")}) VALUES (${row.map((_, i) => `?${i + 1}`).join(", ")})`,
    )
    .bind(...row)
    .run();
}

/** Pull request ids of the fixtures (ids are unique in a database, across organizations). */
let lastPrId = 3_000_000 + (Date.now() % 1_000) * 1_000;
const nextPrId = () => ++lastPrId;

/**
 * One pull request of `repo` with two completed reviews (one before the merge, one after: both
 * tiers apply), a posted AI-addressed finding and an authorship record, every column filled; then
 * the write path's recomputation of its derived columns (without children when `childIds` is
 * null). Answers its id.
 */
async function seed(db: D1Database, orgKey: string, repo: string, base: number, childIds: string | null): Promise<number> {
  const values = new Values(base);
  const id = nextPrId();
  const created = base + 10;
  const ref = { org_key: orgKey, pr_id: id };
  await insertRow(
    db,
    pullRequests,
    "pull_requests",
    {
      id,
      org_key: orgKey,
      repo_key: repo.toLowerCase(),
      repo,
      pr_number: 7,
      created_at: created,
      merged_at: created + 5 * 86_400_000,
    },
    values,
  );
  if (childIds === null) return id;
  await insertRow(db, reviews, "reviews", { ...ref, review_id: `${childIds}-r1`, completed_at: created + 86_400_000 }, values);
  await insertRow(
    db,
    reviews,
    "reviews",
    { ...ref, review_id: `${childIds}-r2`, completed_at: created + 9 * 86_400_000 },
    values,
  );
  await insertRow(
    db,
    findings,
    "findings",
    { ...ref, finding_id: `${childIds}-f`, created_at: created + 2 * 86_400_000 },
    values,
  );
  await insertRow(db, aiAuthorship, "ai_authorship", { ...ref, source_id: `${childIds}-a`, lines: 3 }, values);
  const targets = `SELECT id FROM pull_requests WHERE id = ${id}`;
  await db.batch([db.prepare(refreshReviewSpansSql(targets)), db.prepare(refreshPullRequestFiguresSql(targets))]);
  return id;
}

/** Every row of every analytics table of the organization, all columns, in key order. */
async function snapshot(db: D1Database, orgKey: string): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const name of ORGANIZATION_TABLES) {
    const { results } = await db.prepare(`SELECT * FROM ${name} WHERE org_key = ?1 ORDER BY rowid`).bind(orgKey).all<Row>();
    out[name] = results.map((r) => ({ ...r })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  return out;
}

/** The snapshot as it must read after a move: some columns take new values. */
function moved(snap: Record<string, Row[]>, changes: { pr?: Row; child?: Row }): Record<string, Row[]> {
  const out: Record<string, Row[]> = {};
  for (const [name, rows] of Object.entries(snap)) {
    out[name] = rows
      .map((r) => ({ ...r, ...(name === "pull_requests" ? changes.pr : changes.child) }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  return out;
}

/** The fixture fills every column: none is null or missing (a new column the fixture cannot fill fails here first). */
function expectEveryColumnFilled(snap: Record<string, Row[]>): void {
  for (const name of ORGANIZATION_TABLES) {
    const columns = Object.values(getTableColumns(TABLES[name])).map((c) => c.name);
    expect(snap[name]?.length, name).toBeGreaterThan(0);
    for (const row of snap[name] ?? []) {
      expect(Object.keys(row).sort(), name).toEqual([...columns].sort());
      for (const column of columns) expect(row[column], `${name}.${column}`).not.toBeNull();
    }
  }
}

/** Copies the organization the way a move between shards does, page by page (`copyPage`). */
async function copyAll(from: D1Database, to: D1Database, orgKey: string, shardIndex: number): Promise<void> {
  let position: Parameters<typeof copyPage>[2] | null = { table: "pull_requests", after: null };
  while (position) position = (await copyPage({ db: from, orgKey }, { db: to, orgKey, shardIndex }, position, 2)).next;
}

describe("every column of every analytics table survives moves (derived column lists)", () => {
  it("checks the tables the copy knows are the schema's analytics tables", () => {
    expect(Object.keys(TABLES).sort()).toEqual([...ORGANIZATION_TABLES].sort());
  });

  it("keeps every value through a move between shards, a repository rename and an organization rename", async () => {
    const org = unique("cols").toLowerCase();
    const renamed = unique("cols-new").toLowerCase();
    await seed(env.DB, org, "Api", 1_700_000_000_000, org);
    const before = await snapshot(env.DB, org);
    expectEveryColumnFilled(before);

    await copyAll(env.DB, env.ANALYTICS_2, org, 1);
    expect(await snapshot(env.ANALYTICS_2, org)).toEqual(before);

    await moveRows(env.ANALYTICS_2, { orgKey: org, repo: "Api" }, { orgKey: org, repo: "Web" });
    expect(await snapshot(env.ANALYTICS_2, org)).toEqual(moved(before, { pr: { repo: "Web", repo_key: "web" } }));

    await moveRows(env.ANALYTICS_2, { orgKey: org }, { orgKey: renamed });
    expect(await snapshot(env.ANALYTICS_2, org)).toEqual(emptySnapshot());
    expect(await snapshot(env.ANALYTICS_2, renamed)).toEqual(
      moved(before, { pr: { repo: "Web", repo_key: "web", org_key: renamed }, child: { org_key: renamed } }),
    );
  });

  it("hands every newer value to the row that survives when both names already hold the record", async () => {
    const org = unique("cols-merge").toLowerCase();
    const renamed = unique("cols-merge-new").toLowerCase();
    // Repository rename onto a row of the new name: an older version of the same pull request.
    const olderId = await seed(env.DB, org, "Web", 1_600_000_000_000, null);
    await seed(env.DB, org, "Api", 1_700_000_000_000, org);
    const newer = await snapshot(env.DB, org);
    const newerRows = only(newer, "Api");
    await moveRows(env.DB, { orgKey: org, repo: "Api" }, { orgKey: org, repo: "Web" });
    const afterRepo = await snapshot(env.DB, org);
    // The survivor keeps its id; its data, span and figures are the newer row's; the children now point at it.
    const survivor = afterRepo.pull_requests?.find((r) => r.id === olderId);
    expect(afterRepo.pull_requests).toHaveLength(1);
    expect(survivor).toEqual({ ...newerRows.pull_requests?.[0], id: olderId, repo: "Web", repo_key: "web" });
    for (const name of ["reviews", "findings", "ai_authorship"]) {
      for (const row of newerRows[name] ?? []) expect(afterRepo[name]).toContainEqual({ ...row, pr_id: olderId });
    }

    // Organization rename onto an organization that holds the same records in older versions.
    const target = await seedOlderCopy(renamed, org);
    await moveRows(env.DB, { orgKey: org }, { orgKey: renamed });
    expect(await snapshot(env.DB, org)).toEqual(emptySnapshot());
    const afterOrg = await snapshot(env.DB, renamed);
    expect(afterOrg).toEqual(
      moved(afterRepo, { pr: { org_key: renamed, id: target }, child: { org_key: renamed, pr_id: target } }),
    );
  });
});

const emptySnapshot = () => Object.fromEntries(ORGANIZATION_TABLES.map((t) => [t, []]));

/** The rows of one repository's pull request and its children, by table. */
function only(snap: Record<string, Row[]>, repo: string): Record<string, Row[]> {
  const pr = snap.pull_requests?.filter((r) => r.repo === repo) ?? [];
  const ids = new Set(pr.map((r) => r.id));
  return Object.fromEntries(
    Object.entries(snap).map(([name, rows]) => [name, name === "pull_requests" ? pr : rows.filter((r) => ids.has(r.pr_id))]),
  );
}

/**
 * In `orgKey`, the same records as `like` holds (pull request by repository and number, children by
 * id), each an older version with other values everywhere. Answers the pull request's id.
 */
async function seedOlderCopy(orgKey: string, like: string): Promise<number> {
  const db = env.DB;
  const pr = await db
    .prepare("SELECT repo, pr_number FROM pull_requests WHERE org_key = ?1")
    .bind(like)
    .first<{ repo: string; pr_number: number }>();
  const values = new Values(1_500_000_000_000);
  const id = nextPrId();
  const created = 1_500_000_000_000;
  await insertRow(
    db,
    pullRequests,
    "pull_requests",
    {
      id,
      org_key: orgKey,
      repo_key: String(pr?.repo).toLowerCase(),
      repo: String(pr?.repo),
      pr_number: Number(pr?.pr_number),
      created_at: created,
      merged_at: created + 86_400_000,
    },
    values,
  );
  for (const name of ["reviews", "findings", "ai_authorship"] as const) {
    const key = { reviews: "review_id", findings: "finding_id", ai_authorship: "source_id" }[name];
    const { results } = await db.prepare(`SELECT ${key} AS k FROM ${name} WHERE org_key = ?1`).bind(like).all<{ k: string }>();
    for (const { k } of results) {
      const times = name === "ai_authorship" ? { lines: 1 } : { [name === "reviews" ? "completed_at" : "created_at"]: created };
      await insertRow(db, TABLES[name], name, { org_key: orgKey, pr_id: id, [key]: k, ...times }, values);
    }
  }
  return id;
}
