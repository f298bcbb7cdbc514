import { describe, expect, it } from "vitest";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { admin, adminOk, call, env, type MemberErrorBody, postEventsOk, uniqueInstallationId } from "./helpers";
import {
  accountOf,
  consume,
  d1WritesFail,
  deliver,
  deliverQueued,
  eventually,
  example,
  exported,
  exportPage,
  installationOf,
  mergedPr,
  messageOf,
  newDelivery,
  type Person,
  person,
  prs,
  readMember,
  renamed,
  repoId,
  review,
  world,
} from "./webhook-helpers";

/** This file's installation ids: IDS + n, apart from every other file's (storage is shared across files). */
const IDS = uniqueInstallationId();

/**
 * Contract section 9, `organization` renamed: the organization answers under its new login (data,
 * keys' access and members kept) and the old login is 404. Observed through the public interfaces
 * and the control plane, with GitHub's documented `organization.renamed` example pointed at each
 * test's organization (its account id stays the organization's: `accountOf` the first login).
 */

/** A login derived from another, within GitHub's 39 characters. */
const another = (org: string, suffix: string) => `${org}-${suffix}`.slice(-39).replace(/^-+/, "");

/**
 * Another GitHub account (`account`) installs the app under `login` as installation
 * `installationId` (with `repositories`, if given) and makes `admin` its admin; the login answers.
 */
async function installNewcomer(
  login: string,
  account: number,
  installationId: number,
  admin: Awaited<ReturnType<typeof person>>,
  repositories?: unknown[],
) {
  const installed = example("installation", "created", login, 0, account);
  (installed.installation as Record<string, unknown>).id = installationId;
  if (repositories) installed.repositories = repositories;
  await deliverQueued("installation", installed);
  const joined = example("organization", "member_added", login, 0, account);
  const membership = joined.membership as { role: string; user: Record<string, unknown> };
  membership.role = "admin";
  membership.user = { ...membership.user, id: Number(admin.id), login: `gh${admin.id}`, type: "User" };
  await deliverQueued("organization", joined);
  await answersUnder(login, admin, admin.id);
}

/** An organization with a public repository holding one merged pull request. */
async function withPullRequest(name = "api", prNumber = 1) {
  const repo = { id: repoId(), name, private: false };
  const created = await world([repo]);
  await prs(created.org, created.admin, [[repo, prNumber]]);
  return created;
}

/**
 * An organization (login `a`, its admin `owner` and a `member`), by default with a public
 * repository holding one merged pull request, and the logins `b` and `c` a rename chain moves it
 * through; `account` is its GitHub account id.
 */
async function chainOfThree({ withData = true } = {}) {
  const { org: a, admin: owner, member } = withData ? await withPullRequest() : await world([]);
  return { a, b: another(a, "b"), c: another(a, "c"), owner, member, account: accountOf(a) };
}

const headers = (who: Person, kind: "members" | "analytics" = "members") => ({
  Authorization: `Bearer ${kind === "members" ? who.membersKey : who.analyticsKey}`,
});
const members = (org: string, who: Person) => call(`/api/v1/organizations/${org}/members?limit=100`, { headers: headers(who) });
const auditLog = (org: string, who: Person) =>
  call(`/api/v1/organizations/${org}/audit-log?limit=100`, { headers: headers(who) });
const patchMember = (org: string, who: Person, githubUserId: string, body: unknown) =>
  call(`/api/v1/organizations/${org}/members/${githubUserId}`, { method: "PATCH", headers: headers(who), json: body });
const organizations = async (who: Person, query = "limit=100") => {
  const res = await call(`/api/v1/organizations?${query}`, { headers: headers(who) });
  expect(res.status).toBe(200);
  return (await res.json()) as { data: { org: string }[]; nextCursor: string | null };
};
const rowsOf = async (org: string, who: Person) => {
  const res = await exportPage(org, who);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { org: string; repo: string; prNumber: number }[] }).data;
};
const codeOf = async (res: Response) => ((await res.json()) as MemberErrorBody).error.code;

/**
 * Every public route family answers 404 for this login (the members envelope's org_not_found; the
 * export's 404). `controlPlane`: the login's folded key is the organization's home (its first
 * login), so the control plane's syncs under it answer 404 too, instead of reaching the renamed
 * organization. (A login the organization only passed through is free: the control plane may sync
 * under it ahead of an installation, as under any login not installed yet.)
 */
async function expectGone(org: string, who: Person, memberId: string, { controlPlane = false } = {}) {
  const exportRes = await exportPage(org, who);
  expect(exportRes.status).toBe(404);
  expect(await exportRes.json()).toEqual({ error: "The organization cannot be resolved to an installation." });
  const responses = [
    await readMember(org, who, memberId),
    await members(org, who),
    await auditLog(org, who),
    await patchMember(org, who, memberId, { seat: true, expectedSeat: false }),
    await call(`/api/v1/organizations/${org}/members`, {
      method: "PATCH",
      headers: headers(who),
      json: { changes: [{ githubUserId: memberId, seat: true, expectedSeat: false }] },
    }),
  ];
  if (controlPlane) {
    responses.push(
      await admin("PUT", `/internal/v1/organizations/${org}/members/${memberId}`, {
        githubLogin: "someone",
        workEmail: "someone@example.com",
        role: "admin",
        seat: true,
        isBot: false,
      }),
      await admin("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false }),
      await admin("DELETE", `/internal/v1/organizations/${org}/members/${memberId}`),
    );
  }
  for (const res of responses) {
    expect(res.status, res.url).toBe(404);
    expect(await codeOf(res)).toBe("org_not_found");
  }
}

/** The organization answers under `org`: the admin reads the member there. */
const answersUnder = async (org: string, who: Person, memberId: string) =>
  expect((await readMember(org, who, memberId)).status).toBe(200);

describe("renamed: the organization answers under its new login; the old login is 404", () => {
  it("rows, members, the audit log and the keys' access follow; every route family answers 404 for the old login", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org, admin: owner, member } = await world([repo]);
    await prs(org, owner, [[repo, 1]]);
    expect((await rowsOf(org, owner)).map((r) => [r.org, r.prNumber])).toEqual([[org, 1]]);
    const renamedTo = another(org, "renamed");

    await deliverQueued("organization", renamed(org, renamedTo, accountOf(org)));
    await answersUnder(renamedTo, owner, member.id);

    // The same rows, shown under the login asked for; the same keys work.
    expect((await rowsOf(renamedTo, owner)).map((r) => [r.org, r.repo, r.prNumber])).toEqual([[renamedTo, "api", 1]]);
    expect((await rowsOf(renamedTo.toUpperCase(), member)).map((r) => r.org)).toEqual([renamedTo.toUpperCase()]);
    // Members kept, and changed under the new login (the subscription stays: seats, PATCH).
    const listed = (await (await members(renamedTo, owner)).json()) as { data: { githubUserId: string }[] };
    expect(listed.data.map((m) => m.githubUserId).sort()).toEqual([owner.id, member.id].sort());
    const patched = await patchMember(renamedTo, owner, member.id, { seat: true, expectedSeat: false });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ changed: true, after: { seat: true, role: "member" } });
    const log = (await (await auditLog(renamedTo, owner)).json()) as { data: { action: string; source: string }[] };
    expect(log.data.map((e) => [e.action, e.source])).toEqual([
      ["member.updated", "api"],
      ["member.added", "github"],
      ["member.added", "github"],
    ]);

    await expectGone(org, owner, member.id, { controlPlane: true });

    // The members' organizations lists show the new login.
    expect((await organizations(member)).data.map((o) => o.org)).toEqual([renamedTo]);
    expect((await organizations(owner)).data.map((o) => o.org)).toEqual([renamedTo]);

    // The reviewer's events and GitHub's pull requests under the new login land in the same organization.
    await postEventsOk([
      { ...review(renamedTo, "api", 1), reviewId: "r-after-rename", completedAt: "2026-10-03T12:00:00Z" },
      review(renamedTo, "api", 2),
    ]);
    await deliverQueued("pull_request", mergedPr(renamedTo, repo, 2, {}, accountOf(org)));
    expect((await rowsOf(renamedTo, owner)).map((r) => r.prNumber)).toEqual([2, 1]);
    // Billing under the new login updates the same organization.
    await adminOk("PUT", `/internal/v1/organizations/${renamedTo}`, {
      installationId: installationOf(org),
      installedAt: "2025-01-01T00:00:00Z",
      plan: "team",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });
    expect((await exportPage(renamedTo, owner)).status).toBe(403); // Team: no export
    expect((await readMember(renamedTo, owner, member.id)).status).toBe(200);
  });

  it("A→B→C, then back to A: each time only the current login answers, with the same data", async () => {
    const { a, b, c, owner, member, account } = await chainOfThree();

    await deliverQueued("organization", renamed(a, b, account));
    await answersUnder(b, owner, member.id);
    await deliverQueued("organization", renamed(b, c, account));
    await answersUnder(c, owner, member.id);
    expect((await rowsOf(c, owner)).map((r) => [r.org, r.prNumber])).toEqual([[c, 1]]);
    await expectGone(a, owner, member.id, { controlPlane: true });
    await expectGone(b, owner, member.id);

    await deliverQueued("organization", renamed(c, a, account));
    await answersUnder(a, owner, member.id);
    expect((await rowsOf(a, owner)).map((r) => [r.org, r.prNumber])).toEqual([[a, 1]]);
    await expectGone(b, owner, member.id);
    await expectGone(c, owner, member.id);
    expect((await organizations(member)).data.map((o) => o.org)).toEqual([a]);
  });

  it("the organizations list is ordered by the new login (and its cursor walks past a renamed entry)", async () => {
    const user = await person();
    const first = await world([]);
    const second = await world([]);
    for (const org of [first.org, second.org]) {
      const payload = example("organization", "member_added", org);
      const membership = payload.membership as { role: string; user: Record<string, unknown> };
      membership.user = { ...membership.user, id: Number(user.id), login: `gh${user.id}`, type: "User" };
      await deliverQueued("organization", payload);
    }
    expect((await organizations(user)).data.map((o) => o.org)).toEqual([first.org, second.org]);
    // `zz-…` sorts after every `gh-…` login of this file.
    const moved = `zz-${first.org}`.slice(0, 39);
    await deliverQueued("organization", renamed(first.org, moved, accountOf(first.org)));
    // The rename is applied when deliverQueued returns; the user's index of organizations follows
    // it after the answer (the organization's object reports to the user's), hence the wait.
    await eventually(async () => expect((await organizations(user)).data.map((o) => o.org)).toEqual([second.org, moved]));
    const page1 = await organizations(user, "limit=1");
    expect(page1.data.map((o) => o.org)).toEqual([second.org]);
    const page2 = await organizations(user, `limit=1&cursor=${page1.nextCursor}`);
    expect(page2).toEqual({ data: [expect.objectContaining({ org: moved })], nextCursor: null });
  });
});

describe("renames arrive in any order and more than once: the result is the same", () => {
  it("the same delivery twice: the receiver answers duplicate; the same message applied again by the queue changes nothing", async () => {
    const { a, b, c, owner, member, account } = await chainOfThree({ withData: false });
    const delivery = newDelivery();
    await deliverQueued("organization", renamed(a, b, account), { delivery });
    const again = await deliver("organization", renamed(a, b, account), { delivery });
    expect(await again.json()).toEqual({ delivery, status: "duplicate" });
    await answersUnder(b, owner, member.id);
    await deliverQueued("organization", renamed(b, c, account));
    await answersUnder(c, owner, member.id);
    // A late copy of the first rename (a racing duplicate past the dedupe marker): applied once already.
    const late = await consume(WEBHOOK_QUEUE, [messageOf("organization", renamed(a, b, account), delivery)]);
    expect(late.result.explicitAcks).toEqual(late.ids);
    expect((await readMember(c, owner, member.id)).status).toBe(200);
    await expectGone(b, owner, member.id);
  });

  it("A→B and B→C delivered in reverse order end at C (B→C waits for A→B)", async () => {
    const { a, b, c, owner, member, account } = await chainOfThree();
    const ab = messageOf("organization", renamed(a, b, account));
    const bc = messageOf("organization", renamed(b, c, account));

    expect((await consume(WEBHOOK_QUEUE, [bc])).result.explicitAcks).toHaveLength(1);
    // Not applied yet: the organization has not been B. It still answers under A.
    expect((await readMember(a, owner, member.id)).status).toBe(200);
    expect((await readMember(c, owner, member.id)).status).toBe(404);

    await consume(WEBHOOK_QUEUE, [ab]);
    expect((await readMember(c, owner, member.id)).status).toBe(200);
    expect((await rowsOf(c, owner)).map((r) => [r.org, r.prNumber])).toEqual([[c, 1]]);
    await expectGone(a, owner, member.id, { controlPlane: true });
    await expectGone(b, owner, member.id);
  });

  it("A→B and back B→A delivered in reverse order end at A", async () => {
    const { org: a, admin: owner, member } = await world([]);
    const b = another(a, "b");
    const account = accountOf(a);
    const there = messageOf("organization", renamed(a, b, account));
    const back = messageOf("organization", renamed(b, a, account));
    await consume(WEBHOOK_QUEUE, [back, there]);
    expect((await readMember(a, owner, member.id)).status).toBe(200);
    expect((await readMember(b, owner, member.id)).status).toBe(404);
  });

  it("a delivery that still carries the old login after the rename reaches the organization by its account id", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner } = await world([repo]);
    const b = another(a, "b");
    await deliverQueued("organization", renamed(a, b, accountOf(a)));
    expect((await exportPage(b, owner)).status).toBe(200);
    // Sent by GitHub before the rename, delivered after it.
    await deliverQueued("pull_request", mergedPr(a, repo, 5));
    await postEventsOk([review(b, "api", 5)]);
    expect((await rowsOf(b, owner)).map((r) => [r.org, r.prNumber])).toEqual([[b, 5]]);
  });
});

describe("a storage failure between the object's write and the directory's converges on retry", () => {
  it("D1 refuses the directory write: the message is retried, and the retry (already applied) writes it", async () => {
    const { org: a, admin: owner, member } = await world([]);
    const b = another(a, "b");
    const message = messageOf("organization", renamed(a, b, accountOf(a)));
    // Reads work, the write transaction fails: the object has applied the rename, D1 does not know it.
    const failed = await consume(WEBHOOK_QUEUE, [message], { DB: d1WritesFail() });
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
    expect((await readMember(b, owner, member.id)).status).toBe(404);
    expect((await readMember(a, owner, member.id)).status).toBe(404);

    const retried = await consume(WEBHOOK_QUEUE, [message], {}, 2);
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    expect((await readMember(b, owner, member.id)).status).toBe(200);
  });
});

describe("rows stored under the new login before the rename was applied join the organization", () => {
  /** A D1 that applies its first write batch and refuses the others (reads work). */
  const failsAfterFirstWrite = () => {
    let writes = 0;
    return {
      prepare: (query: string) => env.DB.prepare(query),
      batch: async (statements: D1PreparedStatement[]) => {
        writes += 1;
        if (writes > 1) throw new Error("D1_ERROR: injected storage fault [expected-fault]");
        return env.DB.batch(statements);
      },
    };
  };
  const byNumber = (rows: Record<string, unknown>[]) => [...rows].sort((x, y) => (x.prNumber as number) - (y.prNumber as number));
  /** Rows left under a key, on every shard (contract section 16). */
  const rowsLeftUnder = async (loginKey: string) => {
    const count = (db: D1Database, table: string) =>
      db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE org_key = ?1`).bind(loginKey).first<{ n: number }>();
    const counts = await Promise.all(
      ["pull_requests", "reviews", "findings", "ai_authorship"].map(async (table) =>
        [env.DB, env.ANALYTICS_2].reduce(async (sum, db) => (await sum) + ((await count(db, table))?.n ?? 0), Promise.resolve(0)),
      ),
    );
    return counts;
  };

  it("events under the new login appear with the old data, merged by record (newer wins); a retry and a duplicate add nothing", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org: a, admin: owner, member } = await world([repo]);
    await prs(a, owner, [[repo, 1]]);
    const pr3 = { type: "pull_request", org: a, repo: "api", prNumber: 3, author: "alice" };
    const pr3Data = { createdAt: "2026-10-01T10:00:00Z", mergedAt: "2026-10-02T10:00:00Z", linesDeleted: 2 };
    const f3 = { type: "finding", org: a, repo: "api", prNumber: 3, findingId: `f3-${a}`, createdAt: "2026-10-01T13:00:00Z" };
    await postEventsOk([
      { ...pr3, ...pr3Data, linesAdded: 10, updatedAt: "2026-10-02T00:00:00Z" },
      { ...review(a, "api", 3), reviewId: `r3-${a}` },
      { ...f3, posted: true, aiAddressed: false, feedback: null, updatedAt: "2026-10-03T00:00:00Z" },
    ]);
    expect(await exported(a, owner)).toHaveLength(2);

    // The reviewer follows GitHub faster than the queue: events under the new login B before the
    // rename is applied, stored under B's folded key.
    const b = another(a, "b");
    await postEventsOk([
      // Pull request 1: an older version of its data (the delivery's stays), a newer version of its
      // review (it completed earlier than first reported), and an authorship record.
      { ...pr3, ...pr3Data, org: b, prNumber: 1, author: "stale", linesAdded: 1, updatedAt: "2026-10-01T00:00:00Z" },
      { ...review(a, "api", 1), org: b, completedAt: "2026-09-29T09:00:00Z", updatedAt: "2026-10-04T00:00:00Z" },
      {
        type: "ai_authorship",
        org: b,
        repo: "api",
        prNumber: 1,
        sourceId: `ai1-${a}`,
        lines: 4,
        updatedAt: "2026-10-04T00:00:00Z",
      },
      // Pull request 2: only under B.
      {
        ...pr3,
        ...pr3Data,
        org: b,
        prNumber: 2,
        author: "octocat",
        mergedAt: "2026-10-03T10:00:00Z",
        linesAdded: 5,
        updatedAt: "2026-10-04T00:00:00Z",
      },
      review(b, "api", 2),
      // Pull request 3: newer data under B; an older version of its finding (A's stays).
      { ...pr3, ...pr3Data, org: b, linesAdded: 40, updatedAt: "2026-10-04T00:00:00Z" },
      { ...f3, org: b, posted: true, aiAddressed: true, feedback: null, updatedAt: "2026-10-02T00:00:00Z" },
    ]);

    // The rename: the directory is written, then moving the rows fails; the queue retries the
    // message, the object finds it applied, and the retry moves them.
    const message = messageOf("organization", renamed(a, b, accountOf(a)));
    // The directory write is DB's first; the rows move on whichever shards hold them, after it.
    const shardWritesFail = {
      prepare: (query: string) => env.ANALYTICS_2.prepare(query),
      batch: async () => {
        throw new Error("D1_ERROR: injected storage fault [expected-fault]");
      },
    };
    const failed = await consume(WEBHOOK_QUEUE, [message], { DB: failsAfterFirstWrite(), ANALYTICS_2: shardWritesFail });
    expect(failed.result.retryMessages.map((r) => r.msgId)).toEqual(failed.ids);
    expect((await readMember(b, owner, member.id)).status).toBe(200);
    const retried = await consume(WEBHOOK_QUEUE, [message], {}, 2);
    expect(retried.result.explicitAcks).toEqual(retried.ids);

    const expected = [
      {
        org: b,
        prNumber: 1,
        author: "Codertocat",
        linesAdded: 12,
        serviceFirstReviewedAt: "2026-09-29T09:00:00.000Z",
        totalAiLinesAuthored: 4,
      },
      { org: b, prNumber: 2, author: "octocat", mergedAt: "2026-10-03T10:00:00.000Z", linesAdded: 5 },
      { org: b, prNumber: 3, author: "alice", linesAdded: 40, numberOfServiceIssuesFlagged: 1, numberOfServiceIssuesFixed: 0 },
    ];
    const after = byNumber(await rowsOf(b, owner));
    expect(after).toEqual(expected.map((row) => expect.objectContaining(row)));
    expect(await rowsLeftUnder(b.toLowerCase())).toEqual([0, 0, 0, 0]);

    // The same message once more (a duplicate past the dedupe marker): nothing changes.
    const again = await consume(WEBHOOK_QUEUE, [message]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect(byNumber(await rowsOf(b, owner))).toEqual(after);
  });

  it("not when the new login's folded key is another organization's home: that organization's rows stay", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const first = await world([repo]);
    await prs(first.org, first.admin, [[repo, 1]]);
    const moved = another(first.org, "moved");
    await deliverQueued("organization", renamed(first.org, moved, accountOf(first.org)));
    await answersUnder(moved, first.admin, first.member.id);

    // Another organization renames itself to the login the first one left: its home stays its own,
    // and the first organization's rows under that login's folded key are the first one's.
    const second = await withPullRequest("web", 5);
    await deliverQueued("organization", renamed(second.org, first.org, accountOf(second.org)));
    await answersUnder(first.org, second.admin, second.member.id);

    expect((await rowsOf(first.org, second.admin)).map((r) => [r.org, r.repo, r.prNumber])).toEqual([[first.org, "web", 5]]);
    expect((await rowsOf(moved, first.admin)).map((r) => [r.org, r.repo, r.prNumber])).toEqual([[moved, "api", 1]]);
  });
});

describe("the old login taken by another organization: both stay independent", () => {
  it("a new installation for the old login gets its own home; data, members and lists are not mixed", async () => {
    const first = await withPullRequest("api", 1);
    const b = another(first.org, "b");
    await deliverQueued("organization", renamed(first.org, b, accountOf(first.org)));
    await answersUnder(b, first.admin, first.member.id);

    // Another GitHub account takes the old login and installs the app.
    const a = first.org;
    const newcomer = accountOf(`${a}-newcomer`);
    const newRepo = { id: repoId(), name: "api", private: false };
    const newAdmin = await person();
    await installNewcomer(a, newcomer, IDS + 2, newAdmin, [{ ...newRepo, node_id: "x", full_name: `${a}/api` }]);
    await adminOk("PUT", `/internal/v1/organizations/${a}`, {
      installationId: IDS + 2,
      installedAt: "2025-01-01T00:00:00Z",
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });
    await deliverQueued("pull_request", mergedPr(a, newRepo, 7, {}, newcomer));
    await postEventsOk([review(a, "api", 7)]);
    expect(await exported(a, newAdmin)).toHaveLength(1);

    // Each organization sees only its own rows and members.
    expect((await rowsOf(a, newAdmin)).map((r) => [r.org, r.prNumber])).toEqual([[a, 7]]);
    expect((await rowsOf(b, first.admin)).map((r) => [r.org, r.prNumber])).toEqual([[b, 1]]);
    expect((await readMember(a, newAdmin, first.member.id)).status).toBe(404);
    expect(await codeOf(await readMember(a, first.admin, newAdmin.id))).toBe("org_access_denied");
    expect(await codeOf(await readMember(b, newAdmin, first.admin.id))).toBe("org_access_denied");
    expect((await exportPage(a, first.admin)).status).toBe(403);
    expect((await organizations(newAdmin)).data.map((o) => o.org)).toEqual([a]);
    expect((await organizations(first.admin)).data.map((o) => o.org)).toEqual([b]);
    // The control plane's syncs under the old login reach the new organization.
    await adminOk("PUT", `/internal/v1/organizations/${a}/members/${first.member.id}`, {
      githubLogin: "joined-later",
      workEmail: "later@example.com",
      role: "member",
      seat: false,
      isBot: false,
    });
    expect((await readMember(a, newAdmin, first.member.id)).status).toBe(200);
    expect(await (await readMember(b, first.admin, first.member.id)).json()).toMatchObject({
      githubLogin: `gh${first.member.id}`,
    });
  });

  it("billing registers the old login for a new organization before GitHub does: the same home either way", async () => {
    const first = await world([]);
    const b = another(first.org, "b");
    await deliverQueued("organization", renamed(first.org, b, accountOf(first.org)));
    await answersUnder(b, first.admin, first.member.id);
    const a = first.org;
    await adminOk("PUT", `/internal/v1/organizations/${a}`, {
      installationId: IDS + 3,
      installedAt: "2025-01-01T00:00:00Z",
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });
    const newAdmin = await person();
    const newcomer = accountOf(`${a}-billing-first`);
    await installNewcomer(a, newcomer, IDS + 3, newAdmin);
    // Billing's Pro plan is the new organization's: its admin may export.
    expect((await exportPage(a, newAdmin)).status).toBe(200);
    expect((await readMember(b, first.admin, first.member.id)).status).toBe(200);
  });
});
