/**
 * A placeholder created on a move's target keeps its pull request's given id (the id it has on the
 * move's source, contract section 16: one record, one id on both shards). A pull request's own
 * events carry the id on their first row only (they are applied one by one, `storage/events.ts`),
 * but placeholders carry it on every row: their statement skips the rows whose child is already
 * stored, so the row that inserts may be any of them. An outside review found the first-row rule
 * applied to placeholders too, giving one a new id of this shard when its first child was skipped.
 */
import { describe, expect, it } from "vitest";
import { shardOf } from "../../src/directory/shards";
import { EventBatch } from "../../src/schemas/events";
import { refKey, writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "./helpers";

const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

describe("a placeholder created on a move's target keeps the given id", () => {
  it("when the pull request's first child in the batch is older than the stored one", async () => {
    const shard = shardOf(env, "ANALYTICS_2");
    const org = unique("phid");
    const key = org.toLowerCase();
    // r1 is stored (newer) on another pull request, #9.
    await writeEvents(shard.db, parse([ev.review(org, 9, "r1", { updatedAt: "2026-10-05T00:00:00.000Z" })]), new Map(), {
      shardIndex: shard.index,
    });
    const given = (5_000_000 + Math.floor(Math.random() * 1_000_000)) * 1024 + (shard.index === 0 ? 1 : 0);
    const ids = { shardIndex: shard.index, given: new Map([[refKey({ orgKey: key, repoKey: "api", prNumber: 1 }), given]]) };
    // A copy naming #1 with its source id: an older r1 (changes nothing) and a new r2.
    await writeEvents(shard.db, parse([ev.review(org, 1, "r1"), ev.review(org, 1, "r2")]), new Map(), ids);
    const row = await shard.db.prepare("SELECT id FROM pull_requests WHERE org_key = ?1 AND pr_number = 1").bind(key).first();
    expect(row).toEqual({ id: given });
  });

  it("with the order of the two children swapped", async () => {
    const shard = shardOf(env, "ANALYTICS_2");
    const org = unique("phid2");
    const key = org.toLowerCase();
    await writeEvents(shard.db, parse([ev.review(org, 9, "r1", { updatedAt: "2026-10-05T00:00:00.000Z" })]), new Map(), {
      shardIndex: shard.index,
    });
    const given = (6_000_000 + Math.floor(Math.random() * 1_000_000)) * 1024 + (shard.index === 0 ? 1 : 0);
    const ids = { shardIndex: shard.index, given: new Map([[refKey({ orgKey: key, repoKey: "api", prNumber: 1 }), given]]) };
    await writeEvents(shard.db, parse([ev.review(org, 1, "r2"), ev.review(org, 1, "r1")]), new Map(), ids);
    const row = await shard.db.prepare("SELECT id FROM pull_requests WHERE org_key = ?1 AND pr_number = 1").bind(key).first();
    expect(row).toEqual({ id: given });
  });
});
