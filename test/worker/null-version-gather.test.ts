/**
 * Rows stored before versions (migration 0002: `updated_at` NULL) are judged the same by both
 * gathers of stray rows into their organization (`directory/rows.ts` `moveOrganizationRows`): on
 * one shard (`storage/renames.ts` `moveRows`) as across shards (`storage/copy.ts`, which sends such a
 * row as version 0, newer than a stored NULL, as the event write path takes it). An outside review
 * found a pre-versions pull request meeting a placeholder keep its data across shards and lose all
 * but its merge time on one shard (exported with no author and no creation time).
 */
import { describe, expect, it } from "vitest";
import { moveOrganizationRows } from "../../src/directory/rows";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "./helpers";

const shard = (name: string) => (env as unknown as Record<string, D1Database>)[name] as D1Database;
const parse = (events: unknown[]) => EventBatch.parse({ events }).events;
const INDEX: Record<string, number> = { DB: 0, ANALYTICS_2: 1 };

async function gather(homeShard: "DB" | "ANALYTICS_2") {
  const stray = unique("nstray");
  const home = unique("nhome");
  await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB'), (?2, ?3)")
    .bind(stray, home, homeShard)
    .run();
  await writeEvents(shard("DB"), parse([ev.pr(stray, 1), ev.review(stray, 1, "r1")]), new Map(), { shardIndex: 0 });
  // A row from before versions.
  await shard("DB").prepare("UPDATE pull_requests SET updated_at = NULL WHERE org_key = ?1").bind(stray).run();
  // The home holds a placeholder of the same pull request (a finding arrived first).
  await writeEvents(shard(homeShard), parse([ev.finding(home, 1, "f1")]), new Map(), { shardIndex: INDEX[homeShard] as number });
  await moveOrganizationRows(env, stray, home);
  return shard(homeShard)
    .prepare("SELECT author, created_at, merged_at FROM pull_requests WHERE org_key = ?1 AND pr_number = 1")
    .bind(home)
    .first();
}

describe("rows from before versions, gathered on one shard or across shards", () => {
  it("a pull request meeting a placeholder ends in the same row", async () => {
    const across = await gather("ANALYTICS_2");
    const same = await gather("DB");
    expect(across).toMatchObject({ author: "alice" });
    expect(same).toEqual(across);
  });

  it("a review stored under both keys ends in the same row", async () => {
    const gatherReview = async (homeShard: "DB" | "ANALYTICS_2") => {
      const stray = unique("rstray");
      const home = unique("rhome");
      await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB'), (?2, ?3)")
        .bind(stray, home, homeShard)
        .run();
      await writeEvents(
        shard("DB"),
        parse([ev.pr(stray, 1), ev.review(stray, 1, "r1", { completedAt: "2026-10-01T12:00:00Z" })]),
        new Map(),
        { shardIndex: 0 },
      );
      await writeEvents(
        shard(homeShard),
        parse([ev.pr(home, 1), ev.review(home, 1, "r1", { completedAt: "2026-10-01T15:00:00Z" })]),
        new Map(),
        { shardIndex: INDEX[homeShard] as number },
      );
      for (const [db, key] of [
        [shard("DB"), stray],
        [shard(homeShard), home],
      ] as const) {
        await db.prepare("UPDATE reviews SET updated_at = NULL WHERE org_key = ?1").bind(key).run();
      }
      await moveOrganizationRows(env, stray, home);
      return shard(homeShard)
        .prepare("SELECT completed_at FROM reviews WHERE org_key = ?1 AND review_id = 'r1'")
        .bind(home)
        .first();
    };
    const across = await gatherReview("ANALYTICS_2");
    expect(across).toEqual({ completed_at: Date.parse("2026-10-01T12:00:00Z") });
    expect(await gatherReview("DB")).toEqual(across);
  });
});
