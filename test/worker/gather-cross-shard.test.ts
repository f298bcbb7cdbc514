/**
 * Stray rows joining their organization on another shard (`directory/rows.ts`
 * `moveOrganizationRows`, two shards) are copied, then deleted in a separate transaction. An event
 * batch that resolved its home before the directory learned the new home (`directory/events.ts`
 * `storeEvents`) can write to the stray key between the two: the delete then does nothing (it
 * checks that nothing was written since the copy began, `storage/copy.ts`
 * `deleteOrganizationRowsIfUnchanged`) and the gather copies again. An outside review found such a
 * write deleted uncopied when the delete was plain, and the batch's own follow-up gather finding
 * nothing left. Contract section 5: events are never lost.
 */
import { describe, expect, it } from "vitest";
import { moveOrganizationRows } from "../../src/directory/rows";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "./helpers";

const shard = (name: string) => (env as unknown as Record<string, D1Database>)[name] as D1Database;
const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

describe("a write to the stray key between the gather's copy and its delete", () => {
  it("reaches the home", { timeout: 60_000 }, async () => {
    const stray = unique("stray");
    const home = unique("home");
    await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB'), (?2, 'ANALYTICS_2')")
      .bind(stray, home)
      .run();
    // Rows stored under the stray key (events that used the new login early), on DB (index 0).
    await writeEvents(shard("DB"), parse([ev.pr(stray, 1), ev.review(stray, 1, "r1")]), new Map(), { shardIndex: 0 });

    let fired = false;
    const realDb = env.DB;
    // The late batch (its route read before the directory changed) lands on the stray key just
    // before the gather's delete is sent, after its copy. (A delete sent otherwise than in one
    // batch never fires this, and the test fails on `fired`.)
    const wrappedDb = new Proxy(realDb, {
      get(target, p) {
        if (p !== "batch") return Reflect.get(target, p, target);
        return async (statements: D1PreparedStatement[]) => {
          if (!fired) {
            fired = true;
            await writeEvents(realDb, parse([ev.pr(stray, 2), ev.review(stray, 2, "r2")]), new Map(), { shardIndex: 0 });
          }
          return target.batch(statements);
        };
      },
    });
    const racingEnv = new Proxy(env, {
      get: (target, p) => (p === "DB" ? wrappedDb : Reflect.get(target, p)),
    }) as Env;

    const left = async () => ({
      pullRequests: await shard("DB")
        .prepare("SELECT COUNT(*) AS n FROM pull_requests WHERE org_key = ?1")
        .bind(stray)
        .first("n"),
      reviews: await shard("DB").prepare("SELECT COUNT(*) AS n FROM reviews WHERE org_key = ?1").bind(stray).first("n"),
    });
    await moveOrganizationRows(racingEnv, stray, home);
    expect(fired).toBe(true);
    // The delete saw the late write and did nothing; the gather copied again and then deleted.
    expect(await left()).toEqual({ pullRequests: 0, reviews: 0 });
    // The late batch's own follow-up (storeRouted → onHomesChanged → gatherStrayRows): nothing left to do.
    await moveOrganizationRows(env, stray, home);
    expect(await left()).toEqual({ pullRequests: 0, reviews: 0 });

    const { results } = await shard("ANALYTICS_2")
      .prepare("SELECT pr_number FROM pull_requests WHERE org_key = ?1 ORDER BY pr_number")
      .bind(home)
      .all();
    expect(results.map((r) => r.pr_number)).toEqual([1, 2]);
  });
});
