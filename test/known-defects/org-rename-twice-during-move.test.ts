/**
 * KNOWN DEFECT (fails today; not run: see README.md here). An organization renamed twice (A→B,
 * B→C) while its home moves between shards. Rows a reviewer stored under B before A→B was applied
 * are stray under B's folded key. A→B's gather waits for the move (MoveRunning: its message is sent
 * again); B→C is applied meanwhile. A→B's retry finds its change applied and learns the object's
 * current identity (login C), so it gathers C, never B: B's rows stay stray. Gathering the login the
 * message introduced instead was tried and reverted: a late copy of the message, after login B was
 * freed and taken by another organization not yet registered, moved that organization's rows here.
 * Contract section 9: a renamed organization keeps its data; section 16: nothing lost.
 */
import { describe, expect, it } from "vitest";
import { beginMove, recordMove } from "../../src/directory/moves";
import { placementOf } from "../../src/directory/shards";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { env, postEventsOk } from "../worker/helpers";
import { completeMove, rowsUnder } from "../worker/move-helpers";
import { accountOf, consume, exported, messageOf, prs, renamed, repoId, review, world } from "../worker/webhook-helpers";

describe("two organization renames while the organization moves between shards", () => {
  it("the stray rows of the first new login join the home once the move ends", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const home = a.toLowerCase();
    const b = `${a}-b`.slice(-39);
    const c = `${a}-c`.slice(-39);
    // Reviewer events under B before the rename is applied: stray under B's folded key.
    await postEventsOk([
      {
        type: "pull_request",
        org: b,
        repo: "api",
        prNumber: 2,
        author: "octocat",
        createdAt: "2026-10-01T10:00:00Z",
        mergedAt: "2026-10-02T10:00:00Z",
        linesAdded: 5,
        linesDeleted: 1,
        updatedAt: "2026-10-02T10:00:00Z",
      },
      review(b, "api", 2),
    ]);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);

    // The operator moves the organization.
    const from = (await placementOf(env, home)).shard;
    const to = from === "DB" ? "ANALYTICS_2" : "DB";
    const { move } = await recordMove(env, { home, login: a }, from, to, Date.now());
    await beginMove(env, move);

    const ab = messageOf("organization", renamed(a, b, accountOf(a)));
    const bc = messageOf("organization", renamed(b, c, accountOf(a)));
    const first = await consume(WEBHOOK_QUEUE, [ab]); // gather waits: re-sent, acked
    expect(first.result.explicitAcks).toEqual(first.ids);
    const second = await consume(WEBHOOK_QUEUE, [bc]);
    expect(second.result.explicitAcks).toEqual(second.ids);

    // The move ends.
    await completeMove(home);

    // The re-sent A→B arrives after the move (as waitForMove sends it again).
    const retried = await consume(WEBHOOK_QUEUE, [ab], {}, 1);
    expect(retried.result.explicitAcks).toEqual(retried.ids);

    // Contract 9/16: the organization keeps its data (nothing lost); B's rows are C's now.
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
  });
  it("control: the same deliveries without a move gather B's rows", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const b = `${a}-b`.slice(-39);
    const c = `${a}-c`.slice(-39);
    await postEventsOk([
      {
        type: "pull_request",
        org: b,
        repo: "api",
        prNumber: 2,
        author: "octocat",
        createdAt: "2026-10-01T10:00:00Z",
        mergedAt: "2026-10-02T10:00:00Z",
        linesAdded: 5,
        linesDeleted: 1,
        updatedAt: "2026-10-02T10:00:00Z",
      },
      review(b, "api", 2),
    ]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
  });
});
