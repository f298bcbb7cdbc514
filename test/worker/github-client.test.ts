import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { GithubMergedPull, GithubResult } from "../../src/github/calls";
import { listMergedPullRequests } from "../../src/github/calls-history";
import { type HistoryPage, mergedPullRequestsGraphql, REPOSITORIES_PER_QUERY } from "../../src/github/calls-history-graphql";
import { getInstallation, listCollaborators, listInstallationRepositories } from "../../src/github/calls-installation";
import { getUser, listOrganizationMembers } from "../../src/github/calls-members";
import { type GithubInstallation, withInstallation } from "../../src/github/client";
import { githubSync } from "../../src/github/config";
import { GithubError } from "../../src/github/errors";
import type { PullSpec } from "../fake-github/state";
import { configuredApp, fakeInstallation, registerApp } from "./github-fake";

// Every answer of the fake is checked against GitHub's description; a drift is recorded per installation.
const made: Awaited<ReturnType<typeof fakeInstallation>>[] = [];
async function installation(options?: Parameters<typeof fakeInstallation>[0]) {
  const fake = await fakeInstallation(options);
  made.push(fake);
  return fake;
}
afterEach(async () => {
  for (const fake of made.splice(0)) expect((await fake.stats()).drifts).toEqual([]);
});

async function rejection(promise: Promise<unknown>): Promise<GithubError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GithubError);
  return error as GithubError;
}

const DAY = 86_400_000;
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("configuration: sync is off without the App id and key", () => {
  it("off names what is missing; webhooks need neither", () => {
    expect(githubSync({})).toEqual({ kind: "off", missing: ["GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY"] });
    expect(githubSync({ GITHUB_APP_ID: "42", GITHUB_APP_PRIVATE_KEY: " " })).toEqual({
      kind: "off",
      missing: ["GITHUB_APP_PRIVATE_KEY"],
    });
    expect(githubSync({ GITHUB_APP_ID: "", GITHUB_APP_PRIVATE_KEY: env.GITHUB_APP_PRIVATE_KEY })).toEqual({
      kind: "off",
      missing: ["GITHUB_APP_ID"],
    });
  });

  it("defaults: api.github.com and 90 days; a GHES URL loses its trailing slash", () => {
    const key = env.GITHUB_APP_PRIVATE_KEY;
    const on = githubSync({ GITHUB_APP_ID: "42", GITHUB_APP_PRIVATE_KEY: key });
    expect(on.kind === "on" && { apiUrl: on.app.apiUrl, days: on.app.backfillDays }).toEqual({
      apiUrl: "https://api.github.com",
      days: 90,
    });
    const ghes = githubSync({
      GITHUB_APP_ID: "42",
      GITHUB_APP_PRIVATE_KEY: key,
      GITHUB_API_URL: "https://ghe.example/api/v3/",
      GITHUB_BACKFILL_DAYS: "30",
    });
    expect(ghes.kind === "on" && { apiUrl: ghes.app.apiUrl, days: ghes.app.backfillDays }).toEqual({
      apiUrl: "https://ghe.example/api/v3",
      days: 30,
    });
  });

  it.each([
    [{ GITHUB_APP_PRIVATE_KEY: "not a key" }, "GITHUB_APP_PRIVATE_KEY"],
    [{ GITHUB_APP_ID: "app-42" }, "GITHUB_APP_ID"],
    [{ GITHUB_API_URL: "ftp://x" }, "GITHUB_API_URL"],
    [{ GITHUB_BACKFILL_DAYS: "0" }, "GITHUB_BACKFILL_DAYS"],
  ])("set but unusable (%o) is misconfigured, naming %s", (override, name) => {
    const sync = githubSync({ GITHUB_APP_ID: "42", GITHUB_APP_PRIVATE_KEY: env.GITHUB_APP_PRIVATE_KEY, ...override });
    expect(sync.kind).toBe("misconfigured");
    expect(sync.kind === "misconfigured" && sync.reason).toContain(name);
  });
});

describe("App authentication: JWT and installation tokens", () => {
  it("the PKCS#1 key GitHub hands out signs an App JWT GitHub accepts", async () => {
    expect(env.GITHUB_APP_PRIVATE_KEY).toContain("BEGIN RSA PRIVATE KEY");
    const fake = await installation();
    const { data, usage } = await getInstallation(fake.target);
    expect(data).toMatchObject({
      id: fake.installationId,
      account: { id: fake.accountId, login: fake.login, type: "Organization" },
    });
    expect(data.suspendedAt).toBeNull();
    // An App call: no installation token, no installation rate points.
    expect(usage).toEqual({ calls: 1, points: 0 });
    expect((await fake.stats()).requests.map((r) => r.auth)).toEqual(["jwt"]);
  });

  it("a PKCS#8 key works too, and a key of another App is refused (unauthorized)", async () => {
    const pair = (await crypto.subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const pem = (label: string, der: ArrayBuffer) =>
      `-----BEGIN ${label}-----\n${btoa(String.fromCharCode(...new Uint8Array(der))).replace(/.{64}/g, "$&\n")}\n-----END ${label}-----\n`;
    const appId = await registerApp(pem("PUBLIC KEY", (await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer));
    const pkcs8 = pem("PRIVATE KEY", (await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
    const app = { ...configuredApp(), appId, privateKey: pkcs8 };
    const fake = await installation({ app });
    expect((await getInstallation(fake.target)).data.account?.id).toBe(fake.accountId);

    // The configured App's key, presented as this App: the signature does not verify.
    const wrong = { ...fake.target, app: { ...app, privateKey: configuredApp().privateKey } };
    const error = await rejection(getInstallation(wrong));
    expect([error.kind, error.details.status]).toEqual(["unauthorized", 401]);
  });

  it("a personal account's installation answers its user account", async () => {
    const fake = await installation({ type: "User", login: `dev-${crypto.randomUUID().slice(0, 8)}` });
    expect((await getInstallation(fake.target)).data.account).toEqual({ id: fake.accountId, login: fake.login, type: "User" });
  });

  it("the installation token is fetched once and reused across calls (each call builds its own client)", async () => {
    const fake = await installation();
    await fake.setRepo("api", { private: false });
    await fake.setUser("reviewer-bot", "Bot");
    const first = await listInstallationRepositories(fake.target);
    const second = await getUser(fake.target, "reviewer-bot");
    const third = await listInstallationRepositories(fake.target);
    expect(first.usage).toEqual({ calls: 2, points: 1 }); // the token request, then the list
    expect(second.usage).toEqual({ calls: 1, points: 1 });
    expect(third.usage).toEqual({ calls: 1, points: 1 });
    const stats = await fake.stats();
    expect(stats.tokensIssued).toBe(1);
    expect(stats.requests.map((r) => `${r.auth} ${r.method} ${r.path.split("?")[0]}`)).toEqual([
      `jwt POST /app/installations/${fake.installationId}/access_tokens`,
      "token GET /installation/repositories",
      "token GET /users/reviewer-bot",
      "token GET /installation/repositories",
    ]);
  });

  it("a token that expires within five minutes is not reused: a new one is fetched", async () => {
    const fake = await installation({ tokenLifetimeSeconds: 240 });
    await listInstallationRepositories(fake.target);
    await listInstallationRepositories(fake.target);
    expect((await fake.stats()).tokensIssued).toBe(2);
  });
});

describe("the calls of section 17, every page", () => {
  it("GET /installation/repositories: every page of 100, with visibility", async () => {
    const fake = await installation();
    const names = Array.from({ length: 105 }, (_, i) => `repo-${String(i).padStart(3, "0")}`);
    for (const name of names) await fake.setRepo(name, { private: name.endsWith("7") });
    const { data, usage } = await listInstallationRepositories(fake.target);
    expect(data.map((r) => r.name).sort()).toEqual(names);
    expect(data.filter((r) => r.private).map((r) => r.name)).toEqual(names.filter((n) => n.endsWith("7")));
    expect(data[0]?.owner).toEqual({ id: fake.accountId, login: fake.login });
    expect(usage).toEqual({ calls: 3, points: 2 });
    const paths = (await fake.stats()).requests.filter((r) => r.auth === "token").map((r) => r.path);
    expect(paths).toEqual(["/installation/repositories?per_page=100", "/installation/repositories?per_page=100&page=2"]);
  });

  it("GET /orgs/{org}/members?role=admin and ?role=member: every page, roles and bots kept", async () => {
    const fake = await installation();
    const admins = ["ada", "grace", "linus"].map((n) => `${n}-${fake.login}`);
    const members = Array.from({ length: 247 }, (_, i) => `m${i}-${fake.login}`);
    await fake.setMembers([
      ...admins.map((login) => ({ login, role: "admin" as const })),
      ...members.map((login, i) => ({ login, role: "member" as const, type: i === 0 ? ("Bot" as const) : ("User" as const) })),
    ]);
    const { data, usage } = await listOrganizationMembers(fake.target, fake.login);
    expect(data.filter((m) => m.role === "admin").map((m) => m.login)).toEqual(admins);
    expect(data.filter((m) => m.role === "member").map((m) => m.login)).toEqual(members);
    expect(data.find((m) => m.login === members[0])?.type).toBe("Bot");
    // token, 1 page of admins, 3 pages of members
    expect(usage).toEqual({ calls: 5, points: 4 });
    const paths = (await fake.stats()).requests.filter((r) => r.auth === "token").map((r) => r.path);
    expect(paths).toEqual([
      `/orgs/${fake.login}/members?role=admin&per_page=100`,
      `/orgs/${fake.login}/members?role=member&per_page=100`,
      `/orgs/${fake.login}/members?role=member&per_page=100&page=2`,
      `/orgs/${fake.login}/members?role=member&per_page=100&page=3`,
    ]);
  });

  it("GET /repos/{owner}/{repo}/collaborators?affiliation=all and GET /users/{login}", async () => {
    const fake = await installation();
    await fake.setRepo("infra", {
      private: true,
      collaborators: [
        { login: `c1-${fake.login}`, role: "admin" },
        { login: `c2-${fake.login}`, role: "read", type: "Bot" },
      ],
    });
    const { data } = await listCollaborators(fake.target, fake.login, "infra");
    expect(data.map((c) => [c.login, c.type])).toEqual([
      [`c1-${fake.login}`, "User"],
      [`c2-${fake.login}`, "Bot"],
    ]);
    expect((await getUser(fake.target, `c2-${fake.login}`)).data).toEqual({
      id: data[1]?.id,
      login: `c2-${fake.login}`,
      type: "Bot",
    });
    const paths = (await fake.stats()).requests.map((r) => r.path);
    expect(paths).toContain(`/repos/${fake.login}/infra/collaborators?affiliation=all&per_page=100`);
  });

  it("an unknown organization or user is not_found", async () => {
    const fake = await installation();
    expect((await rejection(listOrganizationMembers(fake.target, `gone-${fake.login}`))).kind).toBe("not_found");
    expect((await rejection(getUser(fake.target, `nobody-${fake.login}`))).kind).toBe("not_found");
  });

  it("merged pull requests since a cut-off: pages stop at the first one updated before it; line counts from the single pull", async () => {
    const fake = await installation();
    await fake.setRepo("api", { private: false });
    const now = Date.now();
    const author = `author-${fake.login}`;
    // 210 closed pull requests, pull n last updated n hours ago; every third closed without merging.
    const pulls: PullSpec[] = Array.from({ length: 210 }, (_, i) => {
      const n = i + 1;
      const updated = now - n * 3_600_000;
      return {
        number: n,
        author: n === 4 ? null : author,
        createdAt: at(updated - DAY),
        updatedAt: at(updated),
        mergedAt: n % 3 === 0 ? null : at(updated),
        closedAt: at(updated),
        additions: n * 10,
        deletions: n,
      };
    });
    // Merged long before the cut-off but commented on since: not in the window.
    pulls.push({
      number: 500,
      author,
      createdAt: at(now - 30 * DAY),
      updatedAt: at(now - 1000),
      mergedAt: at(now - 20 * DAY),
      closedAt: at(now - 20 * DAY),
      additions: 1,
      deletions: 1,
    });
    // Still open: never listed.
    pulls.push({
      number: 501,
      author,
      createdAt: at(now - DAY),
      updatedAt: at(now - 500),
      mergedAt: null,
      closedAt: null,
      additions: 1,
      deletions: 1,
    });
    await fake.setPulls("api", pulls);

    const since = now - 110.5 * 3_600_000; // pulls 1..110 were updated after it
    const { data, usage } = await listMergedPullRequests(fake.target, fake.login, "api", since);
    const expected = pulls.filter((p) => p.number <= 110 && p.mergedAt !== null);
    expect(data.map((p) => p.number)).toEqual(expected.map((p) => p.number));
    expect(data.find((p) => p.number === 1)).toEqual({
      number: 1,
      author: { id: expect.any(Number), login: author, type: "User" },
      createdAt: expected[0]?.createdAt,
      mergedAt: expected[0]?.mergedAt,
      updatedAt: expected[0]?.updatedAt,
      additions: 10,
      deletions: 1,
    });
    expect(data.find((p) => p.number === 4)?.author).toBeNull();
    expect(data.every((p, i) => p.additions === expected[i]?.additions)).toBe(true);

    const requests = (await fake.stats()).requests.filter((r) => r.auth === "token");
    const listPages = requests.filter((r) => r.path.startsWith(`/repos/${fake.login}/api/pulls?`));
    // Two pages of 100 were needed; the third (pulls 201..210) was never asked for.
    expect(listPages.map((r) => new URLSearchParams(r.path.split("?")[1]).get("page") ?? "1")).toEqual(["1", "2"]);
    expect(listPages[0]?.path).toContain("state=closed&sort=updated&direction=desc");
    expect(usage).toEqual({ calls: 1 + 2 + expected.length, points: 2 + expected.length });
  });
});

describe("rate limits are waited out, never failing the call; 5xx is retried a bounded number of times", () => {
  it.each([403, 429] as const)(
    "a secondary limit (%d, retry-after: 1) delays the call by that second, then it succeeds",
    async (status) => {
      const fake = await installation();
      await fake.setRepo("api", { private: false });
      await fake.inject({ kind: "secondary", status, retryAfter: 1 });
      const { data, usage } = await listInstallationRepositories(fake.target);
      expect(data.map((r) => r.name)).toEqual(["api"]);
      expect(usage).toEqual({ calls: 3, points: 2 });
      const [limited, retried] = (await fake.stats()).requests.filter((r) => r.auth === "token");
      expect([limited?.status, retried?.status]).toEqual([status, 200]);
      // Sent immediately, the retry would arrive within milliseconds; the client waited retry-after.
      expect((retried?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(900);
    },
  );

  it("x-ratelimit-remaining: 0 waits until x-ratelimit-reset", async () => {
    const fake = await installation();
    await fake.setUser(`u-${fake.login}`, "User");
    await fake.inject({ kind: "primary" });
    expect((await getUser(fake.target, `u-${fake.login}`)).data.login).toBe(`u-${fake.login}`);
    const [limited, retried] = (await fake.stats()).requests.filter((r) => r.auth === "token");
    expect(limited?.status).toBe(403);
    expect(retried?.status).toBe(200);
    expect(retried?.at).toBeGreaterThanOrEqual((limited?.reset ?? Number.POSITIVE_INFINITY) * 1000);
  });

  it("a wait longer than the caller allows ends the call with rate_limited and when to resume", async () => {
    const fake = await installation();
    await fake.inject({ kind: "secondary", status: 429, retryAfter: 1 });
    const error = await rejection(listInstallationRepositories({ ...fake.target, options: { maxWaitSeconds: 0 } }));
    expect([error.kind, error.details.retryAfterSeconds, error.details.status]).toEqual(["rate_limited", 1, 429]);
    expect((await fake.stats()).requests.filter((r) => r.auth === "token")).toHaveLength(1);
  });

  it("a 5xx is retried and the call succeeds", async () => {
    const fake = await installation();
    await fake.setRepo("api", { private: true });
    await fake.inject({ kind: "server", status: 502 }, { kind: "server", status: 503 });
    const { data, usage } = await listInstallationRepositories(fake.target);
    expect(data.map((r) => [r.name, r.private])).toEqual([["api", true]]);
    expect(usage).toEqual({ calls: 4, points: 3 });
    expect((await fake.stats()).requests.filter((r) => r.auth === "token").map((r) => r.status)).toEqual([502, 503, 200]);
  });

  it("a 5xx that persists fails as unavailable after 3 retries", async () => {
    const fake = await installation();
    await fake.inject(...Array.from({ length: 5 }, () => ({ kind: "server" as const, status: 500 as const })));
    const error = await rejection(listInstallationRepositories(fake.target));
    expect([error.kind, error.details.status, error.details.calls]).toEqual(["unavailable", 500, 5]);
  });

  it("a secondary limit on the token request is waited out too", async () => {
    const fake = await installation();
    await fake.inject({ kind: "server", status: 502, match: "/access_tokens" });
    expect((await getUser(fake.target, fake.login)).data.type).toBe("Organization");
    expect((await fake.stats()).tokensIssued).toBe(1);
  });
});

describe("many calls in one isolate", () => {
  it("each call's limiters leave no timer behind: 2,500 calls, then another still works", async () => {
    // Each call makes five Bottleneck groups, each with a cleanup interval; workerd allows an
    // isolate 10,000 active timers. Before the client released them, call 2,000 or so threw
    // QuotaExceededError (found by `npm run bench:sync`: a sync of 2,000 repositories).
    const target = { app: configuredApp(), installationId: 1 };
    for (let i = 0; i < 2500; i++) await withInstallation(target, async () => i);
    const fake = await installation();
    expect((await getInstallation(fake.target)).data.id).toBe(fake.installationId);
  });
});

describe("GITHUB_API_URL: a GitHub Enterprise Server's https://HOST/api/v3", () => {
  it("every call and every page goes under /api/v3", async () => {
    const app = { ...configuredApp(), apiUrl: `${configuredApp().apiUrl}/api/v3` };
    const fake = await installation({ app });
    await fake.setMembers(Array.from({ length: 101 }, (_, i) => ({ login: `g${i}-${fake.login}`, role: "member" as const })));
    expect((await listOrganizationMembers(fake.target, fake.login)).data).toHaveLength(101);
    expect((await getInstallation(fake.target)).data.id).toBe(fake.installationId);
    expect((await fake.stats()).requests.map((r) => r.status)).toEqual([201, 200, 200, 200, 200]);
  });
});

describe("merged pull requests through GraphQL", () => {
  /** Every page of one repository's history through GraphQL, as the sync walks it. */
  async function graphqlHistory(target: GithubInstallation, owner: string, name: string, since: number) {
    const pulls: GithubMergedPull[] = [];
    let after: string | null = null;
    let points = 0;
    let queries = 0;
    do {
      const { data, usage }: GithubResult<HistoryPage[]> = await mergedPullRequestsGraphql(
        target,
        owner,
        [{ name, after }],
        since,
      );
      pulls.push(...(data[0]?.pulls ?? []));
      after = data[0]?.after ?? null;
      points += usage.points;
      queries += 1;
    } while (after !== null);
    return { pulls, points, queries };
  }

  it("the same pull requests as REST, page after page, to the window's edge, at 1 point a query", async () => {
    const fake = await installation();
    await fake.setRepo("api", { private: false });
    const now = Math.floor(Date.now() / 1000) * 1000;
    const since = now - 300 * 3_600_000;
    const author = `author-${fake.login}`;
    // 250 merged within the window (pull n updated and merged n hours ago), 120 merged before it.
    const pulls: PullSpec[] = Array.from({ length: 370 }, (_, i) => {
      const n = i + 1;
      const updated = n <= 250 ? now - n * 3_600_000 : since - (n - 250) * 3_600_000;
      return {
        number: n,
        author,
        createdAt: at(updated - DAY),
        updatedAt: at(updated),
        mergedAt: at(updated),
        additions: n,
        deletions: 1,
      };
    });
    pulls.push(
      // Merged exactly at the window's start: in it.
      { number: 901, author, createdAt: at(since - DAY), updatedAt: at(since), mergedAt: at(since), additions: 9 },
      // Merged a second before the window, commented on since: not in it.
      { number: 902, author, createdAt: at(since - DAY), updatedAt: at(now - 60_000), mergedAt: at(since - 1000) },
      // Closed without merging, and open: never history.
      { number: 903, author, createdAt: at(now - DAY), updatedAt: at(now - 1000), mergedAt: null, closedAt: at(now - 1000) },
      { number: 904, author, createdAt: at(now - DAY), updatedAt: at(now - 1000), mergedAt: null, closedAt: null },
      // An author whose account is gone: GraphQL's author is null, REST's user is null here too.
      { number: 905, author: null, createdAt: at(now - DAY), updatedAt: at(now - 5000), mergedAt: at(now - 5000), additions: 5 },
    );
    await fake.setPulls("api", pulls);

    const graphql = await graphqlHistory(fake.target, fake.login, "api", since);
    const rest = await listMergedPullRequests(fake.target, fake.login, "api", since);
    expect(graphql.pulls).toEqual(rest.data);
    expect(graphql.pulls.map((p) => p.number).sort((a, b) => a - b)).toEqual([
      ...Array.from({ length: 250 }, (_, i) => i + 1),
      901,
      905,
    ]);
    expect(graphql.pulls.find((p) => p.number === 905)?.author).toBeNull();
    expect(graphql.pulls.find((p) => p.number === 1)?.author).toEqual({ id: expect.any(Number), login: author, type: "User" });
    // 253 merged pull requests updated since the start (902 too), then the third page reaches
    // before it: three queries of 1 point, against REST's 3 pages and 252 single pull requests.
    expect([graphql.queries, graphql.points]).toEqual([3, 3]);
    expect(rest.usage.points).toBe(3 + 252);
    const queries = (await fake.stats()).requests.filter((r) => r.path === "/graphql");
    expect(queries.map((r) => [r.status, r.cost])).toEqual([
      [200, 1],
      [200, 1],
      [200, 1],
    ]);
  });

  it("many repositories in one query of 1 point; one GitHub no longer resolves has no history", async () => {
    const fake = await installation();
    const now = Date.now();
    const pull = (number: number) => ({
      number,
      author: `a-${fake.login}`,
      createdAt: at(now - 2 * DAY),
      updatedAt: at(now - DAY),
      mergedAt: at(now - DAY),
      additions: number,
    });
    for (let r = 0; r < REPOSITORIES_PER_QUERY - 1; r++) {
      await fake.setRepo(`r${r}`, { private: r % 2 === 0 });
      await fake.setPulls(`r${r}`, [pull(r + 1)]);
    }
    const asked = [
      ...Array.from({ length: REPOSITORIES_PER_QUERY - 1 }, (_, r) => ({ name: `r${r}`, after: null })),
      { name: "gone", after: null },
    ];
    const { data, usage } = await mergedPullRequestsGraphql(fake.target, fake.login, asked, now - 30 * DAY);
    expect(data.slice(0, -1).map((page) => page.pulls.map((p) => p.additions))).toEqual(
      Array.from({ length: REPOSITORIES_PER_QUERY - 1 }, (_, r) => [r + 1]),
    );
    expect(data.at(-1)).toEqual({ pulls: [], after: null, gone: true });
    expect(usage.points).toBe(1);
    expect((await fake.stats()).requests.filter((r) => r.path === "/graphql").map((r) => r.cost)).toEqual([1]);
  });

  it("GitHub's GraphQL limits are waited out; a wait longer than allowed is rate_limited, for the Workflow to sleep", async () => {
    const fake = await installation();
    const now = Date.now();
    await fake.setRepo("api", { private: false });
    await fake.setPulls("api", [
      {
        number: 1,
        author: `a-${fake.login}`,
        createdAt: at(now - DAY),
        updatedAt: at(now),
        mergedAt: at(now),
      },
    ]);
    await fake.inject(
      { kind: "secondary", status: 429, retryAfter: 1, match: "/graphql" },
      { kind: "primary", match: "/graphql" },
    );
    const { data } = await mergedPullRequestsGraphql(fake.target, fake.login, [{ name: "api", after: null }], now - DAY);
    expect(data[0]?.pulls.map((p) => p.number)).toEqual([1]);
    const [secondary, primary, answered] = (await fake.stats()).requests.filter((r) => r.path === "/graphql");
    expect([secondary?.status, primary?.status, answered?.status]).toEqual([429, 200, 200]);
    expect((primary?.at ?? 0) - (secondary?.at ?? 0)).toBeGreaterThanOrEqual(900);
    expect(answered?.at ?? 0).toBeGreaterThanOrEqual((primary?.reset ?? Number.POSITIVE_INFINITY) * 1000);

    await fake.inject({ kind: "primary", match: "/graphql" });
    const error = await rejection(
      mergedPullRequestsGraphql(
        { ...fake.target, options: { maxWaitSeconds: 0 } },
        fake.login,
        [{ name: "api", after: null }],
        0,
      ),
    );
    expect(error.kind).toBe("rate_limited");
    expect(error.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it("a query GitHub's schema refuses fails the call (the sync then goes on through REST)", async () => {
    const fake = await installation();
    await fake.setRepo("api", { private: false });
    const query = `query($owner: String!) { repository(owner: $owner, name: "api") { pullRequests(first: 1) { nodes { linesAdded } } } }`;
    const error = await rejection(withInstallation(fake.target, (octokit) => octokit.graphql(query, { owner: fake.login })));
    expect(error.kind).toBe("failed");
    expect(error.message).toContain('Cannot query field "linesAdded" on type "PullRequest"');
  });

  it("on a GitHub Enterprise Server, GraphQL is at /api/graphql", async () => {
    const app = { ...configuredApp(), apiUrl: `${configuredApp().apiUrl}/api/v3` };
    const fake = await installation({ app });
    const now = Date.now();
    await fake.setRepo("api", { private: false });
    await fake.setPulls("api", [
      {
        number: 3,
        author: `a-${fake.login}`,
        createdAt: at(now - DAY),
        updatedAt: at(now),
        mergedAt: at(now),
      },
    ]);
    const { data, usage } = await mergedPullRequestsGraphql(fake.target, fake.login, [{ name: "api", after: null }], 0);
    expect(data[0]?.pulls.map((p) => p.number)).toEqual([3]);
    expect(usage.points).toBe(1);
  });
});
