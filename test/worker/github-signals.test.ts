import { introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { foldName } from "../../src/lib/names";
import type { SyncStatus } from "../../src/schemas/sync";
import { syncInstanceId } from "../../src/sync/start";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { type Fake, githubOrganization } from "./github-organization";
import { admin, adminOk, env } from "./helpers";
import { consume, deliverQueued, example, exportPage, messageOf, type Person, readMember, world } from "./webhook-helpers";

/**
 * Contract section 17, webhooks as signals: GitHub keeps no order between deliveries of
 * memberships, collaborators and repositories. With sync on, such a delivery makes the service
 * read the entity's state from GitHub (the fake) and store that, so reordered and duplicated
 * deliveries end at GitHub's state. With sync off, payload times order visibility and suspension.
 */

/** A delivery of the fake's organization, sent by its installation. */
const of = (fake: Fake, event: string, action: string, index = 0) =>
  example(event, action, fake.login, index, fake.accountId, fake.installationId);

/** `repository` privatized / publicized from GitHub's examples: index 0 of each is 15:21:02 / 15:21:03. */
function visibility(fake: Fake, action: "privatized" | "publicized", repo: { id: number; name: string }) {
  const payload = of(fake, "repository", action);
  Object.assign(payload.repository as object, { id: repo.id, name: repo.name, private: action === "privatized" });
  return payload;
}

/** `organization` member_added / member_removed of a GitHub user. */
function membership(fake: Fake, action: "member_added" | "member_removed", user: { id: number; login: string }) {
  const payload = of(fake, "organization", "member_added");
  payload.action = action;
  const m = payload.membership as { role: string; user: Record<string, unknown> };
  m.role = "member";
  m.user = { ...m.user, id: user.id, login: user.login, type: "User" };
  return payload;
}

/** `member` added / removed (a repository collaborator). */
function collaborator(fake: Fake, action: "added" | "removed", repo: { id: number; name: string }, userId: string) {
  const payload = of(fake, "member", "added");
  payload.action = action;
  Object.assign(payload.repository as object, { id: repo.id, name: repo.name, private: true });
  (payload.member as Record<string, unknown>).id = Number(userId);
  return payload;
}

const SYNC = { sync: true } as const;

/**
 * Until the running sync has recorded GitHub's rate limit (its instance then sleeps): a condition
 * polled, not a delay, and no count of tries either (200 tries were a fixed 10 s in disguise, short
 * on a loaded machine): the test's own budget is the only bound.
 */
async function rateLimited(org: string): Promise<void> {
  for (;;) {
    const { running } = await adminOk<SyncStatus>("GET", `/internal/v1/organizations/${org}/sync`);
    if (running?.lastError?.message.includes("rate limit")) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
/** A plain member's export of one repository: 200 when it is visible to them, 403 when not. */
const sees = async (org: string, member: Person, repo: string) => (await exportPage(org, member, `&repo=${repo}`)).status;

describe("with sync on, a signal's entity is read back from GitHub", () => {
  it("repository: publicized then privatized out of order, and a duplicate, end at GitHub's visibility", async () => {
    const { fake, org, member } = await githubOrganization();
    const { id } = await fake.setRepo("api", { private: false });
    const api = { id, name: "api" };
    // The repro: publicized (15:21:03) arrives first, privatized (15:21:02) late, then again.
    await deliverQueued("repository", visibility(fake, "publicized", api), SYNC);
    await deliverQueued("repository", visibility(fake, "privatized", api), SYNC);
    await deliverQueued("repository", visibility(fake, "privatized", api), SYNC);
    expect(await sees(org, member, "api")).toBe(200);

    // GitHub made it private again; that delivery has not arrived, a late publicized does: private.
    await fake.setRepo("api", { private: true });
    await deliverQueued("repository", visibility(fake, "publicized", api), SYNC);
    expect(await sees(org, member, "api")).toBe(403);
    const reads = (await fake.stats()).requests.filter((r) => r.path.startsWith("/installation/repositories"));
    expect(reads).toHaveLength(4);
  });

  it("membership: a late member_added after member_removed, while GitHub says not a member, leaves them out", async () => {
    const { fake, org, admin, tag } = await githubOrganization();
    const eve = { id: (await fake.setUser(`eve-${tag}`, "User")).id, login: `eve-${tag}` };
    await deliverQueued("organization", membership(fake, "member_removed", eve), SYNC);
    await deliverQueued("organization", membership(fake, "member_added", eve), SYNC);
    expect((await readMember(org, admin, String(eve.id))).status).toBe(404);

    // GitHub adds her as an admin: a member_added (its payload says member) stores GitHub's role.
    await fake.setMembers([
      { login: `ada-${tag}`, role: "admin" },
      { login: `max-${tag}`, role: "member" },
      { login: eve.login, role: "admin" },
    ]);
    await deliverQueued("organization", membership(fake, "member_added", eve), SYNC);
    expect(await (await readMember(org, admin, String(eve.id))).json()).toMatchObject({ role: "admin", seat: false });
    // A member_removed delivered late, while she still is one: she stays.
    await deliverQueued("organization", membership(fake, "member_removed", eve), SYNC);
    expect((await readMember(org, admin, String(eve.id))).status).toBe(200);
  });

  it("collaborator: a late member added after removed, while GitHub lists no such collaborator, gives no access", async () => {
    const { fake, org, member, maxLogin } = await githubOrganization();
    const { id } = await fake.setRepo("infra", { private: true, collaborators: [{ login: maxLogin }] });
    const infra = { id, name: "infra" };
    await deliverQueued(
      "repository",
      { ...of(fake, "repository", "created", 0), repository: repoPayload(fake, infra, true) },
      SYNC,
    );
    await deliverQueued("member", collaborator(fake, "added", infra, member.id), SYNC);
    expect(await sees(org, member, "infra")).toBe(200);

    await fake.setRepo("infra", { private: true, collaborators: [] });
    await deliverQueued("member", collaborator(fake, "removed", infra, member.id), SYNC);
    await deliverQueued("member", collaborator(fake, "added", infra, member.id), SYNC);
    expect(await sees(org, member, "infra")).toBe(403);
  });

  it("a GitHub failure reading the state retries the message and applies nothing from its payload", async () => {
    const { fake, org, admin, tag } = await githubOrganization();
    const eve = { id: (await fake.setUser(`eve-${tag}`, "User")).id, login: `eve-${tag}` };
    // A limit longer than a signal waits in place: the message fails and is retried by the queue.
    await fake.inject({ kind: "secondary", status: 429, retryAfter: 3600, match: "/memberships/" });
    const message = messageOf("organization", membership(fake, "member_added", eve));
    const github = { GITHUB_APP_ID: env.GITHUB_APP_ID };
    const failed = await consume(WEBHOOK_QUEUE, [message], github);
    expect(failed.result.retryMessages).toHaveLength(1);
    expect((await readMember(org, admin, String(eve.id))).status).toBe(404);
    // The retry (its ledger entry already written) still asks GitHub: not a member, nothing stored.
    const retried = await consume(WEBHOOK_QUEUE, [message], github, 2);
    expect(retried.result.explicitAcks).toHaveLength(1);
    expect((await readMember(org, admin, String(eve.id))).status).toBe(404);
    expect((await fake.stats()).requests.filter((r) => r.path.includes("/memberships/"))).toHaveLength(2);
  });
});

/** A repository object of a payload naming the fake's repository. */
function repoPayload(fake: Fake, repo: { id: number; name: string }, isPrivate: boolean) {
  const payload = of(fake, "repository", "created");
  return { ...(payload.repository as object), id: repo.id, name: repo.name, private: isPrivate };
}

describe("with sync off, payload times order what the payload alone cannot", () => {
  it("repository: privatized (15:21:02) delivered after publicized (15:21:03) leaves it public", async () => {
    const repo = { id: 900_000_000 + Math.floor(Math.random() * 99_000_000), name: "lib", private: true };
    const { org, member } = await world([repo]);
    const publicized = example("repository", "publicized", org);
    Object.assign(publicized.repository as object, { id: repo.id, name: repo.name, private: false });
    const privatized = example("repository", "privatized", org);
    Object.assign(privatized.repository as object, { id: repo.id, name: repo.name, private: true });
    await deliverQueued("repository", publicized);
    await deliverQueued("repository", privatized);
    expect(await sees(org, member, "lib")).toBe(200);
  });

  it("suspension: a suspend older than the unsuspend applied before it changes nothing", async () => {
    const { org, admin } = await world([]);
    const unsuspend = example("installation", "unsuspend", org);
    Object.assign(unsuspend.installation as object, { updated_at: "2026-03-02T10:00:00Z", suspended_at: null });
    const suspend = example("installation", "suspend", org);
    Object.assign(suspend.installation as object, { updated_at: "2026-03-01T10:00:00Z", suspended_at: "2026-03-01T10:00:00Z" });
    await deliverQueued("installation", unsuspend);
    await deliverQueued("installation", suspend);
    expect((await readMember(org, admin, admin.id)).status).toBe(200);
    // A newer suspend applies.
    Object.assign(suspend.installation as object, { updated_at: "2026-03-03T10:00:00Z", suspended_at: "2026-03-03T10:00:00Z" });
    await deliverQueued("installation", suspend);
    expect((await readMember(org, admin, admin.id)).status).toBe(403);
  });
});

describe("a sync left running (the daily reconciliation itself: fresh/daily-reconciliation.test.ts)", () => {
  it("a sync whose Workflow instance was terminated is closed as failed by the next start, which then runs", async () => {
    const { fake, org } = await githubOrganization();
    // GitHub's limit longer than the client waits: the first step sleeps for an hour.
    await fake.inject({ kind: "secondary", status: 429, retryAfter: 3600, match: "/installation/repositories" });
    const first = await introspectWorkflowInstance(env.SYNC, syncInstanceId(foldName(org), 1));
    try {
      expect((await admin("POST", `/internal/v1/organizations/${org}/sync`)).status).toBe(202);
      await rateLimited(org);
      // Killed from outside (an operator, a platform failure): the row stays running.
      await (await env.SYNC.get(syncInstanceId(foldName(org), 1))).terminate();
      await first.waitForStatus("terminated");
    } finally {
      await first.dispose();
    }
    // The next start finds the row's instance gone: the row is closed as failed and sync 2 starts.
    const second = await introspectWorkflowInstance(env.SYNC, syncInstanceId(foldName(org), 2));
    try {
      const res = await admin("POST", `/internal/v1/organizations/${org}/sync`);
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ id: 2, trigger: "api", state: "running" });
      const { last } = await adminOk<SyncStatus>("GET", `/internal/v1/organizations/${org}/sync`);
      expect(last).toMatchObject({ id: 1, state: "failed", lastError: { step: "sync" } });
      expect(last?.lastError?.message).toContain("Workflow instance");
      // And sync 2 runs to its end: the organization is not left stuck behind the dead one.
      await second.waitForStatus("complete");
    } finally {
      await second.dispose();
    }
    const { running, last } = await adminOk<SyncStatus>("GET", `/internal/v1/organizations/${org}/sync`);
    expect(running).toBeNull();
    expect(last).toMatchObject({
      id: 2,
      state: "complete",
      steps: { members: { state: "done" }, repositories: { state: "done" } },
    });
  });

  it("a sync whose Workflow instance was left paused is resumed by the next start, which answers 409", async () => {
    const { fake, org } = await githubOrganization();
    // The first step waits out an hour-long limit (the instance sleeps), then it is paused from outside.
    await fake.inject({ kind: "secondary", status: 429, retryAfter: 3600, match: "/installation/repositories" });
    const id = syncInstanceId(foldName(org), 1);
    const observed = await introspectWorkflowInstance(env.SYNC, id);
    try {
      expect((await admin("POST", `/internal/v1/organizations/${org}/sync`)).status).toBe(202);
      await rateLimited(org);
      const instance = await env.SYNC.get(id);
      await instance.pause();
      await observed.waitForStatus("paused");
      const res = await admin("POST", `/internal/v1/organizations/${org}/sync`);
      expect(res.status).toBe(409);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("sync_in_progress");
      expect((await instance.status()).status).not.toBe("paused");
      const { running } = await adminOk<SyncStatus>("GET", `/internal/v1/organizations/${org}/sync`);
      expect(running).toMatchObject({ id: 1, state: "running", lastError: { step: "sync" } });
      expect(running?.lastError?.message).toContain("paused: resumed");
    } finally {
      await observed.dispose();
    }
  });
});
