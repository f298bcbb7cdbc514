import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import {
  SUMMARY_LIMITS,
  SummaryPlans,
  summarizeGroupings,
  summarizeMergedPullRequests,
} from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import { monthStartDay } from "../../src/storage/summary-days";
import { appCall, signIn } from "./app-helpers";
import {
  addMember,
  adminOk,
  call,
  createKey,
  createOrg,
  createUser,
  ev,
  fetchWithEnv,
  type OrgOptions,
  postEventsOk,
  scopeOf,
  shardDb,
  unique,
} from "./helpers";

type ErrorBody = { error: string; details?: { path: string; message: string }[] };
type Figures = Record<string, number | null>;
type Summary = {
  org: string;
  startDate: string;
  endDate: string;
  groupBy: string;
  groups: (Figures & { key: string })[];
  totals: Figures;
};

const DAY = 86_400_000;
/** The UTC day number of a `YYYY-MM-DD` day. */
const day = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY;
/** The days of the organization that have a summary block (storage/summary-days.ts), ascending. */
/** The days of the organization's blocks (not its repositories'). */
async function blockDays(db: D1Database, org: string): Promise<number[]> {
  const { results } = await db
    .prepare("SELECT day FROM summary_days WHERE org_key = ? AND repo_key = '' ORDER BY day")
    .bind(org)
    .all<{ day: number }>();
  return results.map((r) => r.day);
}

/** An organization, a caller with an analytics key, and a GET helper for the summary. */
async function setup(options: OrgOptions & { role?: "member" | "admin" | "viewer" } = {}) {
  const org = await createOrg(unique("sum"), { plan: "pro", ...options });
  const user = await createUser();
  await addMember(org, user, options.role ?? "admin");
  const { key } = await createKey(user, "analytics");
  // The blocks are what this file tests: every request reads the full statement (`SummaryPlans`
  // would walk a window it saw hold few pull requests; its own tests are below).
  const get = (query: string, headers: Record<string, string> = {}) => {
    SUMMARY_PLANS.clear();
    return call(`/api/analytics/v1/summary?${query}`, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  };
  const summary = async (query: string): Promise<Summary> => {
    const res = await get(query);
    if (res.status !== 200) throw new Error(`${query} → ${res.status}: ${await res.text()}`);
    return (await res.json()) as Summary;
  };
  return { org, user, key, get, summary };
}

const NONE = {
  pullRequests: 0,
  linesAdded: 0,
  linesDeleted: 0,
  serviceIssuesFlagged: 0,
  serviceIssuesFixed: 0,
  aiLinesAuthored: 0,
  pullRequestsWithAiData: 0,
  medianMsToFirstReview: null,
  medianMsToMerge: null,
};

describe("parameters (section 12: the export's, minus perPage and cursor, plus groupBy)", () => {
  it("groupBy is required and closed: 400 naming it", async () => {
    const { org, get } = await setup();
    for (const [query, message] of [
      [`org=${org}`, "is required"],
      [`org=${org}&groupBy=year`, "must be one of day, week, month, repo, author"],
      [`org=${org}&groupBy=Week`, "must be one of day, week, month, repo, author"],
    ] as const) {
      const res = await get(query);
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).details).toEqual([{ path: "groupBy", message }]);
    }
  });

  it("the audit's repro: a 1970-9999 week window is 400 naming groupBy, as JSON, as CSV, and in the app's copy", async () => {
    const { org, user, get } = await setup({ installedAt: "2024-01-01T00:00:00Z" });
    const session = await signIn(user);
    const repro = `org=${org}&groupBy=week&startDate=1970-01-01&endDate=9999-12-31`;
    const tooWide = [{ path: "groupBy", message: "week needs a window of at most 400 weeks" }];
    for (const res of [await get(repro), await get(`${repro}&format=csv`), await get(repro, { Accept: "text/csv" })]) {
      expect(res.status).toBe(400);
      expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
      expect(((await res.json()) as ErrorBody).details).toEqual(tooWide);
    }
    // The app's copy answers in the app's coded envelope.
    const app = await appCall(`/app/api/analytics/summary?${repro}`, session);
    expect(app.status).toBe(400);
    expect(await app.json()).toMatchObject({ error: { code: "invalid_request", details: tooWide } });
  });

  it.each<[string, string, string, boolean]>([
    ["day", "2025-01-01", "2026-02-04", true],
    ["day", "2025-01-01", "2026-02-05", false],
    // Less than 400 days long, but touching 401 UTC days.
    ["day", "2025-01-01T12:00:00Z", "2026-02-05T11:59:59Z", false],
    // 2024-01-01 is a Monday and 2031-08-31 the Sunday 400 ISO weeks on.
    ["week", "2024-01-01", "2031-08-31", true],
    ["week", "2024-01-01", "2031-09-01", false],
    // From a Sunday to a Monday: 2,795 days, fewer than 400 weeks, but 401 ISO weeks.
    ["week", "2023-12-31", "2031-08-25", false],
    ["week", "2023-12-31", "2031-08-24", true],
    ["month", "2024-01-01", "2057-04-30", true],
    ["month", "2024-01-01", "2057-05-01", false],
    ["month", "2024-01-31", "2057-05-01", false],
    ["month", "2024-02-29", "2057-05-31", true],
  ])("groupBy=%s from %s to %s: 400 buckets at most (answered: %s)", async (groupBy, startDate, endDate, answered) => {
    const { org, get } = await setup({ installedAt: "2024-01-01T00:00:00Z" });
    const res = await get(`org=${org}&groupBy=${groupBy}&startDate=${startDate}&endDate=${endDate}`);
    if (answered) {
      expect(res.status).toBe(200);
      expect(((await res.json()) as Summary).groups).toHaveLength(400);
    } else {
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).details).toEqual([
        { path: "groupBy", message: `${groupBy} needs a window of at most 400 ${groupBy}s` },
      ]);
    }
  });

  it("with only endDate the window starts at the installation: checked once the access is read", async () => {
    const { org, get } = await setup({ installedAt: "2024-01-01T00:00:00Z" });
    for (const [groupBy, last, next] of [
      ["day", "2025-02-03", "2025-02-04"],
      ["week", "2031-08-31", "2031-09-01"],
      ["month", "2057-04-30", "2057-05-01"],
    ] as const) {
      const ok = await get(`org=${org}&groupBy=${groupBy}&endDate=${last}`);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Summary).groups).toHaveLength(400);
      const res = await get(`org=${org}&groupBy=${groupBy}&endDate=${next}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).details).toEqual([
        { path: "groupBy", message: `${groupBy} needs a window of at most 400 ${groupBy}s` },
      ]);
    }
    // The organization's 404 comes before it.
    expect((await get(`org=${unique("none")}&groupBy=week&endDate=9999-12-31`)).status).toBe(404);
  });

  it("the export's date rules; perPage and cursor are unknown here, so ignored", async () => {
    const { org, get } = await setup();
    const bad = await get(`org=${org}&groupBy=week&startDate=2026-02-30`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorBody).details?.[0]?.path).toBe("startDate");
    expect((await get(`org=${org}&groupBy=week&startDate=2026-03-02&endDate=2026-03-01`)).status).toBe(400);
    expect((await get(`org=${org}&groupBy=week&perPage=0&cursor=nonsense`)).status).toBe(200);
    expect((await get(`org=${org}&groupBy=week&groupBy=day`)).status).toBe(400);
  });
});

describe("order of checks and access (section 3)", () => {
  it("401 before 400 before 404 before 403", async () => {
    const { get } = await setup();
    const noKey = await call("/api/analytics/v1/summary?groupBy=nope");
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get("WWW-Authenticate")).toBe("Bearer");
    expect((await get(`org=${unique("none")}&groupBy=nope`)).status).toBe(400);
    expect((await get(`org=${unique("none")}&groupBy=week`)).status).toBe(404);
  });

  it("403: not on Pro, not a member, a private repository the member does not collaborate on, a repository nobody knows", async () => {
    const team = await setup({ plan: "team" });
    expect((await team.get(`org=${team.org}&groupBy=week`)).status).toBe(403);
    const member = await setup({ role: "member" });
    await adminOk("PUT", `/internal/v1/organizations/${member.org}/repositories/vault`, { private: true });
    expect((await member.get(`org=${member.org}&groupBy=repo&repo=vault`)).status).toBe(403);
    const stranger = await createUser();
    const { key } = await createKey(stranger, "analytics");
    const res = await call(`/api/analytics/v1/summary?org=${member.org}&groupBy=week`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(403);
    const admin = await setup();
    expect((await admin.get(`org=${admin.org}&groupBy=repo&repo=ghost`)).status).toBe(403);
  });

  it("a member's summary counts only what the member's export lists", async () => {
    const { org, user, summary } = await setup({ role: "member" });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/vault`, { private: true });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/infra`, { private: true, collaborators: [user] });
    await postEventsOk(
      ["api", "vault", "infra"].flatMap((repo, i) => [ev.pr(org, i + 1, { repo }), ev.review(org, i + 1, `r${i}`, { repo })]),
    );
    const s = await summary(`org=${org}&groupBy=repo&startDate=2026-10-01&endDate=2026-10-31`);
    expect(s.groups.map((g) => [g.key, g.pullRequests])).toEqual([
      ["api", 1],
      ["infra", 1],
    ]);
    expect(s.totals.pullRequests).toBe(2);
  });
});

describe("figures (section 12)", () => {
  it("sums skip nulls, AI lines capped, medians at floor((n-1)/2) with negatives kept, empty buckets in between", async () => {
    const { org, summary } = await setup({ installedAt: "2026-01-01T00:00:00Z" });
    const created = "2026-10-01T10:00:00.000Z";
    await postEventsOk([
      // Week of 2026-09-28: reviewed 2 h after creation, merged 1 day after; AI capped at 12 lines.
      ev.pr(org, 1, { createdAt: created, mergedAt: "2026-10-02T10:00:00Z", linesAdded: 10, linesDeleted: 2 }),
      ev.review(org, 1, "r1", { completedAt: "2026-10-01T12:00:00Z" }),
      ev.finding(org, 1, "f1", { createdAt: "2026-10-01T12:00:00Z", aiAddressed: true }),
      ev.finding(org, 1, "f2", { createdAt: "2026-10-01T12:00:00Z" }),
      ev.finding(org, 1, "f3", { createdAt: "2026-10-01T12:00:00Z", posted: false }),
      ev.ai(org, 1, "a1", 50),
      // Same week, reviewed an hour before it was created (negative), no line counts, AI kept whole.
      ev.pr(org, 2, {
        createdAt: created,
        mergedAt: "2026-10-03T10:00:00Z",
        linesAdded: null,
        linesDeleted: null,
        author: "bob",
      }),
      ev.review(org, 2, "r2", { completedAt: "2026-10-01T09:00:00Z" }),
      ev.ai(org, 2, "a2", 7),
      // Two weeks later (an empty week between), no AI data.
      ev.pr(org, 3, { createdAt: created, mergedAt: "2026-10-14T10:00:00Z", linesAdded: 5, linesDeleted: null }),
      ev.review(org, 3, "r3", { completedAt: "2026-10-13T10:00:00Z" }),
      // Not listed by the export: unmerged, and merged but never reviewed in the window.
      ev.pr(org, 4, { mergedAt: null }),
      ev.review(org, 4, "r4"),
      ev.pr(org, 5),
      ev.review(org, 5, "r5", { completedAt: "2026-09-01T10:00:00Z" }),
    ]);
    const s = await summary(`org=${org}&groupBy=week&startDate=2026-10-01&endDate=2026-10-14`);
    const week1 = {
      key: "2026-09-28",
      pullRequests: 2,
      linesAdded: 10,
      linesDeleted: 2,
      serviceIssuesFlagged: 2,
      serviceIssuesFixed: 1,
      aiLinesAuthored: 12 + 7,
      pullRequestsWithAiData: 2,
      medianMsToFirstReview: -3_600_000,
      medianMsToMerge: DAY,
    };
    const week3 = {
      ...NONE,
      key: "2026-10-12",
      pullRequests: 1,
      linesAdded: 5,
      medianMsToFirstReview: 12 * DAY + 0,
      medianMsToMerge: 13 * DAY,
    };
    expect(s).toEqual({
      org,
      startDate: "2026-10-01T00:00:00.000Z",
      endDate: "2026-10-14T23:59:59.999Z",
      groupBy: "week",
      groups: [week1, { ...NONE, key: "2026-10-05" }, week3],
      totals: {
        pullRequests: 3,
        linesAdded: 15,
        linesDeleted: 2,
        serviceIssuesFlagged: 2,
        serviceIssuesFixed: 1,
        aiLinesAuthored: 19,
        pullRequestsWithAiData: 2,
        medianMsToFirstReview: 2 * 3_600_000,
        medianMsToMerge: 2 * DAY,
      },
    });
    const byAuthor = await summary(`org=${org}&groupBy=author&startDate=2026-10-01&endDate=2026-10-14`);
    expect(byAuthor.groups.map((g) => [g.key, g.pullRequests])).toEqual([
      ["alice", 2],
      ["bob", 1],
    ]);
  });

  it("the default window is the export's, reported as used; an organization without rows has zeros and null medians", async () => {
    const { org, summary } = await setup({ installedAt: new Date(Date.now() - 90 * DAY).toISOString() });
    const before = Date.now();
    const s = await summary(`org=${org}&groupBy=month`);
    const end = Date.parse(s.endDate);
    expect(end).toBeGreaterThanOrEqual(before);
    expect(end - Date.parse(s.startDate)).toBe(30 * DAY);
    expect(s.totals).toEqual(NONE);
    expect(s.groups.length).toBeGreaterThanOrEqual(1);
    expect(s.groups.every((g) => g.pullRequests === 0)).toBe(true);
  });
});

describe("CSV (sections 10 and 12)", () => {
  it("format=csv or Accept: text/csv answers one record per group with section 12's header; errors stay JSON", async () => {
    const { org, get } = await setup();
    await postEventsOk([ev.pr(org, 1, { author: "=evil" }), ev.review(org, 1, "r1")]);
    const query = `org=${org}&groupBy=author&startDate=2026-10-01&endDate=2026-10-31`;
    for (const res of [await get(`${query}&format=csv`), await get(query, { Accept: "text/csv" })]) {
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
      expect(res.headers.get("Vary")).toBe("Accept");
      expect(await res.text()).toBe(
        "key,pullRequests,linesAdded,linesDeleted,serviceIssuesFlagged,serviceIssuesFixed,aiLinesAuthored,pullRequestsWithAiData,medianMsToFirstReview,medianMsToMerge\r\n" +
          `'=evil,1,10,2,0,0,0,0,${2 * 3_600_000},${DAY}\r\n`,
      );
    }
    const bad = await get(`org=${org}&groupBy=nope&format=csv`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get("Content-Type")).toContain("application/json");
  });
});

describe("the figures read alongside the access check (the export's early page, for the summary)", () => {
  // X-Debug-Early-Page (with DEBUG_ROWS_READ, as in the benchmarks) says which path ran.
  async function member() {
    const org = await createOrg(unique("sumearly"), { plan: "pro" });
    const user = await createUser();
    await addMember(org, user, "member");
    const { key } = await createKey(user, "analytics");
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/secret`, { private: true });
    await postEventsOk([
      ev.pr(org, 1, { repo: "api" }),
      ev.review(org, 1, "r1", { repo: "api" }),
      ev.pr(org, 2, { repo: "secret" }),
      ev.review(org, 2, "r2", { repo: "secret" }),
    ]);
    const repos = async () => {
      const res = await fetchWithEnv(
        new Request(
          `https://service.test/api/analytics/v1/summary?org=${org}&groupBy=repo&startDate=2026-10-01&endDate=2026-10-31`,
          {
            headers: { Authorization: `Bearer ${key}` },
          },
        ),
        { DEBUG_ROWS_READ: "true" },
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as Summary;
      return { early: res.headers.get("X-Debug-Early-Page"), repos: body.groups.map((g) => g.key) };
    };
    return { org, user, repos };
  }

  it("a caller asking again gets figures read early; after its access changed, the sequential answer", async () => {
    const m = await member();
    expect(await m.repos()).toEqual({ early: "none", repos: ["api"] });
    expect(await m.repos()).toEqual({ early: "used", repos: ["api"] });
    // Made a collaborator: the guess (without secret) is stale, the answer includes it.
    await adminOk("PUT", `/internal/v1/organizations/${m.org}/repositories/secret`, { private: true, collaborators: [m.user] });
    expect(await m.repos()).toEqual({ early: "stale", repos: ["api", "secret"] });
    expect(await m.repos()).toEqual({ early: "used", repos: ["api", "secret"] });
    // And back: the early figures (with secret) are never shown.
    await adminOk("PUT", `/internal/v1/organizations/${m.org}/repositories/secret`, { private: true, collaborators: [] });
    expect(await m.repos()).toEqual({ early: "stale", repos: ["api"] });
  });
});

describe("a bound on what one summary may read (issue 31, item 3)", () => {
  /** Five merged pull requests reviewed in October 2026, and one reviewed only outside the window (a candidate that fails the check). */
  async function fiveInOctober() {
    const ctx = await setup({ installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk([
      ...[1, 2, 3, 4, 5].flatMap((n) => [
        ev.pr(ctx.org, n, { mergedAt: `2026-10-0${n + 1}T10:00:00Z` }),
        ev.review(ctx.org, n, `r${n}`, { completedAt: "2026-10-01T12:00:00Z" }),
      ]),
      ev.pr(ctx.org, 6, { mergedAt: "2026-10-15T10:00:00Z" }),
      ev.review(ctx.org, 6, "r6a", { completedAt: "2026-09-01T12:00:00Z" }),
      ev.review(ctx.org, 6, "r6b", { completedAt: "2026-11-20T12:00:00Z" }),
    ]);
    return ctx;
  }
  const window = "startDate=2026-10-01&endDate=2026-10-31";

  it("the walk stops after maxRows + 1 candidates, and says how many it found", async () => {
    const { org } = await fiveInOctober();
    const db = await shardDb(org);
    const input = scopeOf(org);
    const all = await summarizeMergedPullRequests(db, { ...input, groupBy: "week" });
    // Six candidates (the sixth reviewed on both sides of the window, not in it), five counted.
    expect([all.candidates, all.totals.pullRequests]).toEqual([6, 5]);
    // The first summary built the blocks of October's days: the five pull requests reviewed
    // inside the window now come from their days' blocks, and only the sixth's day is walked (its
    // reviews lie outside the window). Blocks count as candidates too, so the bound still refuses.
    expect(await blockDays(db, org)).toEqual([
      ...Array.from({ length: 14 }, (_, i) => day(`2026-10-${String(i + 2).padStart(2, "0")}`)),
    ]);
    for (const maxRows of [0, 2, 5]) {
      const cut = await summarizeMergedPullRequests(db, { ...input, groupBy: "week" }, { ...SUMMARY_LIMITS, maxRows });
      expect(cut.candidates).toBe(6);
      const together = await summarizeGroupings(db, { ...input, groupBys: ["week", "repo"] }, { ...SUMMARY_LIMITS, maxRows });
      expect(together.candidates).toBe(6);
    }
    // Without blocks the walk stops after maxRows + 1 candidates.
    for (const maxRows of [0, 2]) {
      await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
      const cut = await summarizeMergedPullRequests(db, { ...input, groupBy: "week" }, { ...SUMMARY_LIMITS, maxRows });
      expect(cut.candidates).toBe(maxRows + 1);
      expect(await blockDays(db, org)).toEqual([]); // refused over the bound: nothing built
    }
    const exact = await summarizeMergedPullRequests(db, { ...input, groupBy: "week" }, { ...SUMMARY_LIMITS, maxRows: 6 });
    expect(exact.candidates).toBe(6);
  });

  it("a request over the bound is a 400 naming the window, in the analytics envelope; at the bound it is answered", async () => {
    const { org, key } = await fiveInOctober();
    const request = (query: string) =>
      new Request(`https://service.test/api/analytics/v1/summary?org=${org}&${window}&${query}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
    for (const query of ["groupBy=week", "groupBy=repo&format=csv"]) {
      const refused = await fetchWithEnv(request(query), { SUMMARY_MAX_ROWS: "5" });
      expect(refused.status).toBe(400);
      expect(refused.headers.get("Content-Type")).toMatch(/^application\/json/);
      expect(await refused.json()).toEqual({
        error: "The window holds more pull requests than one summary may read.",
        details: [
          { path: "startDate", message: "the window holds more than 5 pull requests to check; narrow it or name a repository" },
        ],
      });
    }
    const answered = await fetchWithEnv(request("groupBy=week"), { SUMMARY_MAX_ROWS: "6" });
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as Summary).totals.pullRequests).toBe(5);
  });
});

describe("day blocks (storage/summary-days.ts, issue 31): built by a summary, deleted by every write to their day", () => {
  const at = (date: string, time = "10:00:00") => `2026-10-${date}T${time}Z`;
  const NEWER = "2026-11-01T00:00:00Z";

  /**
   * The figures with the blocks as stored, against the same figures walked without any block (the
   * statement as it was before blocks): equal, every grouping at once. The blocks are put back.
   */
  async function servedEqualsWalked(db: D1Database, org: string) {
    const all = ["day", "week", "repo", "author"] as const;
    // Unfiltered (the blocks' sums), and filtered by access and by author (pull request by pull
    // request); time groupings only have their medians from the blocks' duration buckets; a
    // repository list reads its repositories' own blocks (`repo_key`).
    const scopes = [
      { groupBys: all },
      { groupBys: all, accessibleRepoKeys: ["web"] },
      { groupBys: all, authorKeys: ["alice"] },
      { groupBys: all, authorKeys: ["bob"], excludedRepoKeys: ["web"] },
      { groupBys: ["day", "week", "month"] as const, counts: true },
      { groupBys: all, repoKeys: ["api"] },
      // Not a whole month: served by day blocks and their counts (a whole month by month blocks, below).
      { groupBys: ["week"] as const, repoKeys: ["web", "api"], counts: true, end: Date.parse("2026-10-30T23:59:59.999Z") },
      { groupBys: all, repoKeys: ["api", "web"], authorKeys: ["alice"] },
      // October whole: each listed repository's month block, its durations day by day.
      { groupBys: ["day", "week", "month"] as const, repoKeys: ["api", "web"] },
    ];
    // Medians from the buckets however few the pull requests (by default a small window reads durations).
    const limits = { ...SUMMARY_LIMITS, bucketsFrom: 0, bucketsPerBlock: 0 };
    const figures = (db: D1Database) =>
      Promise.all(scopes.map((scope) => summarizeGroupings(db, { ...scopeOf(org), ...scope }, limits)));
    await figures(db); // builds any block a scope lacks (a repository list's, the first time)
    const served = await figures(db);
    for (const [i, scope] of scopes.entries()) {
      const figures = served[i] as (typeof served)[number];
      if (!("counts" in scope)) expect(figures.bucketValues).toBe(0);
      else if (figures.fromBlocks > 0) expect(figures.bucketValues).toBeGreaterThan(0);
    }
    // The blocks read in slices of two days before the walk: the same figures.
    for (const [i, scope] of scopes.entries()) {
      const sliced = await summarizeGroupings(
        db,
        { ...scopeOf(org), ...scope },
        { ...limits, blockSliceDays: 2, countSliceDays: 2, countWholeDays: 2 },
      );
      expect(sliced.groupings).toEqual(served[i]?.groupings);
      expect(sliced.fromBlocks).toBe(served[i]?.fromBlocks);
    }
    const saved = await db.prepare("SELECT * FROM summary_days WHERE org_key = ?").bind(org).all();
    const savedMonths = await db.prepare("SELECT * FROM summary_months WHERE org_key = ?").bind(org).all();
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
    await db.prepare("DELETE FROM summary_months WHERE org_key = ?").bind(org).run();
    const walked: Awaited<ReturnType<typeof figures>> = [];
    for (const scope of scopes) {
      walked.push(await summarizeGroupings(db, { ...scopeOf(org), ...scope }));
      await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
      await db.prepare("DELETE FROM summary_months WHERE org_key = ?").bind(org).run();
    }
    const byKey = (g: { groups: { key: string }[] }) => [...g.groups].sort((a, b) => (a.key < b.key ? -1 : 1));
    for (const [i, w] of walked.entries()) {
      const s = served[i] as (typeof served)[number];
      expect(w.fromBlocks).toBe(0);
      expect(s.groupings.map(byKey)).toEqual(w.groupings.map(byKey));
      expect(s.groupings.map((g) => g.totals)).toEqual(w.groupings.map((g) => g.totals));
    }
    // Put the blocks back as they were (the walk above rebuilt them: the same content).
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
    await db.prepare("DELETE FROM summary_months WHERE org_key = ?").bind(org).run();
    for (const [table, rows] of [
      ["summary_days", saved.results],
      ["summary_months", savedMonths.results],
    ] as const)
      for (const row of rows) {
        const columns = Object.keys(row);
        await db
          .prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`)
          .bind(...columns.map((c) => row[c]))
          .run();
      }
    return served[0] as (typeof served)[number];
  }

  it("a summary builds the window's days, the next counts them from the blocks, and each write deletes exactly its days", async () => {
    const { org, summary } = await setup({ installedAt: "2026-01-01T00:00:00Z" });
    const window = `org=${org}&startDate=2026-10-01&endDate=2026-10-31&groupBy=week`;
    await postEventsOk([
      ...[5, 6, 7, 8].flatMap((d, i) => [
        ev.pr(org, i + 1, {
          createdAt: at(`0${d}`, "08:00:00"),
          mergedAt: at(`0${d}`),
          repo: i < 2 ? "api" : "web",
          author: i % 2 === 0 ? "alice" : "bob",
        }),
        ev.review(org, i + 1, `r${i + 1}`, { completedAt: at(`0${d}`, "09:00:00"), repo: i < 2 ? "api" : "web" }),
        ev.finding(org, i + 1, `f${i + 1}`, { createdAt: at(`0${d}`, "09:30:00"), repo: i < 2 ? "api" : "web" }),
      ]),
    ]);
    const db = await shardDb(org);
    const before = await summary(window);
    expect(before.totals.pullRequests).toBe(4);
    const [oct5, oct6, oct7, oct8, oct9] = ["05", "06", "07", "08", "09"].map((d) => day(`2026-10-${d}`)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    expect(await blockDays(db, org)).toEqual([oct5, oct6, oct7, oct8]);
    expect(await summary(window)).toEqual(before);
    const served = await servedEqualsWalked(db, org);
    expect(served.fromBlocks).toBe(4);

    // Each write deletes the blocks of the days it changes, and only those; the next summary
    // builds them again, and its figures equal the walk's.
    const steps: [string, () => Promise<unknown>, number[]][] = [
      [
        "a second review (the review span changes)",
        () => postEventsOk([ev.review(org, 1, "r1b", { completedAt: at("05", "11:00:00") })]),
        [oct5],
      ],
      [
        "a posted finding (the figures change)",
        () => postEventsOk([ev.finding(org, 2, "f2b", { createdAt: at("06", "11:00:00") })]),
        [oct6],
      ],
      [
        "a merge moved to another day (both days)",
        () =>
          postEventsOk([ev.pr(org, 3, { createdAt: at("07", "08:00:00"), mergedAt: at("09"), repo: "web", updatedAt: NEWER })]),
        [oct7, oct9],
      ],
      [
        "a new pull request merged on a day",
        () => postEventsOk([ev.pr(org, 9, { mergedAt: at("08", "12:00:00"), repo: "web" })]),
        [oct8],
      ],
      [
        "a repository renamed (its rows rewritten)",
        () => moveRows(db, { orgKey: org, repo: "api" }, { orgKey: org, repo: "api-v2" }),
        [oct5, oct6],
      ],
    ];
    // A day over the bound of a block gets a block without content: walked by every summary, not built again.
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
    const capped = await summarizeGroupings(db, { ...scopeOf(org), groupBys: ["week"] }, { ...SUMMARY_LIMITS, dayBlockMax: 0 });
    expect(capped.fromBlocks).toBe(0);
    const empty = await db
      .prepare("SELECT count(*) AS n FROM summary_days WHERE org_key = ? AND lo IS NULL AND totals IS NULL")
      .bind(org)
      .first("n");
    expect(empty).toBe(4);
    const walkedAgain = await summarizeGroupings(db, { ...scopeOf(org), groupBys: ["week"] });
    expect([walkedAgain.fromBlocks, walkedAgain.groupings[0]?.totals]).toEqual([0, capped.groupings[0]?.totals]);
    expect(walkedAgain.groupings[0]?.totals.pullRequests).toBe(4);
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();

    // A write between the slices read and the walk: the block read is gone, so the whole is read
    // again (and the write counted once), the second time from the blocks still stored.
    await summary(window);
    let writes = 0;
    const raced = await summarizeGroupings(
      db,
      { ...scopeOf(org), groupBys: ["week"] },
      { ...SUMMARY_LIMITS, blockSliceDays: 2, countSliceDays: 2, countWholeDays: 2 },
      {
        beforeWalk: async () => {
          if (writes++ === 0) await postEventsOk([ev.review(org, 2, "r2-raced", { completedAt: at("06", "12:00:00") })]);
        },
      },
    );
    expect(writes).toBe(2);
    expect(raced.fromBlocks).toBe(3);
    expect(raced.groupings[0]?.totals).toEqual(
      (await summarizeGroupings(db, { ...scopeOf(org), groupBys: ["week"] })).groupings[0]?.totals,
    );

    for (const [what, write, days] of steps) {
      await summary(window); // every day of the window has its block
      const built = await blockDays(db, org);
      await write();
      expect({ what, blocks: await blockDays(db, org) }).toEqual({ what, blocks: built.filter((d) => !days.includes(d)) });
      await summary(window);
      expect(await blockDays(db, org)).toEqual(expect.arrayContaining(built.filter((d) => d !== oct7)));
      await servedEqualsWalked(db, org);
    }
  });
  it("a repository list reads and builds its repositories' own blocks; a write deletes its repository's day and the organization's", async () => {
    const { org } = await setup({ installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk(
      [5, 6, 7].flatMap((d, i) => [
        ev.pr(org, i + 1, { createdAt: at(`0${d}`, "08:00:00"), mergedAt: at(`0${d}`), repo: i === 2 ? "web" : "api" }),
        ev.review(org, i + 1, `r${i + 1}`, { completedAt: at(`0${d}`, "09:00:00"), repo: i === 2 ? "web" : "api" }),
      ]),
    );
    const db = await shardDb(org);
    const blocks = async () =>
      (
        await db
          .prepare("SELECT repo_key AS rk, day FROM summary_days WHERE org_key = ? ORDER BY repo_key, day")
          .bind(org)
          .all<{ rk: string; day: number }>()
      ).results.map(({ rk, day }) => `${rk || "*"}:${day}`);
    const [oct5, oct6, oct7] = ["05", "06", "07"].map((d) => day(`2026-10-${d}`)) as [number, number, number];
    // Not a whole month (a whole one is served by month blocks: the next test).
    const q = {
      ...scopeOf(org, "2026-10-01T00:00:00.000Z", "2026-10-30T23:59:59.999Z"),
      repoKeys: ["api"],
      groupBys: ["week"] as const,
    };
    const first = await summarizeGroupings(db, q);
    expect([first.fromBlocks, first.groupings[0]?.totals.pullRequests]).toEqual([0, 2]);
    // Every full day from the organization's first merge of the window to its last, for the listed repository only.
    expect(await blocks()).toEqual([`api:${oct5}`, `api:${oct6}`, `api:${oct7}`]);
    const again = await summarizeGroupings(db, q);
    expect([again.fromBlocks, again.groupings]).toEqual([2, first.groupings]);
    // The organization's blocks beside them: a write to pull request 1 (api, Oct 5) deletes both of its day, nothing else.
    await summarizeGroupings(db, { ...scopeOf(org), groupBys: ["week"] });
    expect(await blocks()).toEqual([`*:${oct5}`, `*:${oct6}`, `*:${oct7}`, `api:${oct5}`, `api:${oct6}`, `api:${oct7}`]);
    await postEventsOk([ev.review(org, 1, "r1b", { completedAt: at("05", "11:00:00") })]);
    expect(await blocks()).toEqual([`*:${oct6}`, `*:${oct7}`, `api:${oct6}`, `api:${oct7}`]);
    const afterWrite = await summarizeGroupings(db, q);
    expect(afterWrite.fromBlocks).toBe(1); // Oct 6 from its block, Oct 5 walked (and built again)
    expect(afterWrite.groupings[0]?.totals).toEqual(first.groupings[0]?.totals);
    // A rename rewrites the repository's rows: the old key's and the new key's days go.
    await summarizeGroupings(db, { ...scopeOf(org), groupBys: ["week"] });
    await moveRows(db, { orgKey: org, repo: "api" }, { orgKey: org, repo: "api-v2" });
    expect(await blocks()).toEqual([`*:${oct7}`, `api:${oct7}`]);
    const renamed = await summarizeGroupings(db, { ...q, repoKeys: ["api-v2"] });
    expect(renamed.groupings[0]?.totals).toEqual(first.groupings[0]?.totals);
    expect((await summarizeGroupings(db, q)).groupings[0]?.totals.pullRequests ?? 0).toBe(0);
  });

  it("a repository list's whole months are read from month blocks made from its day blocks; a write deletes its month", async () => {
    const { org } = await setup({ installedAt: "2026-01-01T00:00:00Z" });
    // api: Oct 5 and 6, and Nov 3; web: Oct 7. November is the window's last, cut, month.
    await postEventsOk([
      ...[5, 6, 7].flatMap((d, i) => [
        ev.pr(org, i + 1, { createdAt: at(`0${d}`, "08:00:00"), mergedAt: at(`0${d}`), repo: i === 2 ? "web" : "api" }),
        ev.review(org, i + 1, `r${i + 1}`, { completedAt: at(`0${d}`, "09:00:00"), repo: i === 2 ? "web" : "api" }),
      ]),
      ev.pr(org, 4, { createdAt: "2026-11-03T08:00:00Z", mergedAt: "2026-11-03T10:00:00Z", repo: "api" }),
      ev.review(org, 4, "r4", { completedAt: "2026-11-03T09:00:00Z", repo: "api" }),
    ]);
    const db = await shardDb(org);
    const months = async () =>
      (
        await db
          .prepare(
            "SELECT repo_key AS rk, month, pull_requests AS n, lo IS NOT NULL AS content FROM summary_months WHERE org_key = ? ORDER BY rk, month",
          )
          .bind(org)
          .all<{ rk: string; month: number; n: number; content: number }>()
      ).results.map(({ rk, month, n, content }) => `${rk}:${month}:${n}:${content ? "content" : "marker"}`);
    const dayBlocks = async (rk: string) =>
      (
        await db
          .prepare("SELECT day FROM summary_days WHERE org_key = ? AND repo_key = ? ORDER BY day")
          .bind(org, rk)
          .all<{ day: number }>()
      ).results.map((r) => r.day);
    const oct1 = day("2026-10-01");
    // The triggers' month (SQL) is the Worker's, on every day of four years either side of 1970 and now.
    const sample = [
      ...Array.from({ length: 1461 }, (_, i) => i - 730),
      ...Array.from({ length: 1461 }, (_, i) => oct1 - 730 + i),
    ];
    const { results: sqlMonths } = await db
      .prepare(
        "SELECT CAST(strftime('%s', value * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400 AS mo FROM json_each(?) ORDER BY key",
      )
      .bind(JSON.stringify(sample))
      .all<{ mo: number }>();
    expect(sqlMonths.map((r) => r.mo)).toEqual(sample.map(monthStartDay));
    // Groups come in no particular order.
    const ordered = (f: { groupings: { groups: { key: string }[] }[] }) =>
      f.groupings.map((g) => ({ ...g, groups: [...g.groups].sort((a, b) => (a.key < b.key ? -1 : 1)) }));
    const q = {
      ...scopeOf(org, "2026-10-01T00:00:00.000Z", "2026-11-10T23:59:59.999Z"),
      repoKeys: ["api", "web"],
      groupBys: ["week", "month"] as const,
    };
    const first = await summarizeGroupings(db, q);
    expect([first.fromBlocks, first.groupings[0]?.totals.pullRequests]).toEqual([0, 4]);
    // October's month block of each listed repository, and every day of October (the month is made from them).
    expect(await months()).toEqual([`api:${oct1}:2:content`, `web:${oct1}:1:content`]);
    expect(await dayBlocks("api")).toEqual(expect.arrayContaining(Array.from({ length: 31 }, (_, i) => oct1 + i)));
    const again = await summarizeGroupings(db, q);
    expect([again.fromBlocks, ordered(again)]).toEqual([4, ordered(first)]); // October's three from months, Nov 3 from its day

    // A write to an October pull request of api deletes api's October, not web's.
    await postEventsOk([ev.review(org, 1, "r1b", { completedAt: at("05", "11:00:00"), repo: "api" })]);
    expect(await months()).toEqual([`web:${oct1}:1:content`]);
    const afterWrite = await summarizeGroupings(db, q);
    expect(afterWrite.fromBlocks).toBe(3); // web's month, api's Oct 6 and Nov 3 day blocks (Oct 5 walked, then built again)
    expect(afterWrite.groupings[0]?.totals).toEqual(first.groupings[0]?.totals);
    expect(await months()).toEqual([`api:${oct1}:2:content`, `web:${oct1}:1:content`]);

    // A window that starts after a pull request's review: October's block holds a review before it,
    // so its days are served by day blocks or walked, and the figures still equal the walk's.
    const late = { ...q, start: Date.parse("2026-10-05T09:30:00.000Z") };
    const lateServed = await summarizeGroupings(db, late);
    await db.prepare("DELETE FROM summary_days WHERE org_key = ?").bind(org).run();
    await db.prepare("DELETE FROM summary_months WHERE org_key = ?").bind(org).run();
    const lateWalked = await summarizeGroupings(db, { ...late, start: late.start });
    expect(ordered(lateServed)).toEqual(ordered(lateWalked));
    expect(lateServed.groupings[0]?.totals.pullRequests).toBe(4); // pull request 1 by its second review (11:00)

    // A month over the bound of a month block gets a marker: never served, its days served by their blocks.
    await db.prepare("DELETE FROM summary_months WHERE org_key = ?").bind(org).run();
    const capped = { ...SUMMARY_LIMITS, monthBlockMax: 1 };
    await summarizeGroupings(db, q, capped);
    expect(await months()).toEqual([`api:${oct1}:2:marker`, `web:${oct1}:1:content`]);
    const withMarker = await summarizeGroupings(db, q, capped);
    expect([withMarker.fromBlocks, ordered(withMarker)]).toEqual([4, ordered(first)]);

    // Over the bound of pull requests read from blocks, none is served, months included: all walked.
    const overBound = await summarizeGroupings(db, q, { ...SUMMARY_LIMITS, blocksMax: 1 });
    expect([overBound.fromBlocks, ordered(overBound)]).toEqual([0, ordered(first)]);

    // Day blocks beside the months, read as durations: the small ones folded into rows of a month's
    // shape, a day of more than 100 pull requests a row of its own. The same figures as the walk.
    await postEventsOk(
      Array.from({ length: 101 }, (_, i) => [
        ev.pr(org, 100 + i, {
          createdAt: "2026-11-02T08:00:00Z",
          mergedAt: `2026-11-02T${String(10 + (i % 10)).padStart(2, "0")}:00:00Z`,
          repo: "web",
        }),
        ev.review(org, 100 + i, `r${100 + i}`, {
          completedAt: `2026-11-02T09:${String(i % 60).padStart(2, "0")}:00Z`,
          repo: "web",
        }),
      ]).flat(),
    );
    await summarizeGroupings(db, q, capped); // builds November 2's blocks
    const mixed = await summarizeGroupings(db, q, capped);
    expect(mixed.fromBlocks).toBe(105);
    const mixedWalked = await summarizeGroupings(db, q, { ...SUMMARY_LIMITS, blocksMax: -1 });
    expect([mixedWalked.fromBlocks, ordered(mixed)]).toEqual([0, ordered(mixedWalked)]);
    expect(mixed.groupings[0]?.totals.pullRequests).toBe(105);

    // A rename rewrites api's rows: its month blocks go, under the old key and the new.
    await summarizeGroupings(db, { ...q, repoKeys: ["api-v2"] });
    await moveRows(db, { orgKey: org, repo: "api" }, { orgKey: org, repo: "api-v2" });
    expect(await months()).toEqual([`web:${oct1}:1:content`]);
    await summarizeGroupings(db, { ...q, repoKeys: ["api-v2"] });
    const renamed = await summarizeGroupings(db, { ...q, repoKeys: ["api-v2"] });
    expect([renamed.fromBlocks, renamed.groupings[0]?.totals.pullRequests]).toEqual([3, 3]);
    expect((await summarizeGroupings(db, { ...q, repoKeys: ["web"] })).groupings[0]?.totals.pullRequests).toBe(102);
  });
});

describe("plans (storage/analytics-summary.ts SummaryPlans): a window seen to hold few pull requests is walked", () => {
  const scope = (org: string, start: string, end: string) => ({ ...scopeOf(org, start, end), groupBys: ["week"] as const });

  it("chooses the walk only for a window at most a day longer than one seen to hold fewer than walkBelow candidates, learned from an admin's requests without lists", () => {
    const plans = new SummaryPlans(3, 2);
    const october = scope("a", "2026-10-01T00:00:00Z", "2026-10-31T23:59:59.999Z");
    expect(plans.walks(october)).toBe(false); // nothing seen
    plans.record({ ...october, repoKeys: ["api"] }, 0); // a list counts only its repositories
    plans.record({ ...october, authorKeys: ["alice"] }, 0);
    plans.record({ ...october, accessibleRepoKeys: ["api"] }, 0); // a member's access list
    expect(plans.walks(october)).toBe(false);
    // Repositories removed from the installation are left out of every admin's request: it teaches.
    plans.record({ ...october, excludedRepoKeys: ["web"] }, 2);
    expect(plans.walks(october)).toBe(true);
    plans.record(october, 2);
    expect(plans.walks(october)).toBe(true);
    expect(plans.walks({ ...october, repoKeys: ["api"], authorKeys: ["bob"] })).toBe(true); // filtered: fewer still
    expect(plans.walks({ ...october, end: october.end + DAY })).toBe(true); // a day longer (a window to now grows)
    expect(plans.walks({ ...october, end: october.end + DAY + 1 })).toBe(false); // longer still
    expect(plans.walks({ ...october, orgKey: "b" })).toBe(false);
    plans.record(october, 3); // as many as walkBelow: the full statement again
    expect(plans.walks(october)).toBe(false);
    plans.record(october, 0);
    plans.record({ ...october, orgKey: "b" }, 0);
    plans.record({ ...october, orgKey: "c" }, 0); // over the capacity: the oldest ("a") is forgotten
    expect(["a", "b", "c"].map((orgKey) => plans.walks({ ...october, orgKey }))).toEqual([false, true, true]);
    plans.clear();
    expect(["b", "c"].map((orgKey) => plans.walks({ ...october, orgKey }))).toEqual([false, false]);
  });

  it("a small organization's second summary is walked: the same figures, no block read or built, until its plans are forgotten", async () => {
    const org = await createOrg(unique("plan"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
    const user = await createUser();
    await addMember(org, user, "admin");
    const { key } = await createKey(user, "analytics");
    const window = `org=${org}&startDate=2026-10-01&endDate=2026-10-31`;
    const summary = async (query: string) => {
      const res = await call(`/api/analytics/v1/summary?${window}&${query}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      return res.json();
    };
    await postEventsOk(
      [5, 6, 7].flatMap((d, i) => [
        ev.pr(org, i + 1, { createdAt: `2026-10-0${d}T08:00:00Z`, mergedAt: `2026-10-0${d}T10:00:00Z` }),
        ev.review(org, i + 1, `r${i + 1}`, { completedAt: `2026-10-0${d}T09:00:00Z` }),
      ]),
    );
    const db = await shardDb(org);
    SUMMARY_PLANS.clear();
    const first = await summary("groupBy=week"); // the full statement: builds the days
    const days = [day("2026-10-05"), day("2026-10-06"), day("2026-10-07")];
    expect(await blockDays(db, org)).toEqual(days);
    // A write deletes Oct 6's block; the next summaries are walked (three candidates seen), so
    // none builds it again, and each answers what the full statement answers.
    await postEventsOk([ev.review(org, 2, "r2b", { completedAt: "2026-10-06T11:00:00Z" })]);
    expect(await blockDays(db, org)).toEqual([days[0], days[2]]);
    const walked = await summary("groupBy=week");
    const byRepo = await summary("groupBy=repo&repo=api");
    expect(await blockDays(db, org)).toEqual([days[0], days[2]]);
    SUMMARY_PLANS.clear();
    expect(await summary("groupBy=week")).toEqual(walked);
    expect(await summary("groupBy=repo&repo=api")).toEqual(byRepo);
    expect(await blockDays(db, org)).toEqual(days); // the full statement built it again
    expect(walked).toEqual(first);
  });
});
