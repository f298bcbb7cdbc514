/**
 * Attack (low severity: rows stored before versions, migration 0002): the same gather of stray rows
 * into their organization (`directory/rows.ts` `moveOrganizationRows`) gives different rows on one
 * shard (`moveRows`: `isNewer` needs a non-NULL source version) and across shards (`copy.ts`: a
 * NULL version is sent as version 0, which beats a NULL-version target, as events.ts's
 * "a stored version of NULL is older than any event"). A pre-versions pull request (data, NULL
 * version) meeting a placeholder (NULL version, no data) of the same pull request keeps its data
 * across shards, and loses all but its merge time on one shard (exported with no author and no
 * creation time).
 */
import { describe, expect, it } from "vitest";
import { moveOrganizationRows } from "../../src/directory/rows";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "../worker/helpers";

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

describe("attack: a NULL-version row meeting a placeholder, gathered on one shard vs across shards", () => {
  it("ends in the same row", async () => {
    const across = await gather("ANALYTICS_2");
    const same = await gather("DB");
    expect(across).toMatchObject({ author: "alice" });
    expect(same).toEqual(across);
  });
});
