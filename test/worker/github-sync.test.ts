import { introspectWorkflowInstance } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { foldName } from "../../src/lib/names";
import type { SyncRun, SyncStatus } from "../../src/schemas/sync";
import { startSyncAtHome, syncInstanceId } from "../../src/sync/start";
import { type FakeRequest, fakeInstallation } from "./github-fake";
import { admin, adminOk, call, createKey, env, fetchWithEnv, postEventsOk, uniqueInstallationId } from "./helpers";
import { deliverQueued, example } from "./webhook-helpers";

// These tests run whole syncs (a Workflow, dozens of calls to the fake GitHub, hundreds of rows):
// the longest takes 8 s on a quiet 2-core machine and went past the default 30 s when another suite
// loaded it. A budget for CPU, not a wait on a race: each awaits the sync's end, never a fixed time.
vi.setConfig({ testTimeout: 120_000 });

/**
 * Installation sync (contract section 17): an organization that exists only at GitHub (the fake)
 * and sends nothing but its `installation` delivery ends up usable on both interfaces, with its
 * history, and the sync is durable (rate limits delay it, failed steps resume without duplicates).
 */

type Fake = Awaited<ReturnType<typeof fakeInstallation>>;
const made: Fake[] = [];
afterEach(async () => {
  for (const fake of made.splice(0)) expect((await fake.stats()).drifts).toEqual([]);
});

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString().replace(/\.\d{3}Z$/, "Z");

/** An organization at GitHub: admin `ada`, members `max` (collaborator of `infra`) and `eve`, a bot; `api` public, `infra` and `vault` private. */
async function githubOrganization() {
  const fake = await fakeInstallation();
  made.push(fake);
  const tag = fake.login.slice(4);
  const { members } = await fake.setMembers([
    { login: `ada-${tag}`, role: "admin" },
    { login: `max-${tag}`, role: "member" },
    { login: `eve-${tag}`, role: "member" },
    { login: `helper-${tag}`, role: "member", type: "Bot" },
  ]);
  const id = (prefix: string) => String(members.find((m) => m.login.startsWith(prefix))?.id);
  await fake.setRepo("api", { private: false });
  await fake.setRepo("infra", { private: true, collaborators: [{ login: `max-${tag}` }] });
  await fake.setRepo("vault", { private: true });
  await fake.setPulls("api", [
    { number: 1, author: `max-${tag}`, createdAt: ago(6), updatedAt: ago(5), mergedAt: ago(5), additions: 10, deletions: 2 },
    // Merged before the backfill window (90 days): not read.
    { number: 2, author: `eve-${tag}`, createdAt: ago(201), updatedAt: ago(200), mergedAt: ago(200), additions: 5 },
    // Closed unmerged: not history.
    { number: 3, author: `eve-${tag}`, createdAt: ago(4), updatedAt: ago(3), mergedAt: null, closedAt: ago(3) },
  ]);
  await fake.setPulls("infra", [
    { number: 7, author: `ada-${tag}`, createdAt: ago(11), updatedAt: ago(10), mergedAt: ago(10), additions: 40, deletions: 8 },
  ]);
  return { fake, org: fake.login, ada: id("ada"), max: id("max"), eve: id("eve"), bot: id("helper") };
}

/** GitHub's `installation` created for the fake's installation: the only thing GitHub sends. */
async function installed(fake: Fake) {
  const payload = example("installation", "created", fake.login, 0, fake.accountId);
  (payload.installation as Record<string, unknown>).id = fake.installationId;
  payload.repositories = [];
  await deliverQueued("installation", payload, { sync: true });
}

/** Keys for a GitHub user (creating users and keys is the control plane's; member calls are not used). */
async function keysOf(githubUserId: string) {
  await adminOk("PUT", `/internal/v1/users/${githubUserId}`, { githubLogin: `u${githubUserId}` });
  const [m, a] = await Promise.all([createKey(githubUserId, "members"), createKey(githubUserId, "analytics")]);
  return { members: m.key, analytics: a.key };
}

const as = (key: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  call(path, { ...init, headers: { Authorization: `Bearer ${key}` } });

const syncStatus = async (org: string) => adminOk<SyncStatus>("GET", `/internal/v1/organizations/${org}/sync`);

/** Runs sync `n` of the organization to its end through the Workflow's introspection (no polling). */
async function finished(org: string, n: number, start: () => Promise<unknown>, modify?: Parameters<typeof introspect>[1]) {
  const instance = await introspect(syncInstanceId(foldName(org), n), modify);
  try {
    await start();
    await instance.waitForStatus("complete");
  } finally {
    await instance.dispose();
  }
  const { last } = await syncStatus(org);
  expect(last?.id).toBe(n);
  return last as SyncRun;
}

async function introspect(
  id: string,
  modify?: (m: Parameters<Parameters<Awaited<ReturnType<typeof introspectWorkflowInstance>>["modify"]>[0]>[0]) => Promise<void>,
) {
  const instance = await introspectWorkflowInstance(env.SYNC, id);
  if (modify) await instance.modify(modify);
  return instance;
}

const exportRows = async (org: string, key: string) => {
  const res = await as(key, `/api/analytics/v1/prs?org=${org}&startDate=${ago(30).slice(0, 10)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { repo: string; prNumber: number; linesAdded: number | null }[] }).data
    .map((r) => `${r.repo}#${r.prNumber}:${r.linesAdded}`)
    .sort();
};

/**
 * The history's two ways (docs/architecture.md, "Installation sync"): GraphQL, the default, and
 * REST, taken when GitHub has no GraphQL API (the fake answers `POST /graphql` 404) or refuses the
 * query. Both must land the same rows in the export.
 */
const HISTORY_APIS = [
  { api: "GraphQL", graphql: true },
  { api: "REST (GitHub without GraphQL: the fallback)", graphql: false },
] as const;

describe.each(HISTORY_APIS)(
  "a fresh installation, with nothing but GitHub's delivery and API; history through $api",
  ({ graphql }) => {
    it("gives the installer and colleagues both interfaces, and its history to the first export", async () => {
      const { fake, org, ada, max, eve, bot } = await githubOrganization();
      if (!graphql) await fake.setGraphql(false);
      const [adaKeys, maxKeys, eveKeys] = await Promise.all([keysOf(ada), keysOf(max), keysOf(eve)]);

      const run = await finished(org, 1, () => installed(fake));
      expect(run).toMatchObject({
        trigger: "installation",
        state: "complete",
        steps: {
          repositories: { state: "done", count: 3 },
          members: { state: "done", count: 4 },
          collaborators: { state: "done", count: 1 },
          pullRequests: { state: "done", count: 2 },
        },
      });

      // The installer (GitHub admin) lists the organization, reads members and changes one.
      const orgs = (await (await as(adaKeys.members, "/api/v1/organizations")).json()) as { data: { org: string }[] };
      expect(orgs.data.map((o) => o.org)).toContain(org);
      const read = await as(adaKeys.members, `/api/v1/organizations/${org}/members/${max}`);
      expect(await read.json()).toMatchObject({ githubUserId: max, role: "member", seat: false, isBot: false });
      expect(await (await as(adaKeys.members, `/api/v1/organizations/${org}/members/${bot}`)).json()).toMatchObject({
        isBot: true,
      });
      expect(await (await as(adaKeys.members, `/api/v1/organizations/${org}/members/${ada}`)).json()).toMatchObject({
        role: "admin",
      });
      // Seats come from billing (the control plane's organization, not a member call).
      await adminOk("PUT", `/internal/v1/organizations/${org}`, {
        installationId: fake.installationId,
        installedAt: "2026-01-01T00:00:00Z",
        plan: "pro",
        subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
      });
      const patched = await as(adaKeys.members, `/api/v1/organizations/${org}/members/${max}`, {
        method: "PATCH",
        json: { expectedSeat: false, seat: true },
      });
      expect(patched.status).toBe(200);

      // The reviewer reviews; the export shows the synchronised history by access.
      const review = (repo: string, prNumber: number) => ({
        type: "review",
        org,
        repo,
        prNumber,
        reviewId: `r-${org}-${repo}-${prNumber}`,
        status: "completed",
        completedAt: ago(1),
        updatedAt: ago(1),
      });
      await postEventsOk([review("api", 1), review("api", 2), review("infra", 7)]);
      expect(await exportRows(org, adaKeys.analytics)).toEqual(["api#1:10", "infra#7:40"]);
      expect(await exportRows(org, maxKeys.analytics)).toEqual(["api#1:10", "infra#7:40"]);
      expect(await exportRows(org, eveKeys.analytics)).toEqual(["api#1:10"]);

      // Every member arrived through GitHub, audited once with source github.
      const audit = (await (await as(adaKeys.members, `/api/v1/organizations/${org}/audit-log?limit=100`)).json()) as {
        data: { action: string; source: string; githubUserId: string }[];
      };
      const added = audit.data.filter((e) => e.action === "member.added");
      expect(added.map((e) => e.githubUserId).sort()).toEqual([ada, max, eve, bot].sort());
      expect(new Set(added.map((e) => e.source))).toEqual(new Set(["github"]));

      // The history's calls: one GraphQL query of 1 point for the three repositories, or (without
      // GraphQL) the refused query, then REST's pages and one request per merged pull request.
      const requests = (await fake.stats()).requests.filter((r) => r.auth === "token");
      const queries = requests.filter((r) => r.path === "/graphql");
      const pulls = requests.filter((r) => r.path.includes("/pulls"));
      if (graphql) {
        expect(queries.map((r) => [r.status, r.cost])).toEqual([[200, 1]]);
        expect(pulls).toEqual([]);
        expect(run.lastError).toBeNull();
      } else {
        expect(queries.map((r) => r.status)).toEqual([404]);
        expect(pulls.map((r) => r.path.split("?")[0]).sort()).toEqual(
          [
            `/repos/${org}/api/pulls`,
            `/repos/${org}/api/pulls/1`,
            `/repos/${org}/infra/pulls`,
            `/repos/${org}/infra/pulls/7`,
            `/repos/${org}/vault/pulls`,
          ].sort(),
        );
        expect(run.lastError?.message).toContain("continuing through REST");
      }
    });
  },
);

describe("a personal account's installation", () => {
  it("has one member, its owner, as admin", async () => {
    const fake = await fakeInstallation({ type: "User" });
    made.push(fake);
    await fake.setRepo("dotfiles", { private: false });
    const owner = await keysOf(String(fake.accountId));
    const run = await finished(fake.login, 1, () => installed(fake));
    expect(run.steps.members).toEqual({ state: "done", count: 1 });
    const me = await as(owner.members, `/api/v1/organizations/${fake.login}/members/${fake.accountId}`);
    expect(await me.json()).toMatchObject({ role: "admin", seat: false, isBot: false });
  });
});

describe.each(HISTORY_APIS)("a long history through $api", ({ graphql }) => {
  it("60 repositories, one with 250 merged pull requests in the window: every page, once, into the export", async () => {
    const fake = await fakeInstallation();
    made.push(fake);
    const { members } = await fake.setMembers([{ login: `ada-${fake.login.slice(4)}`, role: "admin" }]);
    const ada = String(members[0]?.id);
    if (!graphql) await fake.setGraphql(false);
    const author = `dev-${fake.login.slice(4)}`;
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    const merged = (number: number, hours: number) => ({
      number,
      author,
      createdAt: hoursAgo(hours + 24),
      updatedAt: hoursAgo(hours),
      mergedAt: hoursAgo(hours),
      additions: number,
    });
    // `big`: 250 merged within the window (pull n n hours ago) and 20 merged before it: three pages.
    await fake.setRepo("big", { private: false });
    await fake.setPulls("big", [
      ...Array.from({ length: 250 }, (_, i) => merged(i + 1, i + 1)),
      ...Array.from({ length: 20 }, (_, i) => merged(301 + i, 24 * 100 + i)),
    ]);
    for (let r = 1; r < 60; r++) {
      await fake.setRepo(`small-${r}`, { private: false });
      await fake.setPulls(`small-${r}`, [merged(1, r)]);
    }
    await billingOnly(fake);
    const run = await finished(fake.login, 1, () =>
      startSyncAtHome(env, foldName(fake.login), { kind: "api", key: crypto.randomUUID() }),
    );
    expect(run.steps.pullRequests).toEqual({ state: "done", count: 250 + 59 });

    const requests = (await fake.stats()).requests.filter((r) => r.auth === "token");
    if (graphql) {
      // Repositories 1-50, then `big`'s second page with repositories 51-59, then its third page.
      expect(requests.filter((r) => r.path === "/graphql").map((r) => [r.status, r.cost])).toEqual([
        [200, 1],
        [200, 1],
        [200, 1],
      ]);
      expect(requests.filter((r) => r.path.includes("/pulls"))).toEqual([]);
    } else {
      // A list page per small repository, three for `big`, one request per merged pull request.
      expect(requests.filter((r) => /\/pulls\?/.test(r.path))).toHaveLength(59 + 3);
      expect(requests.filter((r) => /\/pulls\/\d+$/.test(r.path))).toHaveLength(250 + 59);
    }

    // Pull requests from each of `big`'s pages and a small repository, reviewed: in the export with their line counts.
    const keys = await keysOf(ada);
    const review = (repo: string, prNumber: number) => ({
      type: "review",
      org: fake.login,
      repo,
      prNumber,
      reviewId: `r-${fake.login}-${repo}-${prNumber}`,
      status: "completed",
      completedAt: ago(0),
      updatedAt: ago(0),
    });
    await postEventsOk([review("big", 1), review("big", 150), review("big", 250), review("big", 301), review("small-59", 1)]);
    expect(await exportRows(fake.login, keys.analytics)).toEqual(
      ["big#1:1", "big#150:150", "big#250:250", "small-59#1:1"].sort(),
    );
  });
});

describe("the sync's progress and control: GET and POST .../sync", () => {
  it("one at a time (409 while one runs), then another; a rate-limited API delays it without losing it", async () => {
    const { fake, org } = await githubOrganization();
    // Secondary limits (403 and 429 with retry-after) and the primary limit (remaining 0, reset 1 s ahead).
    await fake.inject(
      { kind: "secondary", status: 403, retryAfter: 2, match: "/installation/repositories" },
      { kind: "secondary", status: 429, retryAfter: 1, match: "/members" },
      { kind: "primary", match: "/collaborators" },
      // The history's GraphQL query: a secondary limit, then the primary one (GitHub's GraphQL
      // answer: 200 with a RATE_LIMITED error and x-ratelimit-remaining 0).
      { kind: "secondary", status: 403, retryAfter: 1, match: "/graphql" },
      { kind: "primary", match: "/graphql" },
    );
    const instance = await introspect(syncInstanceId(foldName(org), 1));
    try {
      await installed(fake);
      // The repositories step is waiting out GitHub's 2 s: the sync is running.
      const refused = await admin("POST", `/internal/v1/organizations/${org}/sync`);
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("sync_in_progress");
      expect((await syncStatus(org)).running).toMatchObject({ id: 1, state: "running" });
      await instance.waitForStatus("complete");
    } finally {
      await instance.dispose();
    }
    const requests = (await fake.stats()).requests;
    const limited = requests.filter((r) => r.status === 403 || r.status === 429);
    expect(limited).toHaveLength(4);
    // The GraphQL query: refused twice, then answered; each retry waited what GitHub said.
    const queries = requests.filter((r) => r.path === "/graphql");
    expect(queries.map((r) => [r.status, r.reset === undefined ? "" : "reset"])).toEqual([
      [403, ""],
      [200, "reset"],
      [200, ""],
    ]);
    const [secondary, primary, answered] = queries as [FakeRequest, FakeRequest, FakeRequest];
    expect(primary.at - secondary.at).toBeGreaterThanOrEqual(900);
    expect(answered.at).toBeGreaterThanOrEqual((primary.reset ?? 0) * 1000);
    expect((await syncStatus(org)).last).toMatchObject({ id: 1, state: "complete", steps: { pullRequests: { count: 2 } } });

    const again = await finished(org, 2, async () => {
      const res = await admin("POST", `/internal/v1/organizations/${org}/sync`);
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ id: 2, trigger: "api", state: "running" });
    });
    // Nothing changed at GitHub: the same counts, and no member written twice in the audit log.
    expect(again.steps).toEqual((await syncStatus(org)).last?.steps);
    expect(again.steps.members.count).toBe(4);
  });

  it("a limit longer than the client waits in place sleeps the Workflow until GitHub's time, then goes on", async () => {
    const { fake, org } = await githubOrganization();
    await billingOnly(fake);
    await fake.inject({ kind: "secondary", status: 429, retryAfter: 1, match: "/members" });
    const run = await finished(org, 1, () =>
      startSyncAtHome(env, foldName(org), { kind: "api", key: crypto.randomUUID() }, { maxWaitSeconds: 0 }),
    );
    expect(run.state).toBe("complete");
    expect(run.steps.members.count).toBe(4);
    expect(run.lastError?.message).toContain("rate limit");
    const requests = (await fake.stats()).requests.filter((r) => r.path.includes("/members"));
    const refusedAt = requests.find((r) => r.status === 429)?.at ?? 0;
    expect(requests.filter((r) => r.status === 200).every((r) => r.at >= refusedAt + 1000)).toBe(true);
  });

  it.each(HISTORY_APIS)(
    "a step that fails midway is retried and the sync resumes where it stopped, writing nothing twice (history through $api)",
    async ({ graphql }) => {
      const { fake, org, ada } = await githubOrganization();
      await billingOnly(fake);
      if (!graphql) await fake.setGraphql(false);
      // REST: the first merged pull request's detail fails beyond the client's retries (1 + 3): the
      // pull request step fails after `api` was partly read. GraphQL: the query fails as often.
      // Either way the Workflow retries the step.
      const match = graphql ? "/graphql" : "/pulls/";
      await fake.inject(...Array.from({ length: 4 }, () => ({ kind: "server" as const, status: 503 as const, match })));
      const run = await finished(
        org,
        1,
        () => startSyncAtHome(env, foldName(org), { kind: "api", key: crypto.randomUUID() }, { retryBaseMs: 5 }),
        async (m) => m.disableRetryDelays(),
      );
      expect(run.state).toBe("complete");
      const requests = (await fake.stats()).requests;
      expect(requests.filter((r) => r.path.includes(match) && r.status === 503)).toHaveLength(4);
      if (graphql) {
        expect(run.lastError).toMatchObject({ step: "pull requests 1" });
      } else {
        // The retried step asked GraphQL again (a step keeps nothing of a failed attempt), then REST.
        expect(requests.filter((r) => r.path === "/graphql").map((r) => r.status)).toEqual([404, 404]);
        expect(run.lastError).toMatchObject({
          step: "pull requests",
          message: expect.stringContaining("continuing through REST"),
        });
      }
      expect(run.steps).toMatchObject({ members: { count: 4 }, pullRequests: { state: "done", count: 2 } });
      // The steps before it ran once: the member lists were read once each.
      expect(requests.filter((r) => r.path.startsWith(`/orgs/${org}/members`))).toHaveLength(2);
      const adaKeys = await keysOf(ada);
      const audit = (await (await as(adaKeys.members, `/api/v1/organizations/${org}/audit-log?limit=100`)).json()) as {
        data: unknown[];
      };
      expect(audit.data).toHaveLength(4);
    },
  );

  it("an installation GitHub does not know ends failed, with the reason, and changes nothing", async () => {
    const org = `gone-${crypto.randomUUID().slice(0, 8)}`;
    const installationId = uniqueInstallationId();
    const payload = example("installation", "created", org);
    (payload.installation as Record<string, unknown>).id = installationId;
    payload.repositories = [];
    const instance = await introspect(syncInstanceId(foldName(org), 1));
    try {
      await deliverQueued("installation", payload, { sync: true });
      await instance.waitForStatus("complete");
      expect(await instance.getOutput()).toEqual({ state: "failed" });
    } finally {
      await instance.dispose();
    }
    const { running, last } = await syncStatus(org);
    expect(running).toBeNull();
    expect(last).toMatchObject({ state: "failed", lastError: { step: "installation" } });
    expect(last?.steps.members).toEqual({ state: "pending", count: 0 });
  });

  it("POST answers 404 for an unknown organization whatever the configuration, 409 sync_off for a known one without the App's", async () => {
    const { fake, org } = await githubOrganization();
    await billingOnly(fake);
    const request = (login: string) =>
      new Request(`https://service.test/internal/v1/organizations/${login}/sync`, {
        method: "POST",
        headers: { Authorization: "Bearer test-admin-token-0123456789abcdef" },
      });
    const unknown = `nobody-${Date.now()}`;
    // The organization is resolved first, as every route checks (404 before a state rule's 409).
    expect((await fetchWithEnv(request(unknown), { GITHUB_APP_ID: "" })).status).toBe(404);
    expect((await fetchWithEnv(request(unknown), {})).status).toBe(404);
    const off = await fetchWithEnv(request(org), { GITHUB_APP_ID: "" });
    expect(off.status).toBe(409);
    expect(((await off.json()) as { error: { code: string } }).error.code).toBe("sync_off");
    // Nothing started: the organization has no sync.
    expect(await syncStatus(org)).toEqual({ running: null, last: null });
  });
});

/** The organization registered by billing only (no delivery, so no sync starts by itself). */
async function billingOnly(fake: Fake) {
  await adminOk("PUT", `/internal/v1/organizations/${fake.login}`, {
    installationId: fake.installationId,
    installedAt: "2026-01-01T00:00:00Z",
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
  });
}
