/**
 * Stray rows joining their organization on another shard (`directory/rows.ts`
 * `moveOrganizationRows`, two shards) are copied, then deleted in a separate transaction. An event
 * batch that resolved its home before the directory learned the new home (`directory/events.ts`
 * `storeEvents`) can write to the stray key between the two: the delete then does nothing (it
 * checks that nothing was written since the copy began: `storage/copy.ts`
 * `organizationFingerprint`, `deleteOrganizationRowsIfUnchanged`) and the gather copies again.
 * Outside reviews found such a write deleted uncopied when the delete was plain, and again when it
 * was an event of version 0 replacing a placeholder (version NULL), which changed no sum of the
 * first fingerprint. Contract section 5: events are never lost.
 */
import { describe, expect, it } from "vitest";
import { moveOrganizationRows } from "../../src/directory/rows";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "./helpers";

const shard = (name: string) => (env as unknown as Record<string, D1Database>)[name] as D1Database;
const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

/** A stray key on DB and its home on ANALYTICS_2, the stray key holding `stored`. */
async function strayAndHome(prefix: string, stored: (stray: string) => unknown[]) {
  const stray = unique(`${prefix}stray`);
  const home = unique(`${prefix}home`);
  await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB'), (?2, 'ANALYTICS_2')")
    .bind(stray, home)
    .run();
  await writeEvents(shard("DB"), parse(stored(stray)), new Map(), { shardIndex: 0 });
  return { stray, home };
}

/**
 * Gathers `stray` into `home` while a late batch (its route read before the directory changed)
 * lands on the stray key just before the gather's delete is sent, after its copy. A delete sent
 * otherwise than in one batch never lets it land, and the gather then answers `fired` false.
 */
async function gatherWithLateWrite(stray: string, home: string, late: unknown[]): Promise<{ fired: boolean }> {
  let fired = false;
  const realDb = env.DB;
  const wrappedDb = new Proxy(realDb, {
    get(target, p) {
      if (p !== "batch") return Reflect.get(target, p, target);
      return async (statements: D1PreparedStatement[]) => {
        if (!fired) {
          fired = true;
          await writeEvents(realDb, parse(late), new Map(), { shardIndex: 0 });
        }
        return target.batch(statements);
      };
    },
  });
  const racingEnv = new Proxy(env, { get: (t, p) => (p === "DB" ? wrappedDb : Reflect.get(t, p)) }) as Env;
  await moveOrganizationRows(racingEnv, stray, home);
  return { fired };
}

describe("a write to the stray key between the gather's copy and its delete", () => {
  it("reaches the home", { timeout: 60_000 }, async () => {
    // Rows stored under the stray key (events that used the new login early).
    const { stray, home } = await strayAndHome("late", (s) => [ev.pr(s, 1), ev.review(s, 1, "r1")]);
    const left = async () => ({
      pullRequests: await shard("DB")
        .prepare("SELECT COUNT(*) AS n FROM pull_requests WHERE org_key = ?1")
        .bind(stray)
        .first("n"),
      reviews: await shard("DB").prepare("SELECT COUNT(*) AS n FROM reviews WHERE org_key = ?1").bind(stray).first("n"),
    });
    expect(await gatherWithLateWrite(stray, home, [ev.pr(stray, 2), ev.review(stray, 2, "r2")])).toEqual({ fired: true });
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

  it("a version-0 pull request state replacing a placeholder (no sum changes) reaches the home", {
    timeout: 60_000,
  }, async () => {
    // A review alone: its pull request is a placeholder on the stray key.
    const { stray, home } = await strayAndHome("zero", (s) => [ev.review(s, 1, "r1")]);
    const late = ev.pr(stray, 1, { author: "zed", mergedAt: null, updatedAt: "1970-01-01T00:00:00Z" });
    expect(await gatherWithLateWrite(stray, home, [late])).toEqual({ fired: true });
    const row = await shard("ANALYTICS_2")
      .prepare("SELECT author FROM pull_requests WHERE org_key = ?1 AND pr_number = 1")
      .bind(home)
      .first();
    expect(row).toEqual({ author: "zed" });
  });
});
