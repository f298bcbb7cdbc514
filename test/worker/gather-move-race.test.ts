/**
 * An outside review (of 07e633b) found that a same-shard gather of a stray key's rows, landing
 * after a move of its home had copied, merged a newer state of a pull request the home already held
 * on the source only (no count changed, so the move's catch-up passed, and the source was then
 * deleted). A gather cannot be redone once its rows have moved; the source's fence (`moves.ts`
 * `beginMove`) now refuses it before it changes anything, so the stray rows wait and are gathered
 * into the home's new shard once the move has ended. Contract section 16: nothing lost.
 */
import { describe, expect, it } from "vitest";
import { beginMove, catchUp, copySome, finishMove, type Move, readMove, recordMove, switchOver } from "../../src/directory/moves";
import { MoveRunning, moveOrganizationRows } from "../../src/directory/rows";
import { placementOf, shardOf } from "../../src/directory/shards";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { createOrg, env, ev, postEventsOk, unique } from "./helpers";
import { afterPlacementReads, dbOf } from "./move-helpers";

const parse = (events: unknown[]) => EventBatch.parse({ events }).events;

describe("review: a same-shard gather racing a move of its home", () => {
  it("the newer state the stray key held reaches the home after the move", { timeout: 60_000 }, async () => {
    const org = await createOrg(unique("gmv"), { plan: "pro" });
    const home = org.toLowerCase();
    await postEventsOk([ev.pr(org, 1, { linesAdded: 10 })]);
    const from = (await placementOf(env, home)).shard;
    const to = from === "DB" ? "ANALYTICS_2" : "DB";
    const stray = unique("gmvstray");
    await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, ?2)").bind(stray, from).run();
    // An acknowledged newer state of the same pull request, stored under the stray key.
    await writeEvents(
      dbOf(from),
      parse([ev.pr(stray, 1, { linesAdded: 99, updatedAt: "2026-10-04T00:00:00.000Z" })]),
      new Map(),
      {
        shardIndex: shardOf(env, from).index,
      },
    );
    const current = async () => (await readMove(env, home)) as Move;

    let reads = 0;
    const racingEnv = afterPlacementReads(async (n) => {
      reads = n;
      if (n !== 2) return;
      // After the gather read both placements, before it moves rows: the move copies.
      const { move } = await recordMove(env, { home, login: org }, from, to, Date.now());
      await beginMove(env, move);
      while (!(await copySome(env, await current(), 0, 500))) {}
    });

    await expect(moveOrganizationRows(racingEnv, stray, home)).rejects.toBeInstanceOf(MoveRunning);
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(await catchUp(env, await current())).toBe(true); // a merge changes no count
    await switchOver(env, await current());
    await finishMove(env, await current());
    // The caller's retry after the move (the consumer's resent message).
    await moveOrganizationRows(env, stray, home);

    const row = await dbOf(to)
      .prepare("SELECT lines_added FROM pull_requests WHERE org_key = ?1 AND pr_number = 1")
      .bind(home)
      .first();
    expect(row).toEqual({ lines_added: 99 });
  });
});
