import { expect } from "vitest";
import { beginMove, catchUp, copySome, finishMove, type Move, readMove, recordMove, switchOver } from "../../src/directory/moves";
import { placementOf } from "../../src/directory/shards";
import { createOrg, env, ev, postEventsOk, unique } from "./helpers";

/**
 * What the tests of moves between shards and of moves of rows between keys share (the fences,
 * renames and gathers racing a move): the shards' databases, an organization with rows, a move run
 * step by step to its end, the rows and fences a shard holds, and the wrappers that interleave.
 */

/** A shard's database by its binding's name. */
export const dbOf = (shard: string): D1Database => (env as unknown as Record<string, D1Database>)[shard] as D1Database;

/** The other of the test configuration's two shards. */
export const otherShard = (shard: string): string => (shard === "DB" ? "ANALYTICS_2" : "DB");

/** An organization with two pull requests in repository "old" (the first reviewed), and its shard. */
export async function orgWithRows(prefix: string): Promise<{ org: string; home: string; shard: string }> {
  const org = await createOrg(unique(prefix), { plan: "pro" });
  const home = org.toLowerCase();
  await postEventsOk([ev.pr(org, 1, { repo: "old" }), ev.review(org, 1, "r1", { repo: "old" }), ev.pr(org, 2, { repo: "old" })]);
  return { org, home, shard: (await placementOf(env, home)).shard };
}

/** `home`'s move as recorded now. */
export const currentMove = async (home: string, e: Env = env): Promise<Move> => (await readMove(e, home)) as Move;

/** Runs `home`'s begun move to its end, step by step as its Workflow would: copy until caught up, switch, finish. */
export async function completeMove(home: string, e: Env = env): Promise<void> {
  for (let caught = false; !caught; ) {
    while (!(await copySome(e, await currentMove(home, e), 0, 500))) {}
    caught = await catchUp(e, await currentMove(home, e));
  }
  await switchOver(e, await currentMove(home, e));
  expect(await finishMove(e, await currentMove(home, e))).toBe(true);
}

/** Moves `home` from its shard to the other one, every step. */
export async function moveAll(home: string, login: string): Promise<{ from: string; to: string }> {
  const from = (await placementOf(env, home)).shard;
  const to = otherShard(from);
  const { move } = await recordMove(env, { home, login }, from, to, Date.now());
  await beginMove(env, move);
  await completeMove(home);
  return { from, to };
}

/** The repository keys of `home`'s pull requests on `shard`, by number. */
export const repoKeys = async (shard: string, home: string): Promise<string[]> =>
  (
    await dbOf(shard)
      .prepare("SELECT repo_key FROM pull_requests WHERE org_key = ?1 ORDER BY pr_number")
      .bind(home)
      .all<{ repo_key: string }>()
  ).results.map((r) => r.repo_key);

/** How many fences `home` has on `shard` (0 or 1). */
export const fenced = async (shard: string, home: string): Promise<number | undefined> =>
  (await dbOf(shard).prepare("SELECT COUNT(*) AS n FROM move_fences WHERE org_key = ?1").bind(home).first<{ n: number }>())?.n;

/** The last rename log entry followed of `home` on `shard`, or null. */
export const followed = (shard: string, home: string) =>
  dbOf(shard).prepare("SELECT seq FROM renames_followed WHERE org_key = ?1").bind(home).first<{ seq: number }>();

/** The pull request rows stored under `key` on every shard. */
export async function rowsUnder(key: string): Promise<number> {
  let total = 0;
  for (const db of [env.DB, env.ANALYTICS_2]) {
    const r = await db.prepare("SELECT COUNT(*) AS n FROM pull_requests WHERE org_key = ?1").bind(key).first<{ n: number }>();
    total += r?.n ?? 0;
  }
  return total;
}

/** A third shard that holds nothing (only its statements are counted): enough for a move that never copies. */
function emptyShard(): D1Database {
  const statement = {
    bind: () => statement,
    run: async () => ({ success: true, meta: { changes: 0 }, results: [] }),
    first: async () => null,
    all: async () => ({ success: true, meta: {}, results: [] }),
  };
  return { prepare: () => statement, batch: async () => [], exec: async () => ({}) } as unknown as D1Database;
}

/** The test environment with a third shard, `ANALYTICS_3`, that holds nothing (`emptyShard`). */
export const withThirdShard = (): Env =>
  new Proxy(env, {
    get: (t, p) =>
      p === "ANALYTICS_SHARDS" ? "DB,ANALYTICS_2,ANALYTICS_3" : p === "ANALYTICS_3" ? emptyShard() : Reflect.get(t, p),
  }) as Env;

/** `base` whose main database runs `hook` once, right before (or after) the statement whose SQL includes `match` runs. */
export function hookedEnv(base: Env, match: string, when: "before" | "after", hook: () => Promise<void>): Env {
  let fired = false;
  const main = new Proxy(base.DB, {
    get(target, p) {
      if (p !== "prepare") return Reflect.get(target, p, target);
      return (sql: string) => {
        const statement = target.prepare(sql);
        if (fired || !sql.includes(match)) return statement;
        return {
          bind: (...args: unknown[]) => ({
            run: async () => {
              fired = true;
              if (when === "before") await hook();
              const result = await statement.bind(...args).run();
              if (when === "after") await hook();
              return result;
            },
          }),
        };
      };
    },
  });
  return new Proxy(base, { get: (t, p) => (p === "DB" ? main : Reflect.get(t, p)) }) as Env;
}

/**
 * The test environment whose main database runs `race(n)` after the n-th read whose SQL includes
 * `match` returned, before the caller goes on (`afterPlacementReads`; the directory's reads of the
 * event write path: "FROM organization_names WHERE login_key IN").
 */
export function afterReads(match: string, race: (n: number) => Promise<void>): Env {
  let reads = 0;
  const realDb = env.DB;
  const wrappedDb = new Proxy(realDb, {
    get(target, p) {
      if (p !== "prepare") return Reflect.get(target, p, target);
      return (sql: string) => {
        const statement = realDb.prepare(sql);
        if (!sql.includes(match)) return statement;
        return {
          bind: (...args: unknown[]) => ({
            all: async () => {
              const read = await statement.bind(...args).all();
              await race(++reads);
              return read;
            },
          }),
        };
      };
    },
  });
  return new Proxy(env, { get: (t, p) => (p === "DB" ? wrappedDb : Reflect.get(t, p)) }) as Env;
}

/**
 * `afterReads` of the placements (`readPlacements`, `placementOf`): a move that begins while a
 * rename or a gather is between its placement read and its write.
 */
export const afterPlacementReads = (race: (n: number) => Promise<void>): Env =>
  afterReads("FROM analytics_placements WHERE home_key IN", race);
