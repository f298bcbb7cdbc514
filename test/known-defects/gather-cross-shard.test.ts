/**
 * Attack: stray rows joining their organization on another shard (`directory/rows.ts`
 * `moveOrganizationRows`, a != b) copy the stray key's pages and then delete every row of the stray
 * key (`deleteOrganizationRows`), in separate transactions. An event batch that resolved its home
 * before the directory learned the new home (`directory/events.ts` `storeEvents`) and whose write
 * lands on the stray key between that copy and that delete is deleted uncopied; its own follow-up
 * gather (`onHomesChanged`) then finds nothing left. The same-shard path (`moveRows`, one
 * transaction) cannot lose it. Contract section 5: events "are never lost".
 */
import { describe, expect, it } from "vitest";
import { moveOrganizationRows } from "../../src/directory/rows";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "../worker/helpers";

const shard = (name: string) => (env as unknown as Record<string, D1Database>)[name] as D1Database;
const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

describe("attack: a write to the stray key between the gather's copy and its delete", () => {
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
    const wrappedDb = {
      prepare(sql: string) {
        const statement = realDb.prepare(sql);
        if (fired || !sql.startsWith("DELETE FROM reviews WHERE rowid IN")) return statement;
        return {
          bind: (...args: unknown[]) => ({
            run: async () => {
              fired = true;
              // The late batch (its route read before the directory changed) lands on the stray key now.
              await writeEvents(realDb, parse([ev.pr(stray, 2), ev.review(stray, 2, "r2")]), new Map(), { shardIndex: 0 });
              return statement.bind(...args).run();
            },
          }),
        };
      },
      batch: (statements: D1PreparedStatement[]) => realDb.batch(statements),
      exec: (sql: string) => realDb.exec(sql),
    };
    const racingEnv = new Proxy(env, {
      get: (target, p) => (p === "DB" ? wrappedDb : Reflect.get(target, p)),
    }) as Env;

    await moveOrganizationRows(racingEnv, stray, home);
    expect(fired).toBe(true);
    // The late batch's own follow-up (storeRouted → onHomesChanged → gatherStrayRows).
    await moveOrganizationRows(env, stray, home);

    const { results } = await shard("ANALYTICS_2")
      .prepare("SELECT pr_number FROM pull_requests WHERE org_key = ?1 ORDER BY pr_number")
      .bind(home)
      .all();
    expect(results.map((r) => r.pr_number)).toEqual([1, 2]);
  });
});
