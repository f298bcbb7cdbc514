/**
 * An outside review of the move fences (57c3ce7) found these interleavings of a move's steps with
 * a cancel, a second move and a stalled rename; each failed then (contract section 16: a move is
 * either undone or switched, nothing lost; section 9: a rename follows the repository):
 * - A: a cancel while the begin step runs, the step dying after its fence: a fence nothing lifts
 *   (now lifted by the next rename that meets it, `liftStaleFences`);
 * - B, B2: the cancel's second `undoCopy` landing after a newer move began undid that move (its
 *   fence, its `moving_to`, and through them its switch) — `undoCopy` now acts only for the
 *   organization's last move, its placement update checked in the same statement;
 * - C: a failed move back lifted the tombstone fence of the shard the organization had left, so a
 *   rename that read the first placement landed there as "moved" — the target now stays fenced
 *   until the switch, also after a failed move.
 */
import { describe, expect, it } from "vitest";
import { beginMove, failMove, MoveEnded, movesToHeal, recordMove, undoCopy } from "../../src/directory/moves";
import { renameRepositoryRows } from "../../src/directory/rows";
import { placementOf } from "../../src/directory/shards";
import { healMove } from "../../src/moves/heal";
import { moveRows, RowsFenced } from "../../src/storage/renames";
import { env } from "./helpers";
import { completeMove, currentMove, dbOf, fenced, moveAll, orgWithRows, otherShard, repoKeys } from "./move-helpers";

describe("a move's fences against a cancel, a newer move and a stalled rename", () => {
  it("A: a cancel during beginMove, whose step dies after the fence, leaves a fence nothing lifts", {
    timeout: 60_000,
  }, async () => {
    const { org, home, shard } = await orgWithRows("rvstuck");
    const { move } = await recordMove(env, { home, login: org }, shard, otherShard(shard), Date.now());
    // The Workflow's "begin" step has passed running() (state copying) when DELETE .../move lands:
    // stop() = failMove (+undoCopy), terminate, undoCopy. All before the step reaches its fence.
    expect(await failMove(env, move, "cancelled")).toBe(true);
    await undoCopy(env, move);
    // The in-flight step goes on (killed at its placement update, were it to get there).
    const dying = new Proxy(env, {
      get(t, p) {
        const v = Reflect.get(t, p, t);
        if (p !== "DB") return v;
        return new Proxy(v as D1Database, {
          get(d, q) {
            if (q !== "prepare") return Reflect.get(d, q, d);
            return (sql: string) => {
              if (sql.includes("SET moving_to = ?3")) throw new Error("instance terminated");
              return d.prepare(sql);
            };
          },
        });
      },
    }) as Env;
    // It fences the source, then finds its move ended and stops (the kill would come later).
    await expect(beginMove(dying, move)).rejects.toBeInstanceOf(MoveEnded);
    expect(await fenced(shard, home)).toBe(1);
    // Nothing lifts it: not listed for healing, healMove (even long after) changes nothing.
    expect(await movesToHeal(env)).not.toContain(home);
    await healMove(env, home, Date.now() + 10 * 86_400_000);
    // The rename that meets it lifts it: the move that set it is not running.
    await expect(renameRepositoryRows(env, home, "old", "new", 1)).resolves.toBe("moved");
  });

  it("B: the second undoCopy of a cancelled move lifts a newer move's fence (and moving_to) during its copy", {
    timeout: 60_000,
  }, async () => {
    const { org, home, shard } = await orgWithRows("rvlate");
    const to = otherShard(shard);
    const { move: first } = await recordMove(env, { home, login: org }, shard, to, Date.now());
    await beginMove(env, first);
    // DELETE .../move: stop() -> failMove (its undoCopy) ... terminate() ...
    expect(await failMove(env, first, "cancelled")).toBe(true);
    // ... meanwhile POST .../move: heal (nothing to do), a new move recorded and begun.
    await healMove(env, home, Date.now());
    const { move: second, created } = await recordMove(env, { home, login: org }, shard, to, Date.now() + 5);
    expect(created).toBe(true);
    await beginMove(env, second);
    expect(await fenced(shard, home)).toBe(1);
    // ... stop()'s second undoCopy, of the first move, lands now.
    await undoCopy(env, first);
    // The newer move keeps its fence and its target.
    expect(await fenced(shard, home)).toBe(1);
    expect((await placementOf(env, home)).movingTo).toBe(to);
  });

  it("B2: ...and the newer move then switches the object but not the placement, and deletes the rows the placement names", {
    timeout: 60_000,
  }, async () => {
    const { org, home, shard } = await orgWithRows("rvlate2");
    const to = otherShard(shard);
    const { move: first } = await recordMove(env, { home, login: org }, shard, to, Date.now());
    await beginMove(env, first);
    expect(await failMove(env, first, "cancelled")).toBe(true);
    const { move: second } = await recordMove(env, { home, login: org }, shard, to, Date.now() + 5);
    await beginMove(env, second);
    await undoCopy(env, first);
    await completeMove(home);
    expect((await currentMove(home)).state).toBe("done");
    // The placement names the target, which holds the rows; the source's are gone.
    expect({ placed: (await placementOf(env, home)).shard, rowsThere: (await repoKeys(shard, home)).length }).toEqual({
      placed: to,
      rowsThere: 0,
    });
    expect(await repoKeys(to, home)).toEqual(["old", "old"]);
  });

  it("C: a failed move back lifts the tombstone; a rename that read the first placement is lost", {
    timeout: 90_000,
  }, async () => {
    const { org, home, shard: a } = await orgWithRows("rvback");
    // A rename reads the placement (a alone) ... and stalls.
    const { to: b } = await moveAll(home, org);
    // A move back begins (lifting a's tombstone) and fails.
    const { move } = await recordMove(env, { home, login: org }, b, a, Date.now());
    await beginMove(env, move);
    expect(await failMove(env, move, "cancelled")).toBe(true);
    // The stalled rename lands on a.
    const result = await moveRows(dbOf(a), { orgKey: home, repo: "old" }, { orgKey: home, repo: "new" }, 1).catch((e) => e);
    expect(await repoKeys(b, home)).toEqual(["old", "old"]);
    // It finds the target's fence, kept after the failed move back: refused, nothing recorded.
    expect(result).toBeInstanceOf(RowsFenced);
    expect(await dbOf(a).prepare("SELECT seq FROM renames_followed WHERE org_key = ?1").bind(home).first()).toBeNull();
  });
});
