/**
 * A third outside review of the move fences found a begin step of a cancelled move's instance
 * still running (it had passed `running()` before the cancel; terminating an instance does not stop
 * a step in flight) naming the target in the placement after the undo ended and a new move was
 * recorded: with three shards the placement kept the failed move's `moving_to` for good (no move,
 * rename or heal ended it); with two the new move took it for its own begin, wrote no fence, and a
 * stalled rename landed behind its copy. The begin's placement update now checks, in the same
 * statement, that its move still runs (else `MoveEnded`), a begin stops before it deletes a target
 * copy once its move has ended, and a fence is never replaced by an older move's. Contract section
 * 16: a failed move leaves the source alone; section 9: renames follow.
 */
import { describe, expect, it } from "vitest";
import {
  beginMove,
  catchUp,
  copySome,
  finishMove,
  type Move,
  MoveEnded,
  movesToHeal,
  readMove,
  recordMove,
  switchOver,
} from "../../src/directory/moves";
import { MoveRunning, renameRepositoryRows } from "../../src/directory/rows";
import { placementOf } from "../../src/directory/shards";
import { cancelMove, healMove } from "../../src/moves/heal";
import { moveRows } from "../../src/storage/renames";
import { env } from "./helpers";
import { dbOf, fenced, hookedEnv, orgWithRows, otherShard, repoKeys, withThirdShard } from "./move-helpers";

/** A's begin step (it read A running) is held right before its placement update; meanwhile DELETE, then POST. */
async function staleBeginThenNewMove(e: Env, home: string, org: string, a: string, b: string, nextTo: string) {
  const { move: first } = await recordMove(e, { home, login: org }, a, b, Date.now());
  let second: { created: boolean; move: Move } | undefined;
  const hooked = hookedEnv(e, "UPDATE analytics_placements SET moving_to = ?3", "before", async () => {
    expect((await cancelMove(e, home)).kind).toBe("cancelled"); // DELETE .../move: failed, undone
    expect((await readMove(e, home))?.undoneAt).not.toBeNull();
    await healMove(e, home, Date.now()); // POST .../move: its heal finds nothing to do
    second = await recordMove(e, { home, login: org }, a, nextTo, Date.now() + 7); // ... and records
  });
  // The stale step goes on: its placement update finds its move ended, and it stops.
  await expect(beginMove(hooked, first)).rejects.toBeInstanceOf(MoveEnded);
  expect(second?.created).toBe(true);
  expect((await placementOf(e, home)).movingTo).toBeNull();
  return second?.move as Move;
}

describe("a late begin step of a cancelled move, after the next move is recorded", () => {
  it("two shards: the new move fences the source itself; a stalled rename waits for it", {
    timeout: 90_000,
  }, async () => {
    const { org, home, shard: a } = await orgWithRows("stalebegin2");
    const b = otherShard(a);
    const second = await staleBeginThenNewMove(env, home, org, a, b, b);
    await beginMove(env, second);
    const during = {
      movingTo: (await placementOf(env, home)).movingTo,
      state: (await readMove(env, home))?.state,
      sourceFenced: await fenced(a, home),
    };
    const current = async () => (await readMove(env, home)) as Move;
    while (!(await copySome(env, await current(), 0, 500))) {}
    // A rename that read the placement (a alone) before: lands on the source behind the copy.
    const stalled = await moveRows(dbOf(a), { orgKey: home, repo: "old" }, { orgKey: home, repo: "new" }, 1).then(
      (r) => r,
      (e) => `refused: ${(e as Error).name}`,
    );
    expect(await catchUp(env, await current())).toBe(true);
    await switchOver(env, await current());
    await finishMove(env, await current());
    // The source fenced during the copy: the rename refused, followed on b after the move.
    expect({ during, stalled, onB: await repoKeys(b, home) }).toEqual({
      during: { movingTo: b, state: "copying", sourceFenced: 1 },
      stalled: "refused: RowsFenced",
      onB: ["old", "old"],
    });
  });

  it("three shards: the placement is the new move's; once it is cancelled too, nothing is left behind", {
    timeout: 90_000,
  }, async () => {
    const { org, home, shard: a } = await orgWithRows("stalebegin3");
    const b = otherShard(a);
    const three = withThirdShard();
    const second = await staleBeginThenNewMove(three, home, org, a, b, "ANALYTICS_3");
    // The new move begins (its placement was left to it), then is cancelled: nothing is left behind.
    await beginMove(three, second);
    expect((await placementOf(three, home)).movingTo).toBe("ANALYTICS_3");
    expect((await cancelMove(three, home)).kind).toBe("cancelled");
    await healMove(three, home, Date.now() + 10 * 3600_000);
    const afterHeal = {
      movingTo: (await placementOf(three, home)).movingTo,
      listedForHeal: (await movesToHeal(three)).includes(home),
    };
    const third = await recordMove(three, { home, login: org }, a, "ANALYTICS_3", Date.now() + 9);
    const thirdBegin = await beginMove(three, third.move).then(
      () => "ok",
      (e) => String(e),
    );
    expect((await cancelMove(three, home)).kind).toBe("cancelled");
    const rename = await renameRepositoryRows(three, home, "old", "new", 1).then(
      (r) => r,
      (e) => (e instanceof MoveRunning ? "waits (MoveRunning)" : String(e)),
    );
    expect({ created: third.created, afterHeal, thirdBegin, rename }).toEqual({
      created: true,
      afterHeal: { movingTo: null, listedForHeal: false },
      thirdBegin: "ok",
      rename: "moved",
    });
  });
});
