/**
 * The fence a move between shards sets on its source (`directory/moves.ts` `beginMove`, migration
 * 0018) and the last rename log entry followed (`renames_followed`), over a move's whole life: a
 * failed move lifts the fence; a finished one leaves it, so a rename that read the old placement
 * waits; a move back lifts it first; the last entry followed travels with the rows. And a gather
 * across shards whose target begins to move during its copy keeps the stray rows for later.
 * Contract section 9 (rows follow a rename), section 16 (nothing lost while a move runs).
 */
import { describe, expect, it } from "vitest";
import {
  beginMove,
  catchUp,
  copySome,
  failMove,
  finishMove,
  liftStaleFences,
  type Move,
  readMove,
  recordMove,
  switchOver,
} from "../../src/directory/moves";
import { MoveRunning, moveOrganizationRows, renameRepositoryRows } from "../../src/directory/rows";
import { placementOf, shardOf } from "../../src/directory/shards";
import { EventBatch } from "../../src/schemas/events";
import { fenceOrganization } from "../../src/storage/copy";
import { writeEvents } from "../../src/storage/events";
import { moveRows, RowsFenced } from "../../src/storage/renames";
import { createOrg, env, ev, postEventsOk, unique } from "./helpers";
import { dbOf, fenced, followed, moveAll, orgWithRows, otherShard, repoKeys } from "./move-helpers";

const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

describe("a move's fence on its source shard", () => {
  it("refuses a move of rows from the begin on, changing nothing; a failed move lifts it", { timeout: 60_000 }, async () => {
    const { org, home, shard } = await orgWithRows("fencefail");
    const { move } = await recordMove(env, { home, login: org }, shard, otherShard(shard), Date.now());
    await beginMove(env, move);
    expect(await fenced(shard, home)).toBe(1);
    // A rename that read the placement before the begin runs straight on the shard: refused whole.
    await expect(moveRows(dbOf(shard), { orgKey: home, repo: "old" }, { orgKey: home, repo: "new" }, 1)).rejects.toBeInstanceOf(
      RowsFenced,
    );
    expect(await repoKeys(shard, home)).toEqual(["old", "old"]);
    expect(await followed(shard, home)).toBeNull();
    // The rename through its route waits while the move runs.
    await expect(renameRepositoryRows(env, home, "old", "new", 1)).rejects.toBeInstanceOf(MoveRunning);

    expect(await failMove(env, (await readMove(env, home)) as Move, "cancelled in a test")).toBe(true);
    expect(await fenced(shard, home)).toBe(0);
    expect(await renameRepositoryRows(env, home, "old", "new", 1)).toBe("moved");
    expect(await repoKeys(shard, home)).toEqual(["new", "new"]);
    expect(await followed(shard, home)).toEqual({ seq: 1 });
  });

  it("stays after the move; a move back lifts it and the last entry followed travels", { timeout: 90_000 }, async () => {
    const { org, home, shard } = await orgWithRows("fenceback");
    expect(await renameRepositoryRows(env, home, "old", "mid", 1)).toBe("moved");
    const { from, to } = await moveAll(home, org);
    expect(from).toBe(shard);
    // The source keeps its fence with no rows left: a rename that read the old placement waits.
    expect(await fenced(from, home)).toBe(1);
    expect(await repoKeys(from, home)).toEqual([]);
    expect(await followed(from, home)).toBeNull();
    await expect(moveRows(dbOf(from), { orgKey: home, repo: "mid" }, { orgKey: home, repo: "new" }, 2)).rejects.toBeInstanceOf(
      RowsFenced,
    );
    // The target knows entry 1 was followed: a replay of it changes nothing; entry 2 moves the rows.
    expect(await followed(to, home)).toEqual({ seq: 1 });
    expect(await renameRepositoryRows(env, home, "old", "mid", 1)).toBe("already followed");
    expect(await renameRepositoryRows(env, home, "mid", "new", 2)).toBe("moved");
    expect(await repoKeys(to, home)).toEqual(["new", "new"]);

    // Back to the first shard: its fence is lifted at the begin, entry 2 travels back.
    await moveAll(home, org);
    expect(await fenced(from, home)).toBe(0);
    expect(await fenced(to, home)).toBe(1);
    expect(await followed(from, home)).toEqual({ seq: 2 });
    expect(await renameRepositoryRows(env, home, "mid", "new", 2)).toBe("already followed");
    expect(await renameRepositoryRows(env, home, "new", "last", 3)).toBe("moved");
    expect(await repoKeys(from, home)).toEqual(["last", "last"]);
  });

  it("a fence no move holds is lifted by the next rename; a running move's, in its begin, is not", {
    timeout: 60_000,
  }, async () => {
    const { org, home, shard } = await orgWithRows("fencestale");
    const { move } = await recordMove(env, { home, login: org }, shard, otherShard(shard), Date.now());
    // The begin has fenced the source and not yet named the target: the move holds its fence.
    await fenceOrganization(dbOf(shard), home, move.startedAt);
    await expect(renameRepositoryRows(env, home, "old", "new", 1)).rejects.toBeInstanceOf(MoveRunning);
    expect(await fenced(shard, home)).toBe(1);
    expect(await repoKeys(shard, home)).toEqual(["old", "old"]);

    // Cancelled there, its undo lifts the fence; a late write of the stopped begin fences again.
    expect(await failMove(env, (await readMove(env, home)) as Move, "cancelled in a test")).toBe(true);
    expect(await fenced(shard, home)).toBe(0);
    await fenceOrganization(dbOf(shard), home, move.startedAt);
    // Nothing else would lift it (the heal looks for placements still naming a target).
    expect(await renameRepositoryRows(env, home, "old", "new", 1)).toBe("moved");
    expect(await fenced(shard, home)).toBe(0);
    expect(await repoKeys(shard, home)).toEqual(["new", "new"]);
  });

  it("a fence left behind by a finished move is not stale", { timeout: 60_000 }, async () => {
    const { org, home } = await orgWithRows("fencetomb");
    const { from } = await moveAll(home, org);
    expect(await liftStaleFences(env, shardOf(env, from), [home])).toBe(false);
    expect(await fenced(from, home)).toBe(1);
  });

  it("a gather across shards whose target begins to move during the copy keeps the stray rows", {
    timeout: 60_000,
  }, async () => {
    const org = await createOrg(unique("fencegather"), { plan: "pro" });
    const home = org.toLowerCase();
    await postEventsOk([ev.pr(org, 1, { linesAdded: 10 })]);
    const homeShard = (await placementOf(env, home)).shard;
    const strayShard = otherShard(homeShard);
    const stray = unique("fencegatherstray");
    await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, ?2)").bind(stray, strayShard).run();
    // An acknowledged newer state of the same pull request, under the stray key on the other shard.
    await writeEvents(
      dbOf(strayShard),
      parse([ev.pr(stray, 1, { linesAdded: 99, updatedAt: "2026-10-04T00:00:00.000Z" })]),
      new Map(),
      {
        shardIndex: shardOf(env, strayShard).index,
      },
    );

    // The home's move to the stray's shard begins and copies just before the gather reads its first page.
    let fired = false;
    const current = async () => (await readMove(env, home)) as Move;
    const real = dbOf(strayShard);
    const wrapped = new Proxy(real, {
      get(target, p) {
        if (p !== "prepare") return Reflect.get(target, p, target);
        return (sql: string) => {
          if (!fired && sql.includes("AS position")) {
            fired = true;
            const statement = target.prepare(sql);
            return {
              bind: (...args: unknown[]) => ({
                all: async () => {
                  const { move } = await recordMove(env, { home, login: org }, homeShard, strayShard, Date.now());
                  await beginMove(env, move);
                  while (!(await copySome(env, await current(), 0, 500))) {}
                  return statement.bind(...args).all();
                },
              }),
            };
          }
          return target.prepare(sql);
        };
      },
    });
    const racingEnv = new Proxy(env, { get: (t, p) => (p === strayShard ? wrapped : Reflect.get(t, p)) }) as Env;
    await expect(moveOrganizationRows(racingEnv, stray, home)).rejects.toBeInstanceOf(MoveRunning);
    expect(fired).toBe(true);
    const strayRows = () =>
      dbOf(strayShard).prepare("SELECT lines_added FROM pull_requests WHERE org_key = ?1").bind(stray).all();
    expect((await strayRows()).results).toEqual([{ lines_added: 99 }]);

    // The merge changed no count: the move switches without it, then the gather runs again.
    expect(await catchUp(env, await current())).toBe(true);
    await switchOver(env, await current());
    await finishMove(env, await current());
    await moveOrganizationRows(env, stray, home);
    expect((await strayRows()).results).toEqual([]);
    const row = await dbOf(strayShard)
      .prepare("SELECT lines_added FROM pull_requests WHERE org_key = ?1 AND pr_number = 1")
      .bind(home)
      .first();
    expect(row).toEqual({ lines_added: 99 });
  });
});
