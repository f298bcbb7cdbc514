import { describe, expect, it } from "vitest";
import { MOVE_WAIT_SECONDS } from "../../src/webhooks/consumer";
import { WEBHOOK_QUEUE } from "../../src/webhooks/queues";
import { fakeInstallation } from "./github-fake";
import {
  adminOk,
  call,
  createKey,
  createUser,
  type MemberErrorBody,
  postEventsOk,
  unique,
  uniqueInstallationId,
} from "./helpers";
import {
  accountOf,
  billing,
  consume,
  deliverQueued,
  endMove,
  errorCode,
  eventually,
  example,
  exported,
  exportPage,
  install,
  installationOf,
  joins,
  markMoving,
  mergedPr,
  messageOf,
  type Person,
  person,
  prs,
  readMember,
  repoId,
  repositoryRenamed,
  review,
  world,
} from "./webhook-helpers";

/**
 * Contract section 9, the mapping: every rule observed through the public interfaces (member read,
 * analytics export) after a delivery went through the real queue and its consumer. Payloads are
 * GitHub's documented examples (@octokit/webhooks-examples), pointed at each test's own organization.
 */

/** A person whose GitHub user id is `id` (one the fake GitHub gave), with both keys. */
async function personWithId(id: string): Promise<Person> {
  await adminOk("PUT", `/internal/v1/users/${id}`, { githubLogin: `u${id}` });
  const [m, a] = await Promise.all([createKey(id, "members"), createKey(id, "analytics")]);
  return { id, membersKey: m.key, analyticsKey: a.key };
}

describe("installation", () => {
  // The one end-to-end test through the real queue and its consumer; every other test hands the
  // receiver's messages to the consumer directly (webhook-helpers.ts, `deliver`).
  // The real queue's consumer has the worker's bindings, sync with the fake GitHub on: the
  // organization is one the fake knows, and the member_added is a signal it confirms.
  it("created, through the real queue: the organization exists, free with no subscription, until billing says otherwise", async () => {
    const fake = await fakeInstallation();
    const org = fake.login;
    const { members } = await fake.setMembers([{ login: `adm-${org.slice(4)}`, role: "admin" }]);
    const github = members[0] as { id: number; login: string };
    const admin = await personWithId(String(github.id));
    const installed = example("installation", "created", org, 0, fake.accountId, fake.installationId);
    installed.repositories = [{ id: repoId(), name: "api", private: false, node_id: "x", full_name: `${org}/api` }];
    await deliverQueued("installation", installed, { throughQueue: true });
    const joined = example("organization", "member_added", org, 0, fake.accountId, fake.installationId);
    const membership = joined.membership as { role: string; user: Record<string, unknown> };
    membership.role = "admin";
    membership.user = { ...membership.user, id: github.id, login: github.login, type: "User" };
    await deliverQueued("organization", joined, { throughQueue: true });
    await eventually(async () => expect((await readMember(org, admin, admin.id)).status).toBe(200));
    const free = await exportPage(org, admin);
    expect(free.status).toBe(403);
    expect(await errorCode(free)).toBe("The analytics export requires the organization to be on the Pro plan.");
    await billing(org, "pro", fake.installationId);
    expect((await exportPage(org, admin)).status).toBe(200);
    expect((await fake.stats()).drifts).toEqual([]);
  });

  it("created after billing set a plan: the plan and subscription stay", async () => {
    const org = unique("gh");
    const admin = await person();
    // Billing names GitHub's installation id: the installation GitHub then announces is that one.
    const installation = uniqueInstallationId();
    await billing(org, "pro", installation);
    await install(org, [], installation);
    await joins(org, admin, "admin");
    expect((await readMember(org, admin, admin.id)).status).toBe(200);
    // The same installation event again (redelivered by hand under a new id): the plan still stays.
    await install(org, [], installation);
    expect((await exportPage(org, admin)).status).toBe(200);
  });

  it("deleted: 404 on both interfaces with the data kept; a new installation brings it back", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org, admin, member } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    const payload = example("installation", "deleted", org);
    (payload.installation as Record<string, unknown>).id = installationOf(org);
    await deliverQueued("installation", payload);
    expect((await readMember(org, admin, member.id)).status).toBe(404);
    expect((await (await readMember(org, admin, member.id)).json()) as MemberErrorBody).toMatchObject({
      error: { code: "org_not_found" },
    });
    expect((await exportPage(org, admin)).status).toBe(404);

    await install(org, [repo]);
    expect((await readMember(org, admin, member.id)).status).toBe(200);
    expect(await exported(org, admin)).toHaveLength(1);
  });

  it("created for a personal account, sync off: its owner is the organization's admin member (contract section 17)", async () => {
    const owner = await person();
    const login = `user${owner.id}`;
    const installationId = uniqueInstallationId();
    await billing(login, "pro", installationId);
    // The account is the user: GitHub's id of the account is the owner's user id.
    const payload = example("installation", "created", login, 0, Number(owner.id), installationId);
    (payload.installation as { account: Record<string, unknown> }).account.type = "User";
    await deliverQueued("installation", payload);
    const read = await readMember(login, owner, owner.id);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({
      githubUserId: owner.id,
      githubLogin: login,
      role: "admin",
      seat: false,
      isBot: false,
      lastActivityAt: null,
    });
  });

  it("created for an organization: nobody becomes a member from the payload", async () => {
    const org = unique("gh");
    const installationId = uniqueInstallationId();
    const admin = await person();
    await billing(org, "pro", installationId);
    const payload = example("installation", "created", org, 0, Number(admin.id), installationId);
    (payload.installation as { account: Record<string, unknown> }).account.type = "Organization";
    await deliverQueued("installation", payload);
    expect((await readMember(org, admin, admin.id)).status).toBe(403);
  });

  it("suspend / unsuspend: blocked true / false", async () => {
    const { org, admin, member } = await world([]);
    await deliverQueued("installation", example("installation", "suspend", org));
    expect((await readMember(org, admin, member.id)).status).toBe(403);
    expect((await (await exportPage(org, admin)).json()) as { error: string }).toEqual({
      error: "The installation of this organization is blocked.",
    });
    await deliverQueued("installation", example("installation", "unsuspend", org));
    expect((await readMember(org, admin, member.id)).status).toBe(200);
  });
});

describe("issue 18: an installation's suspension, and repositories that arrive", () => {
  it("suspend / unsuspend apply only to the installation they name", async () => {
    const { org, admin, member } = await world([]);
    const other = installationOf(org) + 1;
    await deliverQueued("installation", example("installation", "suspend", org, 0, accountOf(org), other));
    expect((await readMember(org, admin, member.id)).status).toBe(200);
    await deliverQueued("installation", example("installation", "suspend", org));
    expect((await readMember(org, admin, member.id)).status).toBe(403);
    await deliverQueued("installation", example("installation", "unsuspend", org, 0, accountOf(org), other));
    expect((await readMember(org, admin, member.id)).status).toBe(403);
    await deliverQueued("installation", example("installation", "unsuspend", org));
    expect((await readMember(org, admin, member.id)).status).toBe(200);
  });

  it("repository.created: the new repository joins the installation, and members see its pull requests", async () => {
    const { org, member } = await world([]);
    const repo = { id: repoId(), name: "fresh", private: false };
    const created = example("repository", "publicized", org);
    created.action = "created";
    Object.assign(created.repository as object, repo);
    await deliverQueued("repository", created);
    await deliverQueued("pull_request", mergedPr(org, repo, 1));
    await postEventsOk([review(org, "fresh", 1)]);
    expect((await exported(org, member)).map((r) => r.repo)).toEqual(["fresh"]);
  });

  it("repository.transferred: the repository joins its new owner (and leaves the previous one)", async () => {
    const previous = await world([]);
    const { org, member } = await world([]);
    const repo = { id: repoId(), name: "arrived", private: false };
    const transferred = example("repository", "transferred", org);
    Object.assign(transferred.repository as object, repo);
    transferred.changes = { owner: { from: { organization: { login: previous.org, id: accountOf(previous.org) } } } };
    await deliverQueued("repository", transferred);
    await deliverQueued("pull_request", mergedPr(org, repo, 1));
    await postEventsOk([review(org, "arrived", 1)]);
    expect((await exported(org, member)).map((r) => r.repo)).toEqual(["arrived"]);
    expect((await exportPage(previous.org, previous.admin, "&repo=arrived")).status).toBe(403);
  });
});

describe("organization members", () => {
  it("member_added: role from GitHub's membership role, seat false, isBot from the account type, no workEmail", async () => {
    const { org, admin, member } = await world([]);
    const adminRead = (await (await readMember(org, member, admin.id)).json()) as Record<string, unknown>;
    expect(adminRead).toEqual({
      githubUserId: admin.id,
      githubLogin: `gh${admin.id}`,
      role: "admin",
      seat: false,
      isBot: false,
      lastActivityAt: null,
    });
    expect(adminRead).not.toHaveProperty("workEmail");
    const bot = { id: await createUser() };
    await joins(org, bot, "member", "Bot");
    expect(await (await readMember(org, admin, bot.id)).json()).toMatchObject({ role: "member", isBot: true, seat: false });
  });

  it("a sync provides workEmail; a later member_added keeps the service's role, seat and e-mail", async () => {
    const { org, admin, member } = await world([]);
    await adminOk("PUT", `/internal/v1/organizations/${org}/members/${member.id}`, {
      githubLogin: `gh${member.id}`,
      workEmail: "m@example.com",
      role: "viewer",
      seat: true,
      isBot: false,
    });
    await joins(org, member, "admin");
    // Delivered after the redelivery: once it shows, the queue has applied the redelivery too.
    const later = { id: await createUser() };
    await joins(org, later, "member");
    expect((await readMember(org, admin, later.id)).status).toBe(200);
    expect(await (await readMember(org, admin, member.id)).json()).toMatchObject({
      workEmail: "m@example.com",
      role: "viewer",
      seat: true,
    });
  });

  it("member_removed: the member is gone", async () => {
    const { org, admin, member } = await world([]);
    const payload = example("organization", "member_added", org);
    payload.action = "member_removed";
    (payload.membership as { user: Record<string, unknown> }).user.id = Number(member.id);
    await deliverQueued("organization", payload);
    expect((await readMember(org, admin, member.id)).status).toBe(404);
    expect((await (await readMember(org, admin, member.id)).json()) as MemberErrorBody).toMatchObject({
      error: { code: "member_not_found" },
    });
  });
});

describe("repositories", () => {
  it("installation_repositories removed: rows no longer exported, repo= is 403; added: back", async () => {
    const api = { id: repoId(), name: "api", private: false };
    const web = { id: repoId(), name: "web", private: false };
    const { org, admin } = await world([api, web]);
    await prs(org, admin, [
      [api, 1],
      [web, 2],
    ]);
    const removed = example("installation_repositories", "removed", org);
    removed.repositories_removed = [{ ...web, full_name: `${org}/web`, node_id: "x" }];
    await deliverQueued("installation_repositories", removed);
    expect((await exported(org, admin)).map((r) => r.repo)).toEqual(["api"]);
    expect((await exportPage(org, admin, "&repo=web")).status).toBe(403);

    const added = example("installation_repositories", "added", org);
    added.repositories_added = [{ ...web, full_name: `${org}/web`, node_id: "x" }];
    await deliverQueued("installation_repositories", added);
    expect(await exported(org, admin)).toHaveLength(2);
  });

  it("repository privatized / publicized: a plain member loses / regains the rows", async () => {
    const repo = { id: repoId(), name: "lib", private: false };
    const { org, admin, member } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    expect(await exported(org, member)).toHaveLength(1);
    const privatized = example("repository", "privatized", org);
    Object.assign(privatized.repository as object, { id: repo.id, name: "lib", private: true });
    await deliverQueued("repository", privatized);
    expect(await exported(org, member)).toHaveLength(0);
    expect((await exportPage(org, member, "&repo=lib")).status).toBe(403);
    expect(await exported(org, admin)).toHaveLength(1);

    const publicized = example("repository", "publicized", org);
    Object.assign(publicized.repository as object, { id: repo.id, name: "lib", private: false });
    await deliverQueued("repository", publicized);
    expect(await exported(org, member)).toHaveLength(1);
  });

  it("member added / removed: a collaborator of a private repository sees its rows, then does not", async () => {
    const secret = { id: repoId(), name: "secret", private: true };
    const { org, admin, member } = await world([secret]);
    await prs(org, admin, [[secret, 1]]);
    expect(await exported(org, member)).toHaveLength(0);
    const added = example("member", "added", org);
    Object.assign(added.repository as object, { id: secret.id, name: "secret", private: true });
    (added.member as Record<string, unknown>).id = Number(member.id);
    await deliverQueued("member", added);
    expect(await exported(org, member, "&repo=secret")).toHaveLength(1);

    const removed = structuredClone(added);
    removed.action = "removed";
    await deliverQueued("member", removed);
    expect((await exportPage(org, member, "&repo=secret")).status).toBe(403);
  });

  it("renamed: rows, access and collaborators follow to the new name; the old name matches nothing", async () => {
    const repo = { id: repoId(), name: "old-name", private: true };
    const { org, admin, member } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    const collaborator = example("member", "added", org);
    Object.assign(collaborator.repository as object, { id: repo.id, name: "old-name", private: true });
    (collaborator.member as Record<string, unknown>).id = Number(member.id);
    await deliverQueued("member", collaborator);
    expect(await exported(org, member)).toHaveLength(1);

    const renamed = repositoryRenamed(org, { ...repo, private: true }, "old-name", "New-Name");
    await deliverQueued("repository", renamed);
    expect((await exported(org, admin)).map((r) => r.repo)).toEqual(["New-Name"]);
    expect(await exported(org, member, "&repo=new-name")).toHaveLength(1);
    expect((await exportPage(org, admin, "&repo=old-name")).status).toBe(403);
    expect((await exportPage(org, member, "&repo=old-name")).status).toBe(403);

    // A pull request delivery that still carries the old name lands under the current one.
    await deliverQueued("pull_request", mergedPr(org, { ...repo, name: "old-name" }, 2));
    await postEventsOk([review(org, "New-Name", 2)]);
    expect((await exported(org, admin)).map((r) => `${r.repo}#${r.prNumber}`)).toEqual(["New-Name#2", "New-Name#1"]);
  });

  it("renamed while the organization moves between shards: the message waits as a new one, attempts unspent, then applies", async () => {
    const repo = { id: repoId(), name: "old-name", private: false };
    const { org, admin } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    const home = org.toLowerCase();
    // A move has begun (the placement names its target): no rows may move under it.
    await markMoving(home);
    const renamed = repositoryRenamed(org, repo, "old-name", "New-Name");
    const body = messageOf("repository", renamed);
    const sent: { body: unknown; options: unknown }[] = [];
    const queue = {
      send: async (b: unknown, options: unknown) => {
        sent.push({ body: b, options });
      },
      sendBatch: async () => {},
    };
    // Its fifth attempt, the last before the dead-letter queue: it is sent again, not retried.
    const waiting = await consume(WEBHOOK_QUEUE, [body], { WEBHOOKS: queue }, 5);
    expect(waiting.result.explicitAcks).toEqual(waiting.ids);
    expect(waiting.result.retryMessages).toEqual([]);
    expect(sent).toEqual([{ body, options: { contentType: "json", delaySeconds: MOVE_WAIT_SECONDS } }]);
    // The move ends; the message sent again applies, rows included.
    await endMove(home);
    const again = await consume(WEBHOOK_QUEUE, [sent[0]?.body]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect((await exported(org, admin)).map((r) => r.repo)).toEqual(["New-Name"]);
  });

  it("renamed after the reviewer already used the new name: the two rows of a pull request become one", async () => {
    const repo = { id: repoId(), name: "before", private: false };
    const { org, admin } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    // The reviewer follows the rename before the webhook is applied: a review under the new name.
    await postEventsOk([
      {
        ...review(org, "after", 1),
        reviewId: "late-review",
        completedAt: "2026-09-30T08:00:00Z",
        updatedAt: "2026-09-30T08:00:00Z",
      },
    ]);
    const renamed = repositoryRenamed(org, repo, "before", "after");
    await deliverQueued("repository", renamed);
    expect((await exported(org, admin)).map((r) => r.repo)).toEqual(["after"]);
    const [row] = ((await (await exportPage(org, admin)).json()) as { data: Record<string, unknown>[] }).data;
    // One row, with the pull request's data and both reviews (the earlier one is the first review).
    expect(row).toMatchObject({
      repo: "after",
      prNumber: 1,
      author: "Codertocat",
      serviceFirstReviewedAt: "2026-09-30T08:00:00.000Z",
    });
    expect((await exportPage(org, admin, "&repo=before")).status).toBe(403);
  });

  // The merged row's review span (which the export's walk reads, and which gives
  // serviceFirstReviewedAt) must include the reviews it took over and the merge it may have taken.
  describe.each([
    ["reviewed later under the new name", true],
    ["not reviewed under the new name", false],
  ])("renamed when the pull request was reviewed long ago under the old name and %s", (_, reviewedLater) => {
    const windowRows = async (org: string, who: Person, start: string, end: string) => {
      const res = await call(`/api/analytics/v1/prs?org=${org}&startDate=${start}&endDate=${end}`, {
        headers: { Authorization: `Bearer ${who.analyticsKey}` },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Record<string, unknown>[] }).data;
    };

    it("a window holding only the old review lists the merged row, with its first review and metrics", async () => {
      const repo = { id: repoId(), name: "before", private: false };
      const { org, admin } = await world([repo]);
      await deliverQueued(
        "pull_request",
        mergedPr(org, repo, 1, {
          created_at: "2026-08-01T10:00:00Z",
          merged_at: "2026-08-03T10:00:00Z",
          updated_at: "2026-08-03T10:00:01Z",
        }),
      );
      const old = { org, repo: "before", prNumber: 1, updatedAt: "2026-08-02T13:00:00Z" };
      await postEventsOk([
        { ...old, type: "review", reviewId: "old-review", status: "completed", completedAt: "2026-08-02T12:00:00Z" },
        {
          ...old,
          type: "finding",
          findingId: "old-finding",
          createdAt: "2026-08-02T12:30:00Z",
          posted: true,
          aiAddressed: true,
          feedback: null,
        },
      ]);
      expect(await windowRows(org, admin, "2026-07-20", "2026-08-31")).toEqual([expect.objectContaining({ repo: "before" })]);
      // The reviewer follows the rename before the webhook is applied: rows under the new name.
      const now = { org, repo: "after", prNumber: 1, updatedAt: "2026-10-05T09:00:00Z" };
      await postEventsOk([
        ...(reviewedLater
          ? [{ ...now, type: "review", reviewId: "new-review", status: "completed", completedAt: "2026-10-05T09:00:00Z" }]
          : []),
        {
          ...now,
          type: "finding",
          findingId: "new-finding",
          createdAt: "2026-10-05T09:00:00Z",
          posted: true,
          aiAddressed: false,
          feedback: null,
        },
        { ...now, type: "ai_authorship", sourceId: "new-ai", lines: 5 },
      ]);
      const renamed = repositoryRenamed(org, repo, "before", "after");
      await deliverQueued("repository", renamed);
      // The old name matches nothing once its D1 rows have moved.
      expect((await exportPage(org, admin, "&repo=before")).status).toBe(403);

      const expected = {
        repo: "after",
        prNumber: 1,
        author: "Codertocat",
        createdAt: "2026-08-01T10:00:00.000Z",
        mergedAt: "2026-08-03T10:00:00.000Z",
        linesAdded: 12,
        linesDeleted: 3,
        numberOfServiceIssuesFlagged: 1,
        numberOfServiceIssuesFixed: 1,
        serviceFirstReviewedAt: "2026-08-02T12:00:00.000Z",
        totalAiLinesAuthored: 5,
      };
      // A wide window (the walk over the review span) and a one-day one (the reviews themselves).
      expect(await windowRows(org, admin, "2026-07-20", "2026-08-31")).toEqual([expect.objectContaining(expected)]);
      expect(await windowRows(org, admin, "2026-08-02", "2026-08-02")).toEqual([expect.objectContaining(expected)]);
      // A review after the merge reaches the row from a window long after it; an unreviewed name adds none.
      expect(await windowRows(org, admin, "2026-10-01", "2026-10-31")).toEqual(
        reviewedLater
          ? [expect.objectContaining({ ...expected, numberOfServiceIssuesFlagged: 1, numberOfServiceIssuesFixed: 0 })]
          : [],
      );
    });
  });

  it("deleted, or transferred away: as removed", async () => {
    const gone = { id: repoId(), name: "gone", private: false };
    const moved = { id: repoId(), name: "moved", private: false };
    const kept = { id: repoId(), name: "kept", private: false };
    const { org, admin } = await world([gone, moved, kept]);
    await prs(org, admin, [
      [gone, 1],
      [moved, 2],
      [kept, 3],
    ]);
    // No documented example of repository.deleted: the publicized one with the action changed.
    const deleted = example("repository", "publicized", org);
    deleted.action = "deleted";
    Object.assign(deleted.repository as object, { id: gone.id, name: "gone" });
    await deliverQueued("repository", deleted);
    const transferred = example("repository", "transferred", unique("elsewhere"));
    Object.assign(transferred.repository as object, { id: moved.id, name: "moved" });
    transferred.changes = { owner: { from: { organization: { login: org } } } };
    await deliverQueued("repository", transferred);
    expect((await exported(org, admin)).map((r) => r.repo)).toEqual(["kept"]);
    expect((await exportPage(org, admin, "&repo=gone")).status).toBe(403);
    expect((await exportPage(org, admin, "&repo=moved")).status).toBe(403);
  });
});

describe("pull requests", () => {
  it("author, createdAt, mergedAt and lines from additions/deletions", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org, admin } = await world([repo]);
    await prs(org, admin, [[repo, 9]]);
    const [row] = ((await (await exportPage(org, admin)).json()) as { data: Record<string, unknown>[] }).data;
    expect(row).toMatchObject({
      org,
      repo: "api",
      prNumber: 9,
      author: "Codertocat",
      createdAt: "2026-10-01T10:00:00.000Z",
      mergedAt: "2026-10-02T10:00:00.000Z",
      linesAdded: 12,
      linesDeleted: 3,
    });
  });

  it.each(["opened", "synchronize", "reopened", "ready_for_review", "labeled", "assigned"])(
    "%s carries the pull request: an unmerged one is stored but not exported, until a merge arrives",
    async (action) => {
      const repo = { id: repoId(), name: "api", private: false };
      const { org, admin } = await world([repo]);
      const payload = example("pull_request", action, org);
      Object.assign(payload.repository as object, { id: repo.id, name: "api" });
      Object.assign(payload.pull_request as object, { number: 5, updated_at: "2026-10-01T11:00:00Z", additions: 77 });
      await deliverQueued("pull_request", payload);
      await postEventsOk([review(org, "api", 5)]);
      await deliverQueued("pull_request", mergedPr(org, repo, 6));
      await postEventsOk([review(org, "api", 6)]);
      expect((await exported(org, admin)).map((r) => r.prNumber)).toEqual([6]);
      // A merge is final (contract section 17): even a merged delivery older than the stored state
      // merges it, whatever the arrival order; the newer state's other fields stay.
      await deliverQueued("pull_request", mergedPr(org, repo, 5, { updated_at: "2026-10-01T10:30:00Z", additions: 999 }));
      const rows = await exported(org, admin);
      expect(rows.map((r) => [r.prNumber, r.linesAdded])).toEqual([
        [6, 12],
        [5, 77],
      ]);
    },
  );

  it("out of order: the newest updated_at wins whatever the arrival order; a redelivery changes nothing", async () => {
    const repo = { id: repoId(), name: "api", private: false };
    const { org, admin } = await world([repo]);
    const merged = mergedPr(org, repo, 3, { updated_at: "2026-10-02T10:00:01Z", additions: 40 });
    const older = example("pull_request", "opened", org);
    Object.assign(older.repository as object, { id: repo.id, name: "api" });
    Object.assign(older.pull_request as object, { number: 3, updated_at: "2026-10-01T09:00:00Z", additions: 1 });
    await deliverQueued("pull_request", merged);
    await postEventsOk([review(org, "api", 3)]);
    expect(await exported(org, admin)).toHaveLength(1);
    await deliverQueued("pull_request", older);
    await deliverQueued("pull_request", merged); // a redelivery under a new id (by hand)
    await deliverQueued("pull_request", mergedPr(org, repo, 4));
    await postEventsOk([review(org, "api", 4)]);
    expect(await exported(org, admin)).toHaveLength(2);
    const rows = ((await (await exportPage(org, admin, "&repo=api")).json()) as { data: Record<string, unknown>[] }).data;
    expect(rows.find((r) => r.prNumber === 3)).toMatchObject({ linesAdded: 40, mergedAt: "2026-10-02T10:00:00.000Z" });
  });
});

describe("GitHub's member changes reach the audit log and the members' organizations lists", () => {
  const auditLog = async (org: string, who: { membersKey: string }, githubUserId: string) => {
    const res = await call(`/api/v1/organizations/${org}/audit-log?githubUserId=${githubUserId}`, {
      headers: { Authorization: `Bearer ${who.membersKey}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: Record<string, unknown>[] }).data;
  };
  const organizations = async (who: { membersKey: string }) => {
    const res = await call("/api/v1/organizations?limit=100", { headers: { Authorization: `Bearer ${who.membersKey}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { org: string }[] }).data.map((o) => o.org.toLowerCase());
  };

  it("member_added and member_removed write entries with source github and no actor; the member's list follows", async () => {
    const { org, admin, member } = await world([]);
    const added = await auditLog(org, admin, member.id);
    expect(added).toEqual([
      expect.objectContaining({
        action: "member.added",
        source: "github",
        actor: null,
        before: null,
        after: { seat: false, role: "member" },
      }),
    ]);
    expect(await organizations(member)).toContain(org.toLowerCase());

    const payload = example("organization", "member_added", org);
    payload.action = "member_removed";
    (payload.membership as { user: Record<string, unknown> }).user.id = Number(member.id);
    await deliverQueued("organization", payload);
    expect((await readMember(org, admin, member.id)).status).toBe(404);
    const log = await auditLog(org, admin, member.id);
    expect(log.map((e) => [e.action, e.source])).toEqual([
      ["member.removed", "github"],
      ["member.added", "github"],
    ]);
    expect(await organizations(member)).not.toContain(org.toLowerCase());
  });

  it("a redelivered member_added changes nothing and writes no second entry", async () => {
    const { org, admin, member } = await world([]);
    await joins(org, member, "member");
    const later = await person();
    await joins(org, later, "member");
    expect((await readMember(org, admin, later.id)).status).toBe(200);
    expect((await auditLog(org, admin, member.id)).map((e) => e.action)).toEqual(["member.added"]);
  });
});
