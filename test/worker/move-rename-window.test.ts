/**
 * An outside review (of 07e633b) found that a rename landing on a move's source after its copy
 * moved the rows there (same pull request ids, new repository key) while the target held them
 * under the old key: until the move ended, every write of the renamed repository went to the
 * source and then to the target with the source's ids (`copyRecords`), colliding with the old-key
 * row's id (a 503 for a pull request event; a newer review acknowledged and never stored on the
 * target). The source's fence (`moves.ts` `beginMove`) now refuses such a rename before it changes
 * anything, so both shards keep the rows under the old key until the rename is followed on the
 * target. Contract section 16: while a move runs, writes are applied; nothing acknowledged is lost.
 */
import { describe, expect, it } from "vitest";
import { beginMove, catchUp, copySome, finishMove, type Move, readMove, recordMove, switchOver } from "../../src/directory/moves";
import { MoveRunning, renameRepositoryRows } from "../../src/directory/rows";
import { env, ev, postEvents, postEventsOk } from "./helpers";
import { afterPlacementReads, dbOf, orgWithRows, otherShard } from "./move-helpers";

/** The race of moves-rename-race.test.ts: the rename moved the rows on the source after the move copied them. */
async function raced() {
  const { org, home, shard: from } = await orgWithRows("rnwin");
  const to = otherShard(from);
  const current = async () => (await readMove(env, home)) as Move;
  const racingEnv = afterPlacementReads(async (n) => {
    if (n !== 1) return;
    const { move } = await recordMove(env, { home, login: org }, from, to, Date.now());
    await beginMove(env, move);
    while (!(await copySome(env, await current(), 0, 500))) {}
  });
  await expect(renameRepositoryRows(racingEnv, home, "old", "new", 1)).rejects.toBeInstanceOf(MoveRunning);
  return { org, home, to, current };
}

describe("review: writes to a renamed repository while the rename waits for the move", () => {
  it("a newer pull request state is accepted", { timeout: 60_000 }, async () => {
    const { org } = await raced();
    const res = await postEvents([ev.pr(org, 1, { repo: "new", linesAdded: 99, updatedAt: "2026-10-04T00:00:00.000Z" })]);
    expect(res.status, await res.text()).toBe(200);
  });

  it("a newer review state, acknowledged, reaches the move's target", { timeout: 60_000 }, async () => {
    const { org, home, to, current } = await raced();
    await postEventsOk([
      ev.review(org, 1, "r1", { repo: "new", completedAt: "2026-10-01T15:00:00Z", updatedAt: "2026-10-04T00:00:00.000Z" }),
    ]);
    let caught = false;
    for (let i = 0; i < 3 && !caught; i++) {
      caught = await catchUp(env, await current());
      if (!caught) while (!(await copySome(env, await current(), 0, 500))) {}
    }
    expect(caught).toBe(true);
    await switchOver(env, await current());
    await finishMove(env, await current());
    await renameRepositoryRows(env, home, "old", "new", 1);
    const r = await dbOf(to)
      .prepare("SELECT completed_at, updated_at FROM reviews WHERE org_key = ?1 AND review_id = 'r1'")
      .bind(home)
      .first();
    expect(r).toEqual({ completed_at: Date.parse("2026-10-01T15:00:00Z"), updated_at: Date.parse("2026-10-04T00:00:00.000Z") });
  });
});
