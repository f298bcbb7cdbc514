/**
 * A repository rename (`directory/rows.ts` `renameRepositoryRows`) reads the placement, then runs
 * `moveRows` on the shard it read. A move that began between that read and the write has fenced its
 * source before copying (`moves.ts` `beginMove`, migration 0018), so the rename changes nothing
 * there and waits for the move (MoveRunning), then is followed on its target. An outside review
 * found it lost there (the target kept the rows under the old name) when the placement was read
 * once and nothing fenced the source. Contract section 9: "rows follow the repository to its new
 * name; the old name matches nothing"; section 16: while a move runs, webhooks are applied, nothing
 * lost.
 *
 * The interleaving is produced by a main database wrapper that runs the move's steps right after
 * the rename's read of the placement returns (as a slow rename and a concurrent move would).
 */
import { describe, expect, it } from "vitest";
import { beginMove, catchUp, copySome, finishMove, type Move, readMove, recordMove, switchOver } from "../../src/directory/moves";
import { MoveRunning, renameRepositoryRows } from "../../src/directory/rows";
import { placementOf } from "../../src/directory/shards";
import { env } from "./helpers";
import { afterPlacementReads, dbOf, orgWithRows, otherShard } from "./move-helpers";

describe("a repository rename racing a move between shards", () => {
  it("the renamed rows reach the move's target under the new name", { timeout: 60_000 }, async () => {
    const { org, home, shard: from } = await orgWithRows("rnmv");
    const to = otherShard(from);
    const current = async () => (await readMove(env, home)) as Move;

    let fired = false;
    const racingEnv = afterPlacementReads(async (n) => {
      if (n !== 1) return;
      fired = true;
      // The move runs while the rename is between its placement read and its write.
      const { move } = await recordMove(env, { home, login: org }, from, to, Date.now());
      await beginMove(env, move);
      while (!(await copySome(env, await current(), 0, 500))) {}
      expect(await catchUp(env, await current())).toBe(true);
    });

    // The rename sees the move that began while it wrote: it waits for it (the consumer sends its
    // message again) instead of counting as followed.
    await expect(renameRepositoryRows(racingEnv, home, "old", "new", 1)).rejects.toBeInstanceOf(MoveRunning);
    expect(fired).toBe(true);
    await switchOver(env, await current());
    await finishMove(env, await current());
    // The message again, after the move: the rename follows on the target.
    await renameRepositoryRows(env, home, "old", "new", 1);

    expect((await placementOf(env, home)).shard).toBe(to);
    const { results } = await dbOf(to)
      .prepare("SELECT repo_key, pr_number FROM pull_requests WHERE org_key = ?1 ORDER BY pr_number")
      .bind(home)
      .all();
    expect(results).toEqual([
      { repo_key: "new", pr_number: 1 },
      { repo_key: "new", pr_number: 2 },
    ]);
  });
});
