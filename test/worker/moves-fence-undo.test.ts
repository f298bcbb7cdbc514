/**
 * A second outside review of the move fences found a cancel (or any failed move) racing a
 * `POST .../move`: the POST's heal read the move as running, the cancel's compare-and-set failed it,
 * the POST recorded a new move, and only then did the cancel's undo run, which (a newer move being
 * the organization's last) undid nothing, or half: with three shards the placement kept the failed
 * move's `moving_to`, its fence and its partial copy for good (every rename waiting forever); with
 * two, the new move "repeated" the old begin and copied an unfenced source, so a rename that read
 * the placement before landed behind its copy and was lost. A new move is now recorded only over a
 * failed move whose undo ended (`analytics_moves.undone_at`, migration 0018): the racing record is
 * refused (409 `move_in_progress` at the route), the undo completes, and a move recorded after it
 * fences its shards again. Contract section 16: a failed move leaves the source alone and the
 * target's copy removed; section 9: renames follow.
 */
import { describe, expect, it } from "vitest";
import {
  beginMove,
  catchUp,
  copySome,
  finishMove,
  type Move,
  movesToHeal,
  readMove,
  recordMove,
  switchOver,
} from "../../src/directory/moves";
import { MoveRunning, renameRepositoryRows } from "../../src/directory/rows";
import { placementOf } from "../../src/directory/shards";
import { cancelMove } from "../../src/moves/heal";
import { moveRows } from "../../src/storage/renames";
import { env } from "./helpers";
import { dbOf, fenced, hookedEnv, orgWithRows, otherShard, repoKeys, withThirdShard } from "./move-helpers";

describe("a move recorded while a cancelled one is being undone", () => {
  it("with three shards: the racing record is refused, the undo completes, the next move is recorded", {
    timeout: 90_000,
  }, async () => {
    const { org, home, shard: a } = await orgWithRows("undothree");
    const b = otherShard(a);
    const three = withThirdShard();
    const { move: first } = await recordMove(three, { home, login: org }, a, b, Date.now());
    await beginMove(three, first);
    await copySome(three, (await readMove(three, home)) as Move, 0, 1); // a page of partial copy on b
    expect((await repoKeys(b, home)).length).toBeGreaterThan(0);

    // POST .../move {shard: ANALYTICS_3}: its heal reads the move running (nothing to do) ...
    expect((await readMove(three, home))?.state).toBe("copying");
    // ... DELETE .../move: failMove's compare-and-set lands, then the POST records its move, then the undo runs.
    let racing: { created: boolean; move: Move } | undefined;
    const hooked = hookedEnv(three, "SET state = 'failed'", "after", async () => {
      racing = await recordMove(three, { home, login: org }, a, "ANALYTICS_3", Date.now() + 7);
    });
    const answer = await cancelMove(hooked, home);
    expect(racing?.created).toBe(false);
    expect(racing?.move.startedAt).toBe(first.startedAt);
    expect(answer.kind).toBe("cancelled");

    const left = {
      movingTo: (await placementOf(three, home)).movingTo,
      listedForHeal: (await movesToHeal(three)).includes(home),
      undone: (await readMove(three, home))?.undoneAt !== null,
      sourceFenced: await fenced(a, home),
      partialCopyOnB: (await repoKeys(b, home)).length,
      rename: await renameRepositoryRows(three, home, "old", "new", 1).then(
        (r) => r,
        (e) => (e instanceof MoveRunning ? "waits (MoveRunning)" : String(e)),
      ),
    };
    expect(left).toEqual({
      movingTo: null,
      listedForHeal: false,
      undone: true,
      sourceFenced: 0,
      partialCopyOnB: 0,
      rename: "moved",
    });
    const next = await recordMove(three, { home, login: org }, a, "ANALYTICS_3", Date.now() + 9);
    expect({ created: next.created, to: next.move.to, undoneAt: next.move.undoneAt }).toEqual({
      created: true,
      to: "ANALYTICS_3",
      undoneAt: null,
    });
  });

  it("with two shards: the next move fences the source again, and a stalled rename waits for it", {
    timeout: 90_000,
  }, async () => {
    const { org, home, shard: a } = await orgWithRows("undotwo");
    const b = otherShard(a);
    const { move: first } = await recordMove(env, { home, login: org }, a, b, Date.now());
    await beginMove(env, first);
    // POST .../move {shard: b}: heal reads the move running; then DELETE: failMove's compare-and-set,
    // the undo's unfence of a; then the POST records its move; then the undo's placement update.
    expect((await readMove(env, home))?.state).toBe("copying");
    let racing: { created: boolean; move: Move } | undefined;
    const hooked = hookedEnv(env, "SET moving_to = NULL", "before", async () => {
      racing = await recordMove(env, { home, login: org }, a, b, Date.now() + 7);
    });
    expect((await cancelMove(hooked, home)).kind).toBe("cancelled");
    expect(racing?.created).toBe(false);
    expect((await placementOf(env, home)).movingTo).toBeNull();

    // The POST again, now that the undo ended: a new move, which fences both shards at its begin.
    const { move: second, created } = await recordMove(env, { home, login: org }, a, b, Date.now() + 9);
    expect(created).toBe(true);
    await beginMove(env, second);
    const current = async () => (await readMove(env, home)) as Move;
    while (!(await copySome(env, await current(), 0, 500))) {}
    // A rename that read the placement (a alone) before the first move began lands now: refused.
    const stalled = await moveRows(dbOf(a), { orgKey: home, repo: "old" }, { orgKey: home, repo: "new" }, 1).then(
      (r) => r,
      (e) => `refused: ${(e as Error).name}`,
    );
    expect(await catchUp(env, await current())).toBe(true);
    await switchOver(env, await current());
    await finishMove(env, await current());
    expect({ stalled, onB: await repoKeys(b, home) }).toEqual({ stalled: "refused: RowsFenced", onB: ["old", "old"] });
    // Its message again, after the move: followed on b.
    expect(await renameRepositoryRows(env, home, "old", "new", 1)).toBe("moved");
    expect(await repoKeys(b, home)).toEqual(["new", "new"]);
  });
});
