/**
 * What an outside review of a reverted change (gathering a rename message's own new login, and
 * acknowledging an event batch whose gather met a move) showed must hold: a late copy of an
 * organization's rename never takes the rows of another organization that uses the freed login
 * now (contract section 9), and an event batch is acknowledged only once every event of it is
 * stored at its organization's home (section 5; section 16 while a move runs).
 */
import { describe, expect, it } from "vitest";
import { storeEvents } from "../../src/directory/events";
import { beginMove, recordMove } from "../../src/directory/moves";
import { MoveRunning } from "../../src/directory/rows";
import { placementOf } from "../../src/directory/shards";
import { gatherStrayRowsAfterMove } from "../../src/moves/gather";
import { EventBatch } from "../../src/schemas/events";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { adminOk, env, ev, postEventsOk } from "./helpers";
import { afterReads, completeMove, rowsUnder } from "./move-helpers";
import { accountOf, consume, exported, messageOf, prs, renamed, repoId, review, world } from "./webhook-helpers";

/** The environment whose first read of the directory by the event write path runs `race` after reading. */
function racing(race: () => Promise<void>): { env: Env; reads: () => number } {
  let reads = 0;
  const racingEnv = afterReads("FROM organization_names WHERE login_key IN", async (n) => {
    reads = n;
    if (n === 1) await race();
  });
  return { env: racingEnv, reads: () => reads };
}

describe("gathers of stray rows: whose rows, and when a batch is acknowledged", () => {
  // A redelivered or retried old rename must not gather a login another organization uses now.
  it("a late copy of A's rename a→L does not take the rows of B, which uses L now", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const l = `${a}-l`.slice(-39);
    const m = `${a}-m`.slice(-39);
    const al = messageOf("organization", renamed(a, l, accountOf(a)));
    await consume(WEBHOOK_QUEUE, [al]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(l, m, accountOf(a)))]);
    // L is free on GitHub; organization B takes it. The reviewer's events come before B's registration
    // (contract 5: kept).
    await postEventsOk([ev.pr(l, 7), review(l, "api", 7)]);
    expect(await rowsUnder(l.toLowerCase()), "B's row stored under L").toBe(1);
    // The queue delivers A's first rename again (at-least-once; or its MoveRunning wait re-send).
    const again = await consume(WEBHOOK_QUEUE, [al]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    // B registers: its pull request must be B's, not A's.
    await adminOk("PUT", `/internal/v1/organizations/${l}`, {
      installationId: accountOf(a) + 777_000,
      installedAt: "2026-01-01T00:00:00Z",
      plan: "pro",
      subscription: { status: "active", billedThroughService: false, purchasedSeats: 0 },
    });
    expect((await exported(m, owner)).map((r) => r.prNumber)).toEqual([1]); // A's data only
    expect(await rowsUnder(l.toLowerCase()), "B's row after the redelivery").toBe(1); // B's row stays under B's home
  });

  // A batch naming both the old and the new login must not be acknowledged while the new login's
  // events are only under the stray key (its home was written in round 1 for the old login's events).
  it("an acknowledged batch is stored at its home during the move", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const home = a.toLowerCase();
    const b = `${a}-b`.slice(-39);
    const c = `${a}-c`.slice(-39);
    const from = (await placementOf(env, home)).shard;
    const to = from === "DB" ? "ANALYTICS_2" : "DB";
    const events = EventBatch.parse({ events: [ev.pr(a, 3), review(a, "api", 3), ev.pr(b, 2), review(b, "api", 2)] }).events;
    const r = racing(async () => {
      await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
      const { move } = await recordMove(env, { home, login: a }, from, to, Date.now());
      await beginMove(env, move);
    });
    // Not acknowledged while B's events are only under the stray key: 503, and the client sends it again.
    await expect(storeEvents(r.env, events)).rejects.toBeInstanceOf(MoveRunning);
    await storeEvents(env, events);
    expect(r.reads()).toBeGreaterThanOrEqual(2);
    const during = (await exported(b, owner)).map((x) => x.prNumber).sort();
    // Renamed again while the move runs; then the move ends and its last step gathers.
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    await completeMove(home);
    expect(await gatherStrayRowsAfterMove(env, home)).toBe(true);
    const after = (await exported(c, owner)).map((x) => x.prNumber).sort();
    expect({ during, after }).toEqual({ during: [1, 2, 3], after: [1, 2, 3] });
  });
});
