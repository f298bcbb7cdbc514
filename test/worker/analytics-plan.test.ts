import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { type MergedPullRequestQuery, mergedPullRequestsSql } from "../../src/storage/analytics";
import { env } from "./helpers";

const DAY = 86_400_000;
const now = Date.parse("2026-11-21T00:00:00Z");
const base: MergedPullRequestQuery = {
  orgKey: "bigco",
  repoKey: null,
  accessibleRepoKeys: null,
  start: now - 30 * DAY,
  end: now,
  after: null,
  limit: 101,
};

async function plan(q: MergedPullRequestQuery): Promise<string[]> {
  const { sql, params } = new SQLiteSyncDialect().sqlToQuery(mergedPullRequestsSql(q));
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

/** Every case of docs/performance.md: the plan must use indexes, never scan a whole table. */
describe("analytics query plan", () => {
  it.each([
    ["first page, default window", base],
    ["one-year window", { ...base, start: now - 365 * DAY }],
    ["deep page (cursor)", { ...base, start: now - 365 * DAY, after: { mergedAt: now - 200 * DAY, id: 123456 } }],
    ["one repository", { ...base, repoKey: "repo-042" }],
    ["one repository, deep", { ...base, repoKey: "repo-042", after: { mergedAt: now - 10 * DAY, id: 99 } }],
    ["restricted repository access", { ...base, accessibleRepoKeys: ["repo-001", "repo-002"] }],
  ])("%s: index range walks only", async (_name, q) => {
    const details = await plan(q);
    const joined = details.join("\n");
    expect(joined).toMatch(/SEARCH p USING (COVERING )?INDEX pull_requests_(org|repo)_merged/);
    expect(joined).toMatch(/reviews_completed_by_pr/);
    expect(joined).toMatch(/findings_posted_by_pr/);
    expect(joined).toMatch(/ai_authorship_by_pr/);
    // No full scan of the big tables, and no sort of the whole walk.
    for (const line of details) {
      expect(line).not.toMatch(/^SCAN (p|pull_requests|r|reviews|f|findings|a|ai_authorship)\b/);
    }
    expect(joined).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
  });
});
