/**
 * An organization renamed twice (A→B, B→C). Rows a reviewer stored under B before A→B was applied
 * wait under B's folded key (a stray key) and must join the organization (contract section 9: a
 * renamed organization keeps its data; section 16: nothing lost). The organization's object records
 * every login its renames pass through (`stray_logins`, in the rename's transaction) and the
 * consumer and the end of a move gather those, and only those (`directory/learn.ts`
 * `gatherRecordedLogins`). Found by an outside review on 2026-11-28 as a known defect: while the
 * organization moved between shards, A→B's gather waited, B→C was applied meanwhile, and A→B's retry
 * gathered the current login C, never B.
 */
import { describe, expect, it } from "vitest";
import { beginMove, recordMove } from "../../src/directory/moves";
import { placementOf } from "../../src/directory/shards";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { env, postEventsOk } from "./helpers";
import { completeMove, rowsUnder } from "./move-helpers";
import { accountOf, consume, exported, messageOf, prs, renamed, repoId, review, world } from "./webhook-helpers";

/** A merged pull request with a completed review, stored by the reviewer under `login` (number `n` in repository api). */
const rowsAs = (login: string, n: number) =>
  postEventsOk([
    {
      type: "pull_request",
      org: login,
      repo: "api",
      prNumber: n,
      author: "octocat",
      createdAt: "2026-10-01T10:00:00Z",
      mergedAt: "2026-10-02T10:00:00Z",
      linesAdded: 5,
      linesDeleted: 1,
      updatedAt: "2026-10-02T10:00:00Z",
    },
    review(login, "api", n),
  ]);

/** The logins the organization's object still has to gather. */
const recorded = (home: string) => env.ORGANIZATIONS.getByName(home).strayLogins();

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
  it("a chain delivered out of order (B→C before A→B) is followed at once, and B's rows join too", {
    timeout: 60_000,
  }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const b = `${a}-b`.slice(-39);
    const c = `${a}-c`.slice(-39);
    await rowsAs(b, 2);
    await rowsAs(c, 3);
    // B→C waits for its chain; A→B then applies both: the login goes from A to C in one step.
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2, 3]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    expect(await rowsUnder(c.toLowerCase())).toBe(0);
    expect(await recorded(a.toLowerCase())).toEqual([]);
  });
  it("a late copy of A→B, after B was freed and used by someone else, gathers nothing", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const b = `${a}-b`.slice(-39);
    const c = `${a}-c`.slice(-39);
    const ab = messageOf("organization", renamed(a, b, accountOf(a)));
    await consume(WEBHOOK_QUEUE, [ab]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    expect(await recorded(a.toLowerCase())).toEqual([]);
    // Login B freed: another organization takes it, and the reviewer stores its rows before its
    // installation is registered (under B's folded key).
    await rowsAs(b, 7);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    // The same A→B delivery again (a late copy): its ledger entry is found, nothing is recorded to gather.
    const again = await consume(WEBHOOK_QUEUE, [ab]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
  });
});
