/**
 * An organization renamed twice (A→B, B→C). Rows a reviewer stored under B before A→B was applied
 * wait under B's folded key (a stray key) and are the organization's (contract section 9: a renamed
 * organization keeps its data; section 16: nothing lost); rows stored under B once another
 * organization took the freed login are that one's. A rename sets apart the rows under the login it
 * leaves as soon as it is received (`held_logins`, `directory/learn.ts` `holdLeftLogins`), and they
 * join the home when it can take them (`gatherHeldLogins`: after the rename, or at the end of a
 * move between shards). Found by an outside review on 2026-11-28 as a known defect: while the
 * organization moved, A→B's gather waited, B→C was applied meanwhile, and A→B's retry gathered the
 * current login C, never B. A first fix (a log of logins to gather later) was reverted when a second
 * review showed it taking another organization's rows; its cases are here (F1, F2, G, H).
 */
import { describe, expect, it } from "vitest";
import { gatherCurrentLogin } from "../../src/directory/learn";
import { beginMove, recordMove } from "../../src/directory/moves";
import { placementOf } from "../../src/directory/shards";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { env, postEventsOk } from "./helpers";
import { completeMove, rowsUnder } from "./move-helpers";
import {
  accountOf,
  billing,
  consume,
  d1WritesFail,
  endMove,
  example,
  exported,
  install,
  joins,
  markMoving,
  messageOf,
  person,
  prs,
  renamed,
  repoId,
  review,
  world,
} from "./webhook-helpers";

/** A merged pull request with a completed review, stored by a reviewer under `login` (number `n` in repository api). */
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

/** The entries of the organization's object not gathered yet. */
const open = (home: string) => env.ORGANIZATIONS.getByName(home).holds();

/** `organization.member_added` of a fresh person under `login`, sent by account `accountId`'s installation. */
async function memberAdded(login: string, accountId: number) {
  const who = await person();
  const payload = example("organization", "member_added", login, 0, accountId, accountId);
  const membership = payload.membership as { role: string; user: Record<string, unknown> };
  membership.role = "member";
  membership.user = { ...membership.user, id: Number(who.id), login: `gh${who.id}`, type: "User" };
  return messageOf("organization", payload);
}

/** Another organization (another GitHub account) that took `login`, installed with repository api, and its admin. */
async function otherOrgTakes(login: string) {
  const admin = await person();
  await billing(login);
  await install(login, [{ id: repoId(), name: "api", private: false }]);
  await joins(login, admin, "admin");
  return admin;
}

/** An organization A with pull request 1, and the logins B and C it will take. */
async function renamedTwice() {
  const repo = { id: repoId(), name: "api", private: false };
  const { org: a, admin: owner } = await world([repo]);
  await prs(a, owner, [[repo, 1]]);
  return { a, owner, home: a.toLowerCase(), b: `${a}-b`.slice(-39), c: `${a}-c`.slice(-39), d: `${a}-d`.slice(-39) };
}

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

describe("rows under a login the organization left: its own, never another organization's", () => {
  it("F1: B→C delivered first sets B's rows apart; a later owner's rows under B stay its own when A→B arrives late", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2); // X's reviewer used B early: X's
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]); // waits for its chain
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    // B is free on GitHub: Y takes it; Y's reviewer stores rows before Y's installation is registered.
    await rowsAs(b, 7);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]); // late: A→B→C at once
    const yAdmin = await otherOrgTakes(b);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect((await exported(b, yAdmin)).map((r) => r.prNumber)).toEqual([7]);
    expect((await open(home)).map((h) => h.state)).toEqual([]);
  });

  it("F2: during a move B's rows are set apart when B→C arrives; the new owner's rows stored later stay its own", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2);
    const from = (await placementOf(env, home)).shard;
    const { move } = await recordMove(env, { home, login: a }, from, from === "DB" ? "ANALYTICS_2" : "DB", Date.now());
    await beginMove(env, move);
    const ab = messageOf("organization", renamed(a, b, accountOf(a)));
    await consume(WEBHOOK_QUEUE, [ab]); // its gather waits for the move
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    expect((await open(home)).map((h) => [h.loginKey, h.state])).toContainEqual([b.toLowerCase(), "held"]);
    await rowsAs(b, 7); // Y took B during the move
    await completeMove(home);
    await gatherCurrentLogin(env, home); // the move's end (workflow.ts, heal.ts)
    await consume(WEBHOOK_QUEUE, [ab], {}, 1); // the re-sent A→B
    const yAdmin = await otherOrgTakes(b);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect((await exported(b, yAdmin)).map((r) => r.prNumber)).toEqual([7]);
  });

  it("G: an unrelated delivery gathers nothing of B while the directory has not learnt it; B's rows join after", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c } = await renamedTwice();
    const ab = messageOf("organization", renamed(a, b, accountOf(a)));
    // A→B: applied in the object; the directory's write fails: retried with backoff.
    const failed = await consume(WEBHOOK_QUEUE, [ab], { DB: d1WritesFail() });
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
    const other = await consume(WEBHOOK_QUEUE, [await memberAdded(b, accountOf(a))]);
    expect(other.result.explicitAcks).toEqual(other.ids);
    // The organization is B on GitHub; the directory still says A: the reviewer's rows under B stray.
    await rowsAs(b, 2);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    const retried = await consume(WEBHOOK_QUEUE, [ab], {}, 2);
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
  });

  it("H: back through B during a move (C→B→D): B's rows set apart again and gathered at the move's end", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, d, home } = await renamedTwice();
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    await rowsAs(b, 2); // X's reviewer used B again, early
    await markMoving(home);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, d, accountOf(a)))]);
    const cb = messageOf("organization", renamed(c, b, accountOf(a)));
    await consume(WEBHOOK_QUEUE, [cb]); // the chain C→B→D at once; the gather waits
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    await endMove(home);
    await gatherCurrentLogin(env, home);
    await consume(WEBHOOK_QUEUE, [cb], {}, 1);
    expect((await exported(d, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await open(home)).toEqual([]);
  });

  it("a new delivery of an old rename (its login left long ago, now another's) sets nothing apart", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    await rowsAs(b, 7); // Y's, under the freed login B
    // GitHub sends B→C again under a new delivery id (a manual redelivery).
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
    expect(await open(home)).toEqual([]);
  });

  it("rows under a login that is another organization's registered home are never set apart", { timeout: 60_000 }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    const yAdmin = await otherOrgTakes(b); // B's folded key is Y's home
    await rowsAs(b, 7);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(b, yAdmin)).map((r) => r.prNumber)).toEqual([7]);
    expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
    expect(await open(home)).toEqual([]);
  });

  it("A→B→A (B→A delivered first): B's rows join, the home's own key is never set apart", { timeout: 60_000 }, async () => {
    const { a, owner, b, home } = await renamedTwice();
    await rowsAs(b, 2);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, a, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(a, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    expect(await rowsUnder(home)).toBe(2);
    expect(await open(home)).toEqual([]);
  });
});
