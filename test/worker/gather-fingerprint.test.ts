/**
 * A cross-shard gather deletes the stray rows only if their fingerprint (`storage/copy.ts`
 * `organizationFingerprint`) is as it was before the copy. A placeholder pull request has version
 * NULL, and an event of version 0 (1970-01-01T00:00:00Z, which the event schema accepts) replacing
 * it changes no count and no sum of versions, rowids or merge times: the fingerprint also counts the
 * rows that have a version. An outside review found such a write deleted uncopied without it.
 * Contract section 5: an acknowledged event is never lost.
 */
import { describe, expect, it } from "vitest";
import { moveOrganizationRows } from "../../src/directory/rows";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { env, ev, unique } from "./helpers";

const shard = (name: string) => (env as unknown as Record<string, D1Database>)[name] as D1Database;
const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

describe("a write that changes no sum, between a gather's copy and its delete", () => {
  it("a version-0 pull request state replacing a placeholder between copy and delete reaches the home", {
    timeout: 60_000,
  }, async () => {
    const stray = unique("fpstray");
    const home = unique("fphome");
    await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB'), (?2, 'ANALYTICS_2')")
      .bind(stray, home)
      .run();
    // A review alone: its pull request is a placeholder on the stray key.
    await writeEvents(shard("DB"), parse([ev.review(stray, 1, "r1")]), new Map(), { shardIndex: 0 });

    let fired = false;
    const realDb = env.DB;
    const wrappedDb = new Proxy(realDb, {
      get(target, p) {
        if (p !== "batch") return Reflect.get(target, p, target);
        return async (statements: D1PreparedStatement[]) => {
          if (!fired) {
            fired = true;
            const late = ev.pr(stray, 1, { author: "zed", mergedAt: null, updatedAt: "1970-01-01T00:00:00Z" });
            await writeEvents(realDb, parse([late]), new Map(), { shardIndex: 0 });
          }
          return target.batch(statements);
        };
      },
    });
    const racingEnv = new Proxy(env, { get: (t, p) => (p === "DB" ? wrappedDb : Reflect.get(t, p)) }) as Env;
    await moveOrganizationRows(racingEnv, stray, home);
    expect(fired).toBe(true);
    const row = await shard("ANALYTICS_2")
      .prepare("SELECT author FROM pull_requests WHERE org_key = ?1 AND pr_number = 1")
      .bind(home)
      .first();
    expect(row).toEqual({ author: "zed" });
  });
});
