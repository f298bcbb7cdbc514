import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildSummaryDaysSql } from "../../src/storage/summary-days";

/**
 * The summary's day blocks are exact only if every change to a column they are built from deletes
 * them (migration 0012's triggers). A column added to the build but not to the update trigger's
 * list would leave blocks stale: this test reads both and fails first.
 */
describe("the day blocks' triggers watch every column a block is built from", () => {
  const migrations = readdirSync("migrations/d1").filter((f) => f.endsWith(".sql"));
  const text = migrations.map((f) => readFileSync(join("migrations/d1", f), "utf8")).join("\n");
  // The latest definition of the update trigger (a later migration may make it anew).
  const trigger = [
    ...text.matchAll(/CREATE TRIGGER `summary_days_pull_request_changed` AFTER UPDATE ON `pull_requests`\nWHEN ([^\n]*)\n/g),
  ].at(-1);

  it("the update trigger compares each of them, old against new", () => {
    expect(trigger).not.toBeNull();
    const watched = new Set([...(trigger?.[1] ?? "").matchAll(/old\.`(\w+)` IS NOT new\.`(\w+)`/g)].map((m) => m[1]));
    const read = new Set([...buildSummaryDaysSql().matchAll(/\bp\.(\w+)/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThan(10);
    expect([...read].filter((column) => !watched.has(column)).sort()).toEqual([]);
  });

  it("inserts and deletes of merged pull requests delete their day's blocks, the organization's and the repository's, and the repository's month", () => {
    const latest = readFileSync(
      join(
        "migrations/d1",
        migrations
          .filter((f) =>
            readFileSync(join("migrations/d1", f), "utf8").includes("CREATE TRIGGER `summary_days_pull_request_added`"),
          )
          .sort()
          .at(-1) ?? "",
      ),
      "utf8",
    );
    for (const [event, row] of [
      ["INSERT", "new"],
      ["DELETE", "old"],
    ] as const) {
      expect(latest).toMatch(
        new RegExp(
          `AFTER ${event} ON \`pull_requests\`\\nWHEN ${row}\\.\`merged_at\` IS NOT NULL\\nBEGIN\\n` +
            `  DELETE FROM \`summary_days\` WHERE \`org_key\` = ${row}\\.\`org_key\` AND \`repo_key\` = '' AND [^\\n]*\\n` +
            `  DELETE FROM \`summary_days\` WHERE \`org_key\` = ${row}\\.\`org_key\` AND \`repo_key\` = ${row}\\.\`repo_key\` AND [^\\n]*\\n` +
            // and its repository's month block (migration 0014), the month of the same day.
            `  DELETE FROM \`summary_months\` WHERE \`org_key\` = ${row}\\.\`org_key\` AND \`repo_key\` = ${row}\\.\`repo_key\` AND \`month\` = CAST\\(strftime\\('%s', `,
        ),
      );
    }
    // An update deletes the month blocks of the row before and after it.
    expect(latest).toMatch(
      /AFTER UPDATE ON `pull_requests`[\s\S]*DELETE FROM `summary_months` WHERE `org_key` = old\.`org_key` AND `repo_key` = old\.`repo_key` [\s\S]*DELETE FROM `summary_months` WHERE `org_key` = new\.`org_key` AND `repo_key` = new\.`repo_key` [\s\S]*END;/,
    );
  });
});
