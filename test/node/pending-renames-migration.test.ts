import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Organization migration 0011 turns `pending_renames` (one row per old name, a later target
 * overwriting it in place) into a log in the order the renames were applied. The renames waiting
 * when it runs keep the order they were first recorded in (the old table's rowid; a row updated in
 * place kept its own), and every waiting rename survives: the webhook consumer follows them after
 * the deploy as before.
 */
describe("organization migration 0011: pending renames as a log", () => {
  it("keeps every waiting rename, in the order each was first recorded", () => {
    const db = new DatabaseSync(":memory:");
    // The table as migrations 0000 to 0010 left it.
    db.exec("CREATE TABLE `pending_renames` (`from_key` text PRIMARY KEY NOT NULL, `to_name` text NOT NULL)");
    const add = db.prepare(
      "INSERT INTO pending_renames (from_key, to_name) VALUES (?, ?) ON CONFLICT (from_key) DO UPDATE SET to_name = excluded.to_name",
    );
    const renames: [string, string][] = [
      ["zeta", "Alpha"],
      ["alpha", "Beta"],
      ["zeta", "Gamma"], // updated in place: keeps its first place
      ["mid", "Mid2"],
    ];
    for (const [from, to] of renames) add.run(from, to);

    const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
    const migration = readFileSync(join(root, "migrations/organization/0011_pending_renames_log.sql"), "utf8");
    for (const statement of migration.split("--> statement-breakpoint")) if (statement.trim()) db.exec(statement);

    expect(db.prepare("SELECT seq, from_key, to_name FROM pending_renames ORDER BY seq").all()).toEqual([
      { seq: 1, from_key: "zeta", to_name: "Gamma" },
      { seq: 2, from_key: "alpha", to_name: "Beta" },
      { seq: 3, from_key: "mid", to_name: "Mid2" },
    ]);
    // A log now: the same old name twice, each its own entry after every one before.
    db.prepare("INSERT INTO pending_renames (from_key, to_name) VALUES (?, ?)").run("zeta", "Delta");
    expect(db.prepare("SELECT seq FROM pending_renames WHERE from_key = 'zeta' ORDER BY seq").all()).toEqual([
      { seq: 1 },
      { seq: 4 },
    ]);
  });
});
