import { describe, expect, it } from "vitest";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { ADMIN_TOKEN, adminOk, env, ev, fetchWithEnv, unique, uniqueInstallationId } from "./helpers";
import {
  accountOf,
  consume,
  d1WritesFail,
  example,
  exported,
  exportPage,
  installationOf,
  messageOf,
  type Person,
  person,
  readMember,
  renamed,
  world,
} from "./webhook-helpers";

/** This file's installation ids: IDS + n, apart from every other file's (storage is shared across files). */
const IDS = uniqueInstallationId();

/**
 * Contract section 9: "Deliveries may arrive in any order and may be redelivered by hand: the
 * result is the same", for an organization's renames racing its installation, another
 * organization taking its old login, concurrent directory writes and the control plane's PUT.
 * Deliveries are handed to the queue consumer directly (`consume`), in the order each test names.
 */

/** `installation.created` for `login`, GitHub account `accountId`, installation `installationId`. */
function installed(login: string, accountId: number, installationId: number) {
  const payload = example("installation", "created", login, 0, accountId);
  (payload.installation as Record<string, unknown>).id = installationId;
  payload.repositories = [];
  return payload;
}

/** `organization.member_added` of `who` as admin, under `login` for account `accountId`, sent by `installationId`. */
function joined(login: string, accountId: number, who: { id: string }, installationId = accountId) {
  const payload = example("organization", "member_added", login, 0, accountId, installationId);
  const membership = payload.membership as { role: string; user: Record<string, unknown> };
  membership.role = "admin";
  membership.user = { ...membership.user, id: Number(who.id), login: `gh${who.id}`, type: "User" };
  return payload;
}

const applied = async (event: string, payload: unknown) => {
  const { ids, result } = await consume(WEBHOOK_QUEUE, [messageOf(event, payload)]);
  expect(result.explicitAcks).toEqual(ids);
};

const statusOf = async (org: string, who: Person) => (await readMember(org, who, who.id)).status;

describe("a rename and the installation in any order: the organization ends under its new login", () => {
  it("the rename is applied before the installation (whose first attempt failed): it waits for it", async () => {
    const a = unique("race");
    const b = `${a}-b`;
    const account = accountOf(a);
    const owner = await person();
    await applied("organization", renamed(a, b, account, IDS + 41));
    await applied("installation", installed(a, account, IDS + 41));
    await applied("organization", joined(b, account, owner, IDS + 41));
    expect(await statusOf(b, owner)).toBe(200);
    expect(await statusOf(a, owner)).toBe(404);
  });

  it("a late retry of the installation (the same installation id) does not undo a rename", async () => {
    const a = unique("race");
    const b = `${a}-b`;
    const account = accountOf(a);
    const owner = await person();
    await adminOk("PUT", `/internal/v1/organizations/${a}`, {
      installationId: IDS + 42,
      installedAt: "2025-01-01T00:00:00Z",
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });
    // Billing's installation sends them: the first one teaches the account id.
    await applied("organization", joined(a, account, owner, IDS + 42));
    await applied("organization", renamed(a, b, account, IDS + 42));
    expect(await statusOf(b, owner)).toBe(200);
    await applied("installation", installed(a, account, IDS + 42));
    expect(await statusOf(b, owner)).toBe(200);
    expect(await statusOf(a, owner)).toBe(404);
  });
});

/** Billing registers `login` with this installation id (the control plane knows no account id). */
const registered = (login: string, installationId: number) =>
  adminOk("PUT", `/internal/v1/organizations/${login}`, {
    installationId,
    installedAt: "2025-01-01T00:00:00Z",
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
  });

/** The control plane synchronises `who` as an admin of `login`. */
const syncedAdmin = (login: string, who: Person) =>
  adminOk("PUT", `/internal/v1/organizations/${login}/members/${who.id}`, {
    githubLogin: `gh${who.id}`,
    workEmail: `${who.id}@example.com`,
    role: "admin",
    seat: true,
    isBot: false,
  });

describe("an organization whose account id is unknown is not mixed with a new one that takes its old login", () => {
  it("the new organization's installation is applied before the first one's rename: each keeps its own", async () => {
    const a = unique("race");
    const b = `${a}-b`;
    const first = await person();
    const second = await person();
    await registered(a, IDS + 51);
    await syncedAdmin(a, first);
    // GitHub: the first organization renames itself to B; another account takes A and installs the
    // app. The queue applies the installation first.
    const newcomer = accountOf(`${a}-newcomer`);
    await applied("installation", installed(a, newcomer, IDS + 52));
    await applied("organization", renamed(a, b, accountOf(a), IDS + 51));
    await applied("organization", joined(a, newcomer, second, IDS + 52));

    expect(await statusOf(b, first)).toBe(200);
    expect(await statusOf(a, second)).toBe(200);
    expect((await readMember(a, first, first.id)).status).toBe(403);
    expect((await readMember(b, second, second.id)).status).toBe(403);
  });
});

describe("two messages of one organization applied concurrently: the directory keeps the newer identity", () => {
  /**
   * A D1 whose first write batch waits until `release` (reads and later writes pass): the first
   * message's directory write is held back while the second message is applied completely.
   */
  const heldFirstWrite = () => {
    let held = false;
    let reached = () => {};
    let release = () => {};
    const atWrite = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const db = {
      prepare: (query: string) => env.DB.prepare(query),
      batch: async (statements: D1PreparedStatement[]) => {
        if (!held) {
          held = true;
          reached();
          await released;
        }
        return env.DB.batch(statements);
      },
    };
    return { db, atWrite, release };
  };

  it("A→B's directory write lands after B→C's: C still answers, A and B are 404", async () => {
    const { org: a, admin: owner } = await world([]);
    const b = `${a}-b`;
    const c = `${a}-c`;
    const account = accountOf(a);
    const held = heldFirstWrite();
    const first = consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, account))], { DB: held.db });
    await held.atWrite;
    await applied("organization", renamed(b, c, account));
    held.release();
    const { ids, result } = await first;
    expect(result.explicitAcks).toEqual(ids);
    expect(await statusOf(c, owner)).toBe(200);
    expect(await statusOf(b, owner)).toBe(404);
    expect(await statusOf(a, owner)).toBe(404);
  });
});

describe("the control plane's PUT finds an organization by its installation id: it never copies it", () => {
  /** Billing moves the organization to the Team plan, naming `login` and the installation of `org`. */
  const teamPlan = (login: string, org: string) =>
    adminOk<{ login: string; plan: string }>("PUT", `/internal/v1/organizations/${login}`, {
      installationId: installationOf(org),
      installedAt: "2025-01-01T00:00:00Z",
      plan: "team",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });

  it("naming the new login before the directory knows the rename: the organization is updated, not copied", async () => {
    const { org: a, admin: owner, member } = await world([]);
    const b = `${a}-b`;
    const message = messageOf("organization", renamed(a, b, accountOf(a)));
    const failed = await consume(WEBHOOK_QUEUE, [message], { DB: d1WritesFail() });
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);

    expect(await teamPlan(b, a)).toMatchObject({ login: b, plan: "team" });
    const retried = await consume(WEBHOOK_QUEUE, [message], {}, 2);
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    expect((await readMember(b, owner, member.id)).status).toBe(200);
    expect((await exportPage(b, owner)).status).toBe(403); // Team: no export
  });

  it("naming the old login after the rename: the organization is updated under its current login; the old one stays 404", async () => {
    const { org: a, admin: owner, member } = await world([]);
    const b = `${a}-b`;
    await applied("organization", renamed(a, b, accountOf(a)));
    expect(await teamPlan(a, a)).toMatchObject({ login: b, plan: "team" });
    expect((await readMember(a, owner, member.id)).status).toBe(404);
    expect((await readMember(b, owner, member.id)).status).toBe(200);
    expect((await exportPage(b, owner)).status).toBe(403); // Team: no export
  });
});

describe("events that name the new login while the rename is being applied join the organization", () => {
  it("the rename's directory write and gathering run between the batch's directory read and its commit", async () => {
    const { org: a, admin: owner } = await world([]);
    const b = `${a}-b`;
    const rename = messageOf("organization", renamed(a, b, accountOf(a)));
    // The batch has read the directory (b is its own home); before its transaction commits, the
    // rename is applied completely: object, directory, rows gathered from b's folded key.
    // The batch commits with one `batch()` on its organization's shard, whichever that is.
    let renamedMeanwhile = false;
    const holding = (shard: D1Database) => ({
      prepare: (query: string) => shard.prepare(query),
      batch: async (statements: D1PreparedStatement[]) => {
        if (!renamedMeanwhile) {
          renamedMeanwhile = true;
          const { ids, result } = await consume(WEBHOOK_QUEUE, [rename]);
          expect(result.explicitAcks).toEqual(ids);
        }
        return shard.batch(statements);
      },
    });
    const request = new Request("https://service.test/internal/v1/events", {
      method: "POST",
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ events: [ev.pr(b, 2), ev.review(b, 2, `r2-${a}`)] }),
    });
    expect((await fetchWithEnv(request, { DB: holding(env.DB), ANALYTICS_2: holding(env.ANALYTICS_2) })).status).toBe(200);
    expect(renamedMeanwhile).toBe(true);
    expect((await exported(b, owner)).map((r) => r.prNumber)).toEqual([2]);
  });
});
