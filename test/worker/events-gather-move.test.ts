/**
 * The event write path's own gather (`directory/events.ts` `storeEvents`: a batch that resolved a
 * login before the directory named its new home gathers what it left under the login's folded key)
 * meets a move of the home: it answers 503 (the gather waits for the move), and the client's retry,
 * which finds the home directly and sees no change of home, stores the batch there but gathers
 * nothing. An outside review found the copy left under the stray key for good. It is now gathered
 * when the move ends (`moves/gather.ts`: the move Workflow's last step, the cancel, the heal), for
 * the organization's current login. Contract section 5: events are never lost; section 16: nothing
 * lost while a move runs.
 */
import { introspectWorkflow } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { storeEvents } from "../../src/directory/events";
import { beginMove, recordMove } from "../../src/directory/moves";
import { MoveRunning } from "../../src/directory/rows";
import { placementOf, shardOf } from "../../src/directory/shards";
import { gatherStrayRowsAfterMove } from "../../src/moves/gather";
import { EventBatch } from "../../src/schemas/events";
import { writeEvents } from "../../src/storage/events";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { admin, createOrg, env, ev, postEventsOk, unique } from "./helpers";
import { afterReads, completeMove, rowsUnder } from "./move-helpers";
import { accountOf, consume, exported, messageOf, prs, renamed, repoId, review, world } from "./webhook-helpers";

describe("the event write path's gather during a move between shards", () => {
  it("a batch answered 503 is stored at its home by its retry; the copy it left is gathered when the move ends", {
    timeout: 60_000,
  }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const home = a.toLowerCase();
    const b = `${a}-b`.slice(-39);
    const events = EventBatch.parse({
      events: [
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
      ],
    }).events;
    const from = (await placementOf(env, home)).shard;
    const to = from === "DB" ? "ANALYTICS_2" : "DB";

    let reads = 0;
    const racingEnv = afterReads("FROM organization_names WHERE login_key IN", async (n) => {
      reads = n;
      if (n !== 1) return;
      // The batch resolved B as its own key. The rename is applied (directory, gather of B: nothing
      // yet), then the operator starts a move of the home.
      await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
      const { move } = await recordMove(env, { home, login: a }, from, to, Date.now());
      await beginMove(env, move);
    });
    // The gather waits for the move: 503, "retry the same request"; the batch is under the stray key.
    await expect(storeEvents(racingEnv, events)).rejects.toBeInstanceOf(MoveRunning);
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    // The client's retry finds the home directly: stored there (both shards while the move runs).
    await storeEvents(env, events);
    expect((await exported(b, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);

    await completeMove(home);

    // The Workflow's last step.
    expect(await gatherStrayRowsAfterMove(env, home)).toBe(true);
    expect((await exported(b, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
  });

  it("the move Workflow's last step gathers the stray rows of the organization's known logins", async () => {
    const org = await createOrg(unique("gatherend"), { plan: "pro" });
    const home = org.toLowerCase();
    await postEventsOk([ev.pr(org, 1)]);
    const from = (await placementOf(env, home)).shard;
    const to = from === "DB" ? "ANALYTICS_2" : "DB";
    // A login the directory names for the home, with rows left under its folded key on the source.
    const stray = unique("gatherendnew");
    await env.DB.prepare("INSERT INTO organization_names (login_key, home_key) VALUES (?1, ?2)").bind(stray, home).run();
    await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, ?2)").bind(stray, from).run();
    const source = shardOf(env, from);
    await writeEvents(source.db, EventBatch.parse({ events: [ev.pr(stray, 2)] }).events, new Map(), { shardIndex: source.index });
    expect(await rowsUnder(stray)).toBe(1);

    await using moves = await introspectWorkflow(env.MOVES);
    const res = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: to });
    expect(res.status).toBe(202);
    const [instance] = await moves.get();
    await instance?.waitForStatus("complete");

    expect(await rowsUnder(stray)).toBe(0);
    const { results } = await shardOf(env, to)
      .db.prepare("SELECT pr_number FROM pull_requests WHERE org_key = ?1 ORDER BY pr_number")
      .bind(home)
      .all();
    expect(results.map((r) => r.pr_number)).toEqual([1, 2]);
  }, 60_000);
});
