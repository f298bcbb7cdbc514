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
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { heldKey } from "../../src/directory/identity";
import { gatherCurrentLogin, gatherHeldLogins } from "../../src/directory/learn";
import { beginMove, recordMove } from "../../src/directory/moves";
import { moveOrganizationRows } from "../../src/directory/rows";
import { placementOf } from "../../src/directory/shards";
import { DAY_MS } from "../../src/lib/time";
import { DONE_HOLD_KEPT_MS, HOLD_WINDOW_MS } from "../../src/organization/store/installation";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { replayParked } from "../../src/webhooks/receive";
import { env, ev, postEventsOk } from "./helpers";
import { completeMove, moveAll, rowsUnder } from "./move-helpers";
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
const rowsAs = (login: string, n: number) => postEventsOk([ev.pr(login, n), review(login, "api", n)]);

/** Begins a move of the organization to its other shard (the move stays running until `completeMove`). */
async function startMove(home: string, login: string) {
  const from = (await placementOf(env, home)).shard;
  const { move } = await recordMove(env, { home, login }, from, from === "DB" ? "ANALYTICS_2" : "DB", Date.now());
  await beginMove(env, move);
}

/** The entries of the organization's object not gathered yet. */
const open = (home: string) => env.ORGANIZATIONS.getByName(home).holds();

/** Ages the object's entries by `ms` (time passing, as the object reads it: `recorded_at`). */
const ageHolds = (home: string, ms: number) =>
  runInDurableObject(env.ORGANIZATIONS.getByName(home), (_instance, state) => {
    state.storage.sql.exec("UPDATE held_logins SET recorded_at = recorded_at - ?", ms);
  });

const everyShardFails = () => ({ DB: d1WritesFail(env.DB), ANALYTICS_2: d1WritesFail(env.ANALYTICS_2) });

/** ORGANIZATIONS whose stubs fail `method` (every call), as an object in trouble does; the rest as they are. */
const objectsFail = (method: string) => ({
  getByName: (name: string) => {
    const stub = env.ORGANIZATIONS.getByName(name);
    return new Proxy(stub, {
      get(target, prop) {
        if (prop === method)
          return async () => {
            throw new Error(`injected ${method} fault [expected-fault]`);
          };
        return (...args: unknown[]) =>
          (target as unknown as Record<string | symbol, (...a: unknown[]) => unknown>)[prop]?.(...args);
      },
    });
  },
});

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
    const { a, owner, b, c, home } = await renamedTwice();
    // Reviewer events under B before the rename is applied: stray under B's folded key.
    await rowsAs(b, 2);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    // The operator moves the organization.
    await startMove(home, a);

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
    const { a, owner, b, c } = await renamedTwice();
    await rowsAs(b, 2);
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
    await startMove(home, a);
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

  it("GitHub's redelivery of an old rename (the same delivery id) sets nothing apart", { timeout: 60_000 }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    const bc = messageOf("organization", renamed(b, c, accountOf(a)));
    await consume(WEBHOOK_QUEUE, [bc]);
    await rowsAs(b, 7); // Y's, under the freed login B
    // A redelivery keeps X-GitHub-Delivery: the object's ledger knows it, nothing is recorded.
    const again = await consume(WEBHOOK_QUEUE, [bc]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
    expect(await open(home)).toEqual([]);
  });

  it.each([
    ["replayed from the dead-letter queue", "replay"],
    ["left open when the first rename arrives at last", "first rename"],
  ] as const)(
    "a hold that failed and is not retried in time is closed unheld, %s: the login's new owner keeps its rows",
    {
      timeout: 60_000,
    },
    async (_name, then) => {
      const { a, owner, b, c } = await renamedTwice();
      const home = a.toLowerCase();
      await rowsAs(b, 2); // X's reviewer used B early: stray under B's key
      // B→C first (it waits for A→B); setting B's rows apart fails with every shard's writes.
      const bc = messageOf("organization", renamed(b, c, accountOf(a)));
      const failed = await consume(WEBHOOK_QUEUE, [bc], everyShardFails());
      expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
      expect((await open(home)).map((h) => [h.loginKey, h.state])).toEqual([[b.toLowerCase(), "holding"]]);
      // Its retries fail for longer than the hold window (the message parks): the entry ages.
      await ageHolds(home, HOLD_WINDOW_MS + 1);
      // Y took B; Y's reviewer stores rows under B before Y's installation is registered.
      await rowsAs(b, 7);
      if (then === "replay") await consume(WEBHOOK_QUEUE, [bc], {}, 1);
      await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
      if (then === "first rename") await consume(WEBHOOK_QUEUE, [bc], {}, 1);
      const yAdmin = await otherOrgTakes(b);
      // X's early row 2 was not set apart in time: it stays under B's key, now Y's home (the price of
      // never taking another organization's rows). Y's 7 is Y's.
      expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
      expect((await exported(b, yAdmin)).map((r) => r.prNumber).sort()).toEqual([2, 7]);
      expect(await open(home)).toEqual([]);
    },
  );

  it("a hold that fails is retried within its window and sets the rows apart", { timeout: 60_000 }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2);
    const bc = messageOf("organization", renamed(b, c, accountOf(a)));
    const failed = await consume(WEBHOOK_QUEUE, [bc], everyShardFails());
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
    const retried = await consume(WEBHOOK_QUEUE, [bc], {}, 2);
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    await rowsAs(b, 7); // Y's, after B was set apart
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    expect(await open(home)).toEqual([]);
  });

  it("an empty stray key on a shard in trouble does not keep the directory from learning the new login", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    if ((await placementOf(env, home)).shard !== "DB") await moveAll(home, a); // the home on the main database
    // B's folded key placed on the other shard (a reviewer used B early), and gathered by A→B.
    await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'ANALYTICS_2')")
      .bind(b.toLowerCase())
      .run();
    await rowsAs(b, 2);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    const bc = messageOf("organization", renamed(b, c, accountOf(a)));
    const r = await consume(WEBHOOK_QUEUE, [bc], { ANALYTICS_2: d1WritesFail(env.ANALYTICS_2) });
    expect(r.result.explicitAcks).toEqual(r.ids);
    expect((await exported(c, owner)).map((x) => x.prNumber).sort()).toEqual([1, 2]);
  });

  it("rows moved to the holding key before their entry could be marked are gathered once the window has passed", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2); // X's, stray under B
    const bc = messageOf("organization", renamed(b, c, accountOf(a)));
    // The rows reach B>home; the object call that marks the entry held fails.
    const failed = await consume(WEBHOOK_QUEUE, [bc], { ORGANIZATIONS: objectsFail("holdDone") });
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
    expect(await rowsUnder(heldKey(b.toLowerCase(), home))).toBe(1);
    // Its retry comes after the window: the claim is refused, what was set apart is gathered.
    await ageHolds(home, HOLD_WINDOW_MS + 1);
    const retried = await consume(WEBHOOK_QUEUE, [bc], {}, 2);
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(heldKey(b.toLowerCase(), home))).toBe(0);
    expect(await open(home)).toEqual([]);
  });

  it.each([
    ["applied again after the ledger forgot it (8 days)", true],
    ["parked before the object could apply it", false],
  ] as const)(
    "a rename received long ago and replayed sets nothing apart: %s",
    { timeout: 60_000 },
    async (_name, appliedBefore) => {
      const { a, owner, b, c, home } = await renamedTwice();
      const ab = messageOf("organization", renamed(a, b, accountOf(a)));
      const bc = { ...messageOf("organization", renamed(b, c, accountOf(a))), receivedAt: Date.now() };
      if (appliedBefore) {
        await consume(WEBHOOK_QUEUE, [ab]);
        await consume(WEBHOOK_QUEUE, [bc]);
        await runInDurableObject(env.ORGANIZATIONS.getByName(home), (_instance, state) => {
          state.storage.sql.exec("DELETE FROM applied_deliveries");
        });
      } else {
        const failed = await consume(WEBHOOK_QUEUE, [bc], { ORGANIZATIONS: objectsFail("applyGithubChange") });
        expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
      }
      await rowsAs(b, 7); // days later: Y took B; Y's reviewer stores under B
      // The operator replays the parked copy, days after the service received it.
      await consume(WEBHOOK_QUEUE, [{ ...bc, receivedAt: bc.receivedAt - 3 * DAY_MS }]);
      // Never applied before: A→B had not arrived either (B's rows stray); it comes at last.
      if (!appliedBefore) await consume(WEBHOOK_QUEUE, [ab]);
      const yAdmin = await otherOrgTakes(b);
      expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
      expect((await exported(b, yAdmin)).map((r) => r.prNumber)).toEqual([7]);
      expect(await open(home)).toEqual([]);
    },
  );

  it("a rename message whose age is unknown (queued before messages carried receivedAt) sets nothing apart; a replay dates it", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2); // stray under B
    const { receivedAt: _stamped, ...bc } = messageOf("organization", renamed(b, c, accountOf(a)));
    await consume(WEBHOOK_QUEUE, [bc]);
    expect(await open(home)).toEqual([]);
    expect(await rowsUnder(b.toLowerCase())).toBe(1);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber)).toEqual([1]);
    // The control plane's replay of such a parked message gives it the time it was parked.
    const sent: unknown[] = [];
    const parkedAt = Date.now() - DAY_MS;
    await replayParked({ ...env, WEBHOOKS: { send: async (body: unknown) => void sent.push(body) } } as unknown as Env, {
      delivery: bc.delivery,
      message: bc,
      parkedAt,
    });
    expect(sent).toEqual([{ ...bc, receivedAt: parkedAt }]);
  });

  it("a hold whose entry a gather closed while its rows were on their way still has them gathered", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2);
    const bc = messageOf("organization", renamed(b, c, accountOf(a)));
    // The hold claims its entry and moves row 2; the call that marks it held fails.
    const failed = await consume(WEBHOOK_QUEUE, [bc], { ORGANIZATIONS: objectsFail("holdDone") });
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
    const [entry] = await open(home);
    expect(entry?.state).toBe("holding");
    // Past the window a gather takes what the holding key has and closes the entry...
    await ageHolds(home, HOLD_WINDOW_MS + 1);
    await gatherHeldLogins(env, home);
    expect(await open(home)).toEqual([]);
    // ...while the claimer's move was still on its way: row 3 lands under the holding key after.
    await rowsAs(b, 3);
    await moveOrganizationRows(env, b.toLowerCase(), heldKey(b.toLowerCase(), home));
    await env.ORGANIZATIONS.getByName(home).holdDone(entry?.seq ?? -1, "held");
    await gatherHeldLogins(env, home);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2, 3]);
    expect(await rowsUnder(heldKey(b.toLowerCase(), home))).toBe(0);
    expect(await open(home)).toEqual([]);
  });

  it("the same rename made twice (B→C, later C→B→C), the second B→C first: B's rows of the second stay join", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    await rowsAs(b, 2); // on GitHub: C→B, the reviewer under B (the directory says C), then B→C again
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(c, b, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    expect(await rowsUnder(b.toLowerCase())).toBe(0);
    expect(await open(home)).toEqual([]);
  });

  it("nothing to set apart places no holding key (it would count as an organization of its shard)", {
    timeout: 60_000,
  }, async () => {
    const { a, owner, b, c, home } = await renamedTwice();
    await rowsAs(b, 2); // B's key placed
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, accountOf(a)))]); // gathered: B's key empty
    await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(b, c, accountOf(a)))]);
    expect((await exported(c, owner)).map((r) => r.prNumber).sort()).toEqual([1, 2]);
    const placed = await env.DB.prepare("SELECT COUNT(*) AS n FROM analytics_placements WHERE home_key = ?1")
      .bind(heldKey(b.toLowerCase(), home))
      .first<{ n: number }>();
    expect(placed?.n).toBe(0);
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
    // Closed entries are kept a day (a hold still under way may mark its entry held again), then dropped.
    const entries = () =>
      runInDurableObject(
        env.ORGANIZATIONS.getByName(home),
        (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM held_logins").one().n,
      );
    expect(await entries()).toBe(1); // B→A's, leaving B
    await ageHolds(home, DONE_HOLD_KEPT_MS + 1);
    expect(await open(home)).toEqual([]);
    expect(await entries()).toBe(0);
  });
});
