import { afterEach, describe, expect, it, vi } from "vitest";
import { GAP_TIER_BOUNDS_MS } from "../../src/storage/review-span";
import {
  addMember,
  adminOk,
  call,
  createKey,
  createOrg,
  createUser,
  ev,
  failingNamespace,
  fetchWithEnv,
  type OrgOptions,
  postEventsOk,
  unique,
} from "./helpers";

type Row = Record<string, unknown> & { repo: string; prNumber: number; mergedAt: string };
type Page = { data: Row[]; nextCursor: string | null };
type ErrorBody = { error: string; details?: { path: string; message: string }[] };

const DAY = 86_400_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An organization, a member of it with an analytics key, and a GET helper. */
async function setup(options: OrgOptions & { role?: "member" | "admin" | "viewer" } = {}) {
  const org = await createOrg(unique("an"), { plan: "pro", ...options });
  const user = await createUser();
  await addMember(org, user, options.role ?? "admin");
  const { key } = await createKey(user, "analytics");
  const get = (query: string) => call(`/api/analytics/v1/prs?${query}`, { headers: { Authorization: `Bearer ${key}` } });
  const page = async (query: string): Promise<Page> => {
    const res = await get(query);
    if (res.status !== 200) throw new Error(`${query} → ${res.status}: ${await res.text()}`);
    return (await res.json()) as Page;
  };
  return { org, user, key, get, page };
}

/** A merged pull request with one completed review at `reviewedAt`. */
const reviewedPr = (org: string, prNumber: number, mergedAt: string, reviewedAt: string, extra: Record<string, unknown> = {}) => [
  ev.pr(org, prNumber, { mergedAt, createdAt: "2020-01-01T00:00:00Z", ...extra }),
  ev.review(org, prNumber, `r${prNumber}`, { completedAt: reviewedAt, repo: extra.repo ?? "api" }),
];

const numbers = (p: Page) => p.data.map((r) => r.prNumber);

async function walk(
  pageFn: (q: string) => Promise<Page>,
  query: string,
  perPage: number,
  between?: (i: number) => Promise<void>,
) {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 500; i++) {
    const p: Page = await pageFn(`${query}&perPage=${perPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    rows.push(...p.data);
    if (p.nextCursor === null) return rows;
    if (p.data.length !== perPage) throw new Error("a page before the last one is not full");
    cursor = p.nextCursor;
    await between?.(i);
  }
  throw new Error("walk did not end");
}

afterEach(() => {
  vi.useRealTimers();
});

describe("authentication (401)", () => {
  it("needs an analytics key: none, a members key, or garbage are refused", async () => {
    const { org, user } = await setup();
    const { key: membersKey } = await createKey(user, "members");
    const attempts: Record<string, string>[] = [{}, { Authorization: `Bearer ${membersKey}` }, { Authorization: "Bearer cak_x" }];
    for (const headers of attempts) {
      const res = await call(`/api/analytics/v1/prs?org=${org}`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
  });
});

describe("failures of the stores behind it", () => {
  it("an unreachable organization object is a 500 in the analytics envelope, without internals", async () => {
    const { org, key } = await setup();
    const request = new Request(`https://service.test/api/analytics/v1/prs?org=${org}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = await fetchWithEnv(request, { ORGANIZATIONS: failingNamespace({ overloaded: true }) });
      expect(res.status).toBe(500);
      const body = await res.text();
      expect(JSON.parse(body)).toEqual({ error: expect.stringContaining("access checks") });
      expect(body).not.toContain("internal detail");
    } finally {
      logged.mockRestore();
    }
  });

  it("a failing D1 is the same 500 sentence as a failing Durable Object, logged once as a storage failure", async () => {
    const { org, key } = await setup();
    const fail = () => {
      throw new Error("D1_ERROR: disk I/O error in secret_table");
    };
    const brokenDb = { withSession: () => ({ prepare: fail }), prepare: fail, batch: fail } as unknown as D1Database;
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const request = new Request(`https://service.test/api/analytics/v1/prs?org=${org}`, {
        headers: { Authorization: `Bearer ${key}`, "X-Correlation-Id": "d1-down" },
      });
      // Every shard fails: the organization's is either (contract section 16).
      const d1 = await fetchWithEnv(request, { DB: brokenDb, ANALYTICS_2: brokenDb });
      const durable = await fetchWithEnv(request, { ORGANIZATIONS: failingNamespace({ overloaded: true }) });
      expect(d1.status).toBe(500);
      const body = await d1.json();
      expect(body).toEqual(await durable.json());
      expect(JSON.stringify(body)).not.toContain("secret_table");
      const lines = logged.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>);
      expect(lines.map((l) => l.event)).toEqual(["storage failure: D1", "storage failure: Durable Object"]);
    } finally {
      logged.mockRestore();
    }
  });
});

describe("order of checks", () => {
  it("401 before 400: bad parameters without a key", async () => {
    expect((await call("/api/analytics/v1/prs?perPage=0")).status).toBe(401);
  });

  it("401 before 400 also for a real key whose owner is blocked (the key verdict is judged before the parameters)", async () => {
    const { user, get } = await setup();
    await adminOk("PUT", `/internal/v1/users/${user}`, { githubLogin: `user${user}`, blocked: true });
    expect((await get("perPage=0")).status).toBe(401);
  });

  it("400 before 404: bad parameters for an unknown organization", async () => {
    const { get } = await setup();
    const res = await get("org=no-such-org-anywhere&perPage=0");
    expect(res.status).toBe(400);
  });

  it("404 for an organization without installation", async () => {
    const { get } = await setup();
    const res = await get(`org=${unique("ghost")}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "The organization cannot be resolved to an installation." });
  });

  it("403 installation blocked comes before not on Pro", async () => {
    const { org, get } = await setup({ blocked: true, plan: "free" });
    const res = await get(`org=${org}`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).error).toMatch(/blocked/);
  });

  it("403 not on Pro comes before not a member", async () => {
    const { get } = await setup({ plan: "team" });
    const other = await createOrg(unique("team"), { plan: "team" });
    const res = await get(`org=${other}`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).error).toMatch(/Pro plan/);
  });

  it("403 for a caller who is not a member, before the repository check", async () => {
    const { get } = await setup();
    const other = await createOrg(unique("pro"), { plan: "pro" });
    const res = await get(`org=${other}&repo=secret`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).error).toMatch(/organization/);
  });

  it("403 for a repository the caller cannot access or that does not exist", async () => {
    const { org, get } = await setup({ role: "member" });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/secret`, { private: true });
    for (const repo of ["secret", "does-not-exist"]) {
      const res = await get(`org=${org}&repo=${repo}`);
      expect(res.status).toBe(403);
      expect(((await res.json()) as ErrorBody).error).toMatch(/repository/);
    }
  });

  it("403 for an admin too when the organization does not have the repository; 200 when reviewer events know it", async () => {
    const { org, get } = await setup({ role: "admin" });
    const missing = await get(`org=${org}&repo=never-heard-of-it`);
    expect(missing.status).toBe(403);
    expect(((await missing.json()) as ErrorBody).error).toMatch(/repository/);
    await postEventsOk(reviewedPr(org, 1, "2026-10-02T10:00:00Z", "2026-10-01T12:00:00Z", { repo: "events-only" }));
    // Known from events: it exists (private until registered), so an admin may export it, even an empty window of it.
    expect((await get(`org=${org}&repo=events-only&startDate=2026-10-01&endDate=2026-10-03`)).status).toBe(200);
    expect((await get(`org=${org}&repo=EVENTS-ONLY&startDate=2020-01-01&endDate=2020-01-02`)).status).toBe(200);
  });

  it("200 for a member of a Pro organization", async () => {
    const { org, get } = await setup({ role: "viewer" });
    expect((await get(`org=${org}`)).status).toBe(200);
  });
});

describe("parameters (400, one details entry per offending parameter)", () => {
  it.each([
    ["", "org", "The org parameter is required."],
    ["org=%20%20", "org", "The org parameter is required."],
    [`org=${"o".repeat(256)}`, "org", "Invalid query parameters."],
    ["org=a&org=b", "org", "Invalid query parameters."],
    [`org=a&repo=${"r".repeat(256)}`, "repo", "Invalid query parameters."],
    ["org=a&repo=x&repo=y", "repo", "Invalid query parameters."],
    ["org=a&perPage=0", "perPage", "Invalid query parameters."],
    ["org=a&perPage=101", "perPage", "Invalid query parameters."],
    ["org=a&perPage=10.5", "perPage", "Invalid query parameters."],
    ["org=a&perPage=1e1", "perPage", "Invalid query parameters."],
    ["org=a&perPage=-1", "perPage", "Invalid query parameters."],
    ["org=a&perPage=0x10", "perPage", "Invalid query parameters."],
    ["org=a&perPage=ten", "perPage", "Invalid query parameters."],
    [`org=a&perPage=${"0".repeat(255)}5`, "perPage", "Invalid query parameters."],
    ["org=a&startDate=2026-03-10T10:00:00", "startDate", "Invalid query parameters."],
    ["org=a&startDate=2026-02-30", "startDate", "Invalid query parameters."],
    ["org=a&endDate=2026-13-01", "endDate", "Invalid query parameters."],
    ["org=a&endDate=2026-04-31T00:00:00Z", "endDate", "Invalid query parameters."],
    ["org=a&startDate=1969-12-31", "startDate", "Invalid query parameters."],
    ["org=a&startDate=1969-12-31T23:59:59Z", "startDate", "Invalid query parameters."],
    ["org=a&endDate=last%20week", "endDate", "Invalid query parameters."],
    ["org=a&startDate=2026-03-10T10:00:00%2B25:00", "startDate", "Invalid query parameters."],
    ["org=a&cursor=abc", "cursor", "Invalid cursor."],
    ["org=a&cursor=2026-03-10T10:00:00.000Z", "cursor", "Invalid cursor."],
    ["org=a&cursor=2026-03-10T10:00:00.000Z%7C0", "cursor", "Invalid cursor."],
    ["org=a&cursor=2026-03-10T10:00:00.000Z%7C-3", "cursor", "Invalid cursor."],
    ["org=a&cursor=2026-03-10T10:00:00.000Z%7C1.5", "cursor", "Invalid cursor."],
    ["org=a&cursor=2026-02-30T10:00:00.000Z%7C5", "cursor", "Invalid cursor."],
    ["org=a&cursor=2026-03-10T10:00:00.000Z%7C5%7C6", "cursor", "Invalid cursor."],
    ["org=a&cursor=%7C5", "cursor", "Invalid cursor."],
    ["org=a&startDate=2026-03-11&endDate=2026-03-10", "startDate", "Invalid date range: startDate is after endDate."],
    [
      "org=a&startDate=2026-03-10T12:00:00Z&endDate=2026-03-10T11:59:59.999Z",
      "startDate",
      "Invalid date range: startDate is after endDate.",
    ],
    ["org=a&startDate=2999-01-01", "startDate", "Invalid date range: startDate is after endDate."],
  ])("%s → 400 naming %s", async (query, path, message) => {
    const { get } = await setup();
    const res = await get(query);
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error).toBe(message);
    expect(body.details).toEqual([{ path, message: expect.any(String) }]);
  });

  it.each([
    ["startDate=last%20week", "startDate", "must be an ISO 8601 timestamp or a YYYY-MM-DD date"],
    ["endDate=2026-03-10T10:00:00", "endDate", "timestamp must carry a time zone (Z or ±HH:MM)"],
    ["startDate=2026-02-30", "startDate", "is not a valid calendar date"],
    ["startDate=1969-12-31", "startDate", "must not be before 1970-01-01"],
    ["endDate=9999-12-31T23:59:59.999-01:00", "endDate", "is too far in the future"],
  ])("date parameters keep their own wording, which offers YYYY-MM-DD: %s", async (query, path, message) => {
    const { get } = await setup();
    const res = await get(`org=a&${query}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).details).toEqual([{ path, message }]);
  });

  it("names every offending parameter at once", async () => {
    const { get } = await setup();
    const res = await get("perPage=0&startDate=x&cursor=y");
    const body = (await res.json()) as ErrorBody;
    expect(body.details?.map((d) => d.path).sort()).toEqual(["cursor", "org", "perPage", "startDate"]);
  });

  it("trims values, ignores blanks and unknown parameters, echoes the trimmed org as sent", async () => {
    const { org, page } = await setup();
    const dayAgo = new Date(Date.now() - DAY).toISOString();
    await postEventsOk(reviewedPr(org, 1, dayAgo, dayAgo));
    const upper = org.toUpperCase();
    const p = await page(`org=%20${upper}%20&repo=%20&startDate=&endDate=%20&cursor=&perPage=%2010%20&colour=red`);
    expect(p.data).toHaveLength(1);
    expect(p.data[0]?.org).toBe(upper);
  });

  it("trims before checking lengths: 255 characters inside spaces is valid, 256 is not", async () => {
    const { get } = await setup();
    const at255 = await get(`org=%20%20${"o".repeat(255)}%20&repo=%20${"r".repeat(255)}%20`);
    expect(at255.status).toBe(404); // valid parameters; no such organization
    const at256 = await get(`org=%20${"o".repeat(256)}%20`);
    expect(at256.status).toBe(400);
  });

  it("perPage accepts leading zeros and the bounds 1 and 100", async () => {
    const { org, get } = await setup();
    for (const perPage of ["1", "100", "007"]) expect((await get(`org=${org}&perPage=${perPage}`)).status).toBe(200);
  });
});

describe("default windows (neither bound)", () => {
  const now = Date.parse("2026-06-15T12:00:00.000Z");
  const iso = (ms: number) => new Date(ms).toISOString();

  async function world(installedAgo: number) {
    const s = await setup({ installedAt: iso(now - installedAgo) });
    // Reviews at the edges of each candidate window, and just outside them.
    const points = [
      [1, now - DAY], // 24 h edge: inside every window
      [2, now - DAY - 1],
      [3, now - 7 * DAY],
      [4, now - 7 * DAY - 1],
      [5, now - 30 * DAY],
      [6, now - 30 * DAY - 1],
      [7, now], // the end is inclusive
    ] as const;
    await postEventsOk(points.flatMap(([n, at]) => reviewedPr(s.org, n, iso(now - 60 * DAY + n), iso(at))));
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(now);
    return s;
  }

  it("installation 2 days old: the last 24 hours", async () => {
    const { org, page } = await world(2 * DAY);
    expect(numbers(await page(`org=${org}`)).sort()).toEqual([1, 7]);
  });

  it("installation 10 days old: the last 7 days", async () => {
    const { org, page } = await world(10 * DAY);
    expect(numbers(await page(`org=${org}`)).sort()).toEqual([1, 2, 3, 7]);
  });

  it("installation 40 days old: the last 30 days", async () => {
    const { org, page } = await world(40 * DAY);
    expect(numbers(await page(`org=${org}`)).sort()).toEqual([1, 2, 3, 4, 5, 7]);
  });

  it("exactly 7 and exactly 30 days of history pick the longer window", async () => {
    const seven = await world(7 * DAY);
    expect(numbers(await seven.page(`org=${seven.org}`)).sort()).toEqual([1, 2, 3, 7]);
    const thirty = await world(30 * DAY);
    expect(numbers(await thirty.page(`org=${thirty.org}`)).sort()).toEqual([1, 2, 3, 4, 5, 7]);
  });
});

describe("explicit windows", () => {
  async function around(points: [number, string][]) {
    const s = await setup({ installedAt: "2026-01-01T00:00:00Z" });
    await postEventsOk(points.flatMap(([n, at]) => reviewedPr(s.org, n, `2026-05-01T00:00:00.00${n}Z`, at)));
    return s;
  }

  it("a date-only endDate includes 23:59:59.999Z and excludes the next millisecond", async () => {
    const { org, page } = await around([
      [1, "2026-03-10T23:59:59.999Z"],
      [2, "2026-03-11T00:00:00.000Z"],
    ]);
    expect(numbers(await page(`org=${org}&startDate=2026-03-01&endDate=2026-03-10`))).toEqual([1]);
  });

  it("a date-only startDate starts at 00:00:00.000Z, inclusive", async () => {
    const { org, page } = await around([
      [1, "2026-03-10T00:00:00.000Z"],
      [2, "2026-03-09T23:59:59.999Z"],
    ]);
    expect(numbers(await page(`org=${org}&startDate=2026-03-10&endDate=2026-03-20`))).toEqual([1]);
  });

  it("timestamp bounds are inclusive at both ends; fractions are kept to the millisecond", async () => {
    const { org, page } = await around([
      [1, "2026-03-10T10:00:00.000Z"],
      [2, "2026-03-10T11:00:00.000Z"],
      [3, "2026-03-10T09:59:59.999Z"],
      [4, "2026-03-10T11:00:00.001Z"],
    ]);
    const p = await page(`org=${org}&startDate=2026-03-10T10:00:00Z&endDate=2026-03-10T11:00:00.000999Z`);
    expect(numbers(p).sort()).toEqual([1, 2]);
  });

  it("offsets are converted to UTC", async () => {
    const { org, page } = await around([
      [1, "2026-03-09T23:00:00.000Z"],
      [2, "2026-03-09T22:59:59.999Z"],
      [3, "2026-03-10T05:30:00.000Z"],
      [4, "2026-03-10T05:30:00.001Z"],
    ]);
    const p = await page(
      `org=${org}&startDate=${encodeURIComponent("2026-03-10T01:00:00+02:00")}&endDate=${encodeURIComponent("2026-03-10T00:00:00-05:30")}`,
    );
    expect(numbers(p).sort()).toEqual([1, 3]);
  });

  it("only endDate: the window starts at the installation", async () => {
    const { org, page } = await around([
      [1, "2025-12-31T23:59:59.999Z"],
      [2, "2026-01-01T00:00:00.000Z"],
    ]);
    expect(numbers(await page(`org=${org}&endDate=2026-02-01`))).toEqual([2]);
    expect(numbers(await page(`org=${org}&endDate=2025-06-01`))).toEqual([]);
  });

  it("only startDate: the window ends now", async () => {
    const now = Date.parse("2026-04-01T00:00:00Z");
    const { org, page } = await around([
      [1, "2026-03-31T23:59:59.999Z"],
      [2, "2026-04-01T00:00:00.001Z"],
    ]);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(now);
    expect(numbers(await page(`org=${org}&startDate=2026-03-01`))).toEqual([1]);
  });
});

describe("which pull requests are listed", () => {
  it("merged, with a completed review in the window (before or after the merge); other reviews never count", async () => {
    const { org, page } = await setup();
    await postEventsOk([
      ...reviewedPr(org, 1, "2026-05-10T00:00:00Z", "2026-05-09T00:00:00Z"), // reviewed before merge
      ...reviewedPr(org, 2, "2026-05-01T00:00:00Z", "2026-05-09T00:00:00Z"), // reviewed after merge
      ev.pr(org, 3, { mergedAt: null }), // not merged
      ev.review(org, 3, "r3", { completedAt: "2026-05-09T00:00:00Z" }),
      ev.pr(org, 4, { mergedAt: "2026-05-09T00:00:00Z" }), // only failed / in-progress reviews in the window
      ev.review(org, 4, "r4a", { status: "failed", completedAt: null }),
      ev.review(org, 4, "r4b", { status: "in_progress", completedAt: null }),
      ev.pr(org, 5, { mergedAt: "2026-05-09T00:00:00Z" }), // no review at all
      ev.review(org, 6, "r6", { completedAt: "2026-05-09T00:00:00Z" }), // review without its pull request yet
    ]);
    expect(numbers(await page(`org=${org}&startDate=2026-05-08&endDate=2026-05-10`))).toEqual([1, 2]);
  });

  it("a completed review outside the window does not list the pull request", async () => {
    const { org, page } = await setup();
    await postEventsOk(reviewedPr(org, 1, "2026-05-09T00:00:00Z", "2026-04-01T00:00:00Z"));
    expect(numbers(await page(`org=${org}&startDate=2026-05-08&endDate=2026-05-10`))).toEqual([]);
  });

  it("repo narrows to one repository, case-insensitively", async () => {
    const { org, page } = await setup();
    await postEventsOk([
      ...reviewedPr(org, 1, "2026-05-09T00:00:00Z", "2026-05-09T00:00:00Z", { repo: "Api" }),
      ...reviewedPr(org, 2, "2026-05-09T00:00:00Z", "2026-05-09T00:00:00Z", { repo: "web" }),
    ]);
    const p = await page(`org=${org}&repo=API&startDate=2026-05-01&endDate=2026-05-31`);
    expect(p.data.map((r) => [r.repo, r.prNumber])).toEqual([["Api", 1]]);
  });

  it("private repository rows are hidden from a member who is not a collaborator", async () => {
    const admin = await setup({ role: "admin" });
    const org = admin.org;
    const member = await createUser();
    const collaborator = await createUser();
    await addMember(org, member, "member");
    await addMember(org, collaborator, "viewer");
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/vault`, {
      private: true,
      collaborators: [collaborator],
    });
    await postEventsOk([
      ...reviewedPr(org, 1, "2026-05-09T00:00:00Z", "2026-05-09T00:00:00Z", { repo: "api" }),
      ...reviewedPr(org, 2, "2026-05-09T00:00:00Z", "2026-05-09T00:00:00Z", { repo: "vault" }),
      ...reviewedPr(org, 3, "2026-05-09T00:00:00Z", "2026-05-09T00:00:00Z", { repo: "unregistered" }),
    ]);
    const q = `org=${org}&startDate=2026-05-01&endDate=2026-05-31`;
    const as = async (user: string) => {
      const { key } = await createKey(user, "analytics");
      const res = await call(`/api/analytics/v1/prs?${q}`, { headers: { Authorization: `Bearer ${key}` } });
      return ((await res.json()) as Page).data.map((r) => r.repo).sort();
    };
    expect(await as(member)).toEqual(["api"]);
    expect(await as(collaborator)).toEqual(["api", "vault"]);
    expect((await admin.page(q)).data.map((r) => r.repo).sort()).toEqual(["api", "unregistered", "vault"]);
  });
});

describe("metrics", () => {
  const window = "startDate=2026-05-01&endDate=2026-05-31";

  async function onePr(events: (org: string) => unknown[], prExtra: Record<string, unknown> = {}) {
    const { org, page } = await setup();
    await postEventsOk([...reviewedPr(org, 1, "2026-05-10T00:00:00Z", "2026-05-09T00:00:00Z", prExtra), ...events(org)]);
    const p = await page(`org=${org}&${window}`);
    expect(p.data).toHaveLength(1);
    return p.data[0] as Row;
  }

  it("flagged: posted findings created inside the window; fixed: those with aiAddressed", async () => {
    const row = await onePr((org) => [
      ev.finding(org, 1, "in-fixed", { createdAt: "2026-05-02T00:00:00Z", aiAddressed: true }),
      ev.finding(org, 1, "in-open", { createdAt: "2026-05-31T23:59:59.999Z" }),
      ev.finding(org, 1, "before", { createdAt: "2026-04-30T23:59:59.999Z", aiAddressed: true }),
      ev.finding(org, 1, "after", { createdAt: "2026-06-01T00:00:00Z", aiAddressed: true }),
      ev.finding(org, 1, "unposted", { createdAt: "2026-05-02T00:00:00Z", posted: false, aiAddressed: true }),
    ]);
    expect(row.numberOfServiceIssuesFlagged).toBe(2);
    expect(row.numberOfServiceIssuesFixed).toBe(1);
  });

  it("positive feedback without a detected fix is not a fix; a downvote does not erase a fix", async () => {
    const row = await onePr((org) => [
      ev.finding(org, 1, "liked", { createdAt: "2026-05-02T00:00:00Z", feedback: "positive" }),
      ev.finding(org, 1, "fixed-downvoted", { createdAt: "2026-05-02T00:00:00Z", aiAddressed: true, feedback: "negative" }),
    ]);
    expect(row.numberOfServiceIssuesFlagged).toBe(2);
    expect(row.numberOfServiceIssuesFixed).toBe(1);
  });

  it("serviceFirstReviewedAt is the earliest completed review, even outside the window", async () => {
    const row = await onePr((org) => [
      ev.review(org, 1, "early", { completedAt: "2026-03-01T08:00:00.123Z" }),
      ev.review(org, 1, "earlier-failed", { status: "failed", completedAt: null }),
    ]);
    expect(row.serviceFirstReviewedAt).toBe("2026-03-01T08:00:00.123Z");
  });

  it("AI lines: the sum of records, capped at added + deleted", async () => {
    const row = await onePr((org) => [ev.ai(org, 1, "a", 8), ev.ai(org, 1, "b", 9)], { linesAdded: 10, linesDeleted: 5 });
    expect(row.totalAiLinesAuthored).toBe(15);
    const under = await onePr((org) => [ev.ai(org, 1, "a", 8), ev.ai(org, 1, "b", 2)], { linesAdded: 10, linesDeleted: 5 });
    expect(under.totalAiLinesAuthored).toBe(10);
  });

  it("AI lines with one side of the line counts null: the missing side counts 0", async () => {
    const row = await onePr((org) => [ev.ai(org, 1, "a", 50)], { linesAdded: null, linesDeleted: 7 });
    expect(row).toMatchObject({ linesAdded: null, linesDeleted: 7, totalAiLinesAuthored: 7 });
  });

  it("AI lines with both line counts null: not capped", async () => {
    const row = await onePr((org) => [ev.ai(org, 1, "a", 50)], { linesAdded: null, linesDeleted: null });
    expect(row).toMatchObject({ linesAdded: null, linesDeleted: null, totalAiLinesAuthored: 50 });
  });

  it("no authorship records: null; records of zero lines: 0", async () => {
    expect((await onePr(() => [])).totalAiLinesAuthored).toBeNull();
    expect((await onePr((org) => [ev.ai(org, 1, "z", 0)])).totalAiLinesAuthored).toBe(0);
  });

  it("every field, with dates in UTC millisecond form", async () => {
    const row = await onePr(() => [], { createdAt: "2026-05-08T01:02:03+01:00", author: "bob", linesAdded: 3, linesDeleted: 4 });
    expect(row).toEqual({
      org: expect.any(String),
      repo: "api",
      prNumber: 1,
      author: "bob",
      createdAt: "2026-05-08T00:02:03.000Z",
      mergedAt: "2026-05-10T00:00:00.000Z",
      linesAdded: 3,
      linesDeleted: 4,
      numberOfServiceIssuesFlagged: 0,
      numberOfServiceIssuesFixed: 0,
      serviceFirstReviewedAt: "2026-05-09T00:00:00.000Z",
      totalAiLinesAuthored: null,
    });
    for (const field of ["createdAt", "mergedAt", "serviceFirstReviewedAt"]) expect(row[field]).toMatch(ISO_MS);
  });
});

describe("order and pagination", () => {
  it("newest merge first; equal merge times are ordered by internal id, descending", async () => {
    const { org, page } = await setup();
    await postEventsOk([
      ...reviewedPr(org, 1, "2026-05-10T00:00:00Z", "2026-05-09T00:00:00Z"),
      ...reviewedPr(org, 2, "2026-05-12T00:00:00Z", "2026-05-09T00:00:00Z"),
      ...reviewedPr(org, 3, "2026-05-10T00:00:00Z", "2026-05-09T00:00:00Z"),
      ...reviewedPr(org, 4, "2026-05-10T00:00:00Z", "2026-05-09T00:00:00Z"),
    ]);
    // Ids follow arrival order, so the later-inserted of the tied pull requests comes first.
    expect(numbers(await page(`org=${org}&startDate=2026-05-01&endDate=2026-05-31`))).toEqual([2, 4, 3, 1]);
    const tied = await page(`org=${org}&startDate=2026-05-01&endDate=2026-05-31&perPage=2`);
    expect(tied.nextCursor).toMatch(/^2026-05-10T00:00:00\.000Z\|\d+$/);
  });

  async function fifty() {
    const s = await setup();
    const events = [];
    for (let n = 1; n <= 50; n++) {
      // Several pull requests share each merge time, so ties cross page boundaries.
      const mergedAt = new Date(Date.parse("2026-05-01T00:00:00Z") + Math.floor(n / 3) * 3_600_000).toISOString();
      events.push(...reviewedPr(s.org, n, mergedAt, "2026-05-15T00:00:00Z"));
    }
    await postEventsOk(events);
    return s;
  }

  it("walking every page with perPage 1 to 7 returns each of 50 rows exactly once, in order", async () => {
    const { org, page } = await fifty();
    const q = `org=${org}&startDate=2026-05-01&endDate=2026-05-31`;
    const all = (await page(`${q}&perPage=100`)).data;
    expect(all).toHaveLength(50);
    for (let perPage = 1; perPage <= 7; perPage++) {
      const rows = await walk(page, q, perPage);
      expect(rows.map((r) => r.prNumber)).toEqual(all.map((r) => r.prNumber));
    }
  });

  it("pull requests merged during the walk neither repeat nor push rows out", async () => {
    const { org, page } = await fifty();
    const q = `org=${org}&startDate=2026-05-01&endDate=2026-05-31`;
    const before = (await page(`${q}&perPage=100`)).data.map((r) => r.prNumber);
    let next = 1000;
    const rows = await walk(page, q, 4, async () => {
      await postEventsOk(reviewedPr(org, next++, "2026-05-30T00:00:00Z", "2026-05-30T00:00:00Z"));
    });
    expect(rows.map((r) => r.prNumber)).toEqual(before);
  });

  it("nextCursor is null on an exactly full last page (no empty last page)", async () => {
    const { org, page } = await setup();
    await postEventsOk([1, 2, 3, 4, 5, 6].flatMap((n) => reviewedPr(org, n, `2026-05-0${n}T00:00:00Z`, "2026-05-09T00:00:00Z")));
    const q = `org=${org}&startDate=2026-05-01&endDate=2026-05-31&perPage=3`;
    const first = await page(q);
    expect(first.data).toHaveLength(3);
    expect(first.nextCursor).not.toBeNull();
    const second = await page(`${q}&cursor=${encodeURIComponent(first.nextCursor as string)}`);
    expect(numbers(second)).toEqual([3, 2, 1]);
    expect(second.nextCursor).toBeNull();
  });

  it("an empty result is one page with nextCursor null", async () => {
    const { org, page } = await setup();
    expect(await page(`org=${org}`)).toEqual({ data: [], nextCursor: null });
  });

  it("a well-formed cursor used with other filters is never a 500", async () => {
    const { org, get } = await fifty();
    const other = "2030-01-01T00:00:00.000Z|999999999";
    for (const q of [`org=${org}&repo=api`, `org=${org}&startDate=2020-01-01`, `org=${org}`]) {
      const res = await get(`${q}&cursor=${encodeURIComponent(other)}`);
      expect(res.status).toBe(200);
    }
  });
});

/**
 * A page with D1's rows_read, as the benchmark sees it (the variable is off in production), asked
 * twice and read from the second answer: the isolate's page plans (`PagePlans`) have then seen the
 * scope's first page, so the count does not depend on which pages other tests asked before (a
 * first page its window cannot fill reads two statements the first time, one after).
 */
async function rowsRead(key: string, query: string) {
  const once = async () => {
    const request = new Request(`https://service.test/api/analytics/v1/prs?${query}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    const res = await fetchWithEnv(request, { DEBUG_ROWS_READ: "true" });
    expect(res.status).toBe(200);
    return Number(res.headers.get("X-Debug-Rows-Read"));
  };
  await once();
  return once();
}

describe("a member who sees few repositories", () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  /**
   * An organization with 10 pull requests in its one public repository, merged 5 hours apart, and
   * `others` pull requests in 9 private ones merged in between; a member who sees the public one.
   */
  async function organization(others: number, end: number) {
    const admin = await setup();
    const member = await createUser();
    await addMember(admin.org, member, "member");
    await adminOk("PUT", `/internal/v1/organizations/${admin.org}/repositories/seen`, { private: false });
    const merged = (i: number, of: number) => end - DAY + Math.floor((i * 20 * 3_600_000) / of);
    await postEventsOk(
      [
        ...Array.from({ length: 10 }, (_, i) =>
          reviewedPr(admin.org, i + 1, iso(merged(i, 10)), iso(merged(i, 10) - 60_000), { repo: "seen" }),
        ),
        ...Array.from({ length: others }, (_, i) =>
          reviewedPr(admin.org, 100 + i, iso(merged(i, others) + 1), iso(merged(i, others) - 60_000), {
            repo: `hidden-${i % 9}`,
          }),
        ),
      ].flat(),
    );
    return { org: admin.org, key: (await createKey(member, "analytics")).key };
  }

  it("reads as if the repositories it cannot see had no pull requests", async () => {
    const end = Date.now() - 2 * DAY;
    const alone = await organization(0, end);
    const among = await organization(90, end);
    const query = (org: string) => `org=${org}&startDate=${iso(end - 10 * DAY)}&endDate=${iso(end)}&perPage=5`;
    const pageOf = async ({ org, key }: { org: string; key: string }) => {
      const res = await call(`/api/analytics/v1/prs?${query(org)}`, { headers: { Authorization: `Bearer ${key}` } });
      return ((await res.json()) as Page).data.map((r) => [r.repo, r.prNumber]);
    };
    expect(await pageOf(among)).toEqual([10, 9, 8, 7, 6].map((n) => ["seen", n]));
    expect(await pageOf(among)).toEqual(await pageOf(alone));
    // A window of more than a week, so the statement walks merges. The organization's walk
    // filtered by repository read the others in between (50 more rows for this page); one walk per
    // repository the member sees reads the same as without them.
    const extra = (await rowsRead(among.key, query(among.org))) - (await rowsRead(alone.key, query(alone.org)));
    expect(extra).toBeLessThanOrEqual(4);
  });
});

describe("reviews far from their merge", () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const windowOf = (start: number, end: number) => `startDate=${iso(start)}&endDate=${iso(end)}`;
  /** One pull request merged each day of the 60 days before `end`, each reviewed 6 hours before its merge. */
  const everyDay = (org: string, end: number) =>
    Array.from({ length: 60 }, (_, i) => {
      const merged = end - (i + 1) * DAY;
      return reviewedPr(org, i + 1, iso(merged), iso(merged - 6 * 3_600_000));
    }).flat();

  it("a review two years after its merge lists the old pull request as the window's last row", async () => {
    const { org, page } = await setup();
    const now = Date.now();
    await postEventsOk([...everyDay(org, now), ...reviewedPr(org, 900, iso(now - 730 * DAY), iso(now - 3_600_000))]);
    const rows = await walk(page, `org=${org}`, 7); // the default window: the last 30 days
    expect(rows.map((r) => r.prNumber)).toEqual([...Array.from({ length: 29 }, (_, i) => i + 1), 900]);
    expect(rows.at(-1)?.mergedAt).toBe(iso(now - 730 * DAY));
  });

  it("a review two years before its merge lists the pull request in a window two years ago, as its first row", async () => {
    const { org, page } = await setup();
    const now = Date.now();
    const twoYearsAgo = now - 730 * DAY;
    await postEventsOk([...everyDay(org, twoYearsAgo + 10 * DAY), ...reviewedPr(org, 900, iso(now - 2 * DAY), iso(twoYearsAgo))]);
    const rows = await walk(page, `org=${org}&${windowOf(twoYearsAgo - 4 * DAY, twoYearsAgo + 4 * DAY)}`, 2);
    expect(rows.map((r) => r.prNumber)).toEqual([900, 6, 7, 8, 9, 10, 11, 12, 13]);
  });

  it("one outlier in each direction does not widen the walk of other windows", async () => {
    const end = Date.parse("2026-06-30T00:00:00Z");
    const plain = await setup();
    const poisoned = await setup();
    await postEventsOk(everyDay(plain.org, end));
    await postEventsOk([
      ...everyDay(poisoned.org, end),
      ...reviewedPr(poisoned.org, 900, iso(end - 730 * DAY), iso(end - 25 * DAY)),
      ...reviewedPr(poisoned.org, 901, iso(end + 700 * DAY), iso(end - 45 * DAY)),
    ]);
    // Windows of the walk over merges (more than a week) and of the review-side plan, in the past,
    // that hold neither outlier's review.
    for (const [start, stop] of [
      [end - 40 * DAY, end - 30 * DAY],
      [end - 20 * DAY, end - 10 * DAY],
      [end - 33 * DAY, end - 32 * DAY],
    ] as const) {
      const query = (org: string) => `org=${org}&${windowOf(start, stop)}&perPage=5`;
      expect(numbers(await poisoned.page(query(poisoned.org)))).toEqual(numbers(await plain.page(query(plain.org))));
      const extra = (await rowsRead(poisoned.key, query(poisoned.org))) - (await rowsRead(plain.key, query(plain.org)));
      // Before gap tiers, either outlier made every walk of the organization cover two years (all 60 pull requests).
      expect(extra).toBeLessThanOrEqual(4);
    }
    // Nor does what lies beyond a window: two windows of ten pull requests each, one with ten days
    // of merges after it and one with thirty, read the same.
    const read = (start: number, stop: number) => rowsRead(poisoned.key, `org=${poisoned.org}&${windowOf(start, stop)}`);
    const [nearEnd, farFromEnd] = [await read(end - 20 * DAY, end - 10 * DAY), await read(end - 40 * DAY, end - 30 * DAY)];
    expect(Math.abs(nearEnd - farFromEnd)).toBeLessThanOrEqual(4);
  });

  it("X-Debug-Rows-Read is sent only when the benchmark variable is set", async () => {
    const { org, get } = await setup();
    expect((await get(`org=${org}`)).headers.get("X-Debug-Rows-Read")).toBeNull();
  });

  it("a review that moves from near its merge to two years away and back, by later events, moves between windows", async () => {
    const { org, page } = await setup();
    const merged = Date.parse("2024-03-01T12:00:00Z");
    const near = merged + 2 * 3_600_000;
    const far = merged + 730 * DAY;
    const nearWindow = `org=${org}&${windowOf(merged - 4 * DAY, merged + 4 * DAY)}`;
    const farWindow = `org=${org}&${windowOf(far - 10 * DAY, far + 10 * DAY)}`;
    const listed = async () => [numbers(await page(nearWindow)), numbers(await page(farWindow))];
    const review = (completedAt: number, updatedAt: string, extra: Record<string, unknown> = {}) =>
      ev.review(org, 1, "r1", { completedAt: iso(completedAt), updatedAt, ...extra });

    await postEventsOk([
      ev.pr(org, 1, { mergedAt: iso(merged), createdAt: "2020-01-01T00:00:00Z" }),
      review(near, "2026-10-03T00:00:00Z"),
    ]);
    expect(await listed()).toEqual([[1], []]);
    await postEventsOk([review(far, "2026-10-04T00:00:00Z")]);
    expect(await listed()).toEqual([[], [1]]);
    await postEventsOk([review(near, "2026-10-05T00:00:00Z")]);
    expect(await listed()).toEqual([[1], []]);
    // A delayed event from before the last one is ignored: the review stays near its merge.
    await postEventsOk([review(far, "2026-10-04T12:00:00Z")]);
    expect(await listed()).toEqual([[1], []]);
    // Far again, then no longer completed: no window lists it.
    await postEventsOk([review(far, "2026-10-06T00:00:00Z")]);
    expect(await listed()).toEqual([[], [1]]);
    await postEventsOk([review(far, "2026-10-07T00:00:00Z", { status: "failed", completedAt: null })]);
    expect(await listed()).toEqual([[], []]);
  });

  it("a merge that moves two years away from its review, and back, moves the pull request in the walk", async () => {
    const { org, page } = await setup();
    const reviewed = Date.parse("2024-03-01T12:00:00Z");
    const window = `org=${org}&${windowOf(reviewed - 10 * DAY, reviewed + 10 * DAY)}`;
    await postEventsOk([
      ...reviewedPr(org, 1, iso(reviewed + DAY), iso(reviewed)),
      ...reviewedPr(org, 2, iso(reviewed + 2 * DAY), iso(reviewed)),
    ]);
    expect(numbers(await page(window))).toEqual([2, 1]);
    const moveMerge = (mergedAt: number, updatedAt: string) =>
      postEventsOk([ev.pr(org, 1, { mergedAt: iso(mergedAt), createdAt: "2020-01-01T00:00:00Z", updatedAt })]);
    await moveMerge(reviewed + 700 * DAY, "2026-10-04T00:00:00Z");
    expect(numbers(await page(window))).toEqual([1, 2]);
    await moveMerge(reviewed - 700 * DAY, "2026-10-05T00:00:00Z");
    expect(numbers(await page(window))).toEqual([2, 1]);
    expect((await page(window)).data[1]?.mergedAt).toBe(iso(reviewed - 700 * DAY));
  });

  it("a review that moves to another pull request takes its window with it", async () => {
    const { org, page } = await setup();
    const merged = Date.parse("2024-03-01T12:00:00Z");
    const window = `org=${org}&${windowOf(merged - 10 * DAY, merged + 10 * DAY)}`;
    await postEventsOk([
      ev.pr(org, 1, { mergedAt: iso(merged), createdAt: "2020-01-01T00:00:00Z" }),
      ev.pr(org, 2, { mergedAt: iso(merged + 800 * DAY), createdAt: "2020-01-01T00:00:00Z" }),
      ev.review(org, 1, "r1", { completedAt: iso(merged - DAY) }),
      ev.review(org, 2, "r2", { completedAt: iso(merged + 900 * DAY) }),
    ]);
    expect(numbers(await page(window))).toEqual([1]);
    await postEventsOk([ev.review(org, 2, "r1", { completedAt: iso(merged - DAY), updatedAt: "2026-10-04T00:00:00Z" })]);
    const rows = (await page(window)).data;
    expect(rows.map((r) => r.prNumber)).toEqual([2]);
    expect(rows[0]?.serviceFirstReviewedAt).toBe(iso(merged - DAY));
  });

  // Each gap tier's range around a window must reach exactly as far as its bound: a review a
  // millisecond inside it, and one exactly at it (the next tier), are both found.
  it.each(GAP_TIER_BOUNDS_MS.map((bound, tier) => [tier, bound]))(
    "gap tier %i: reviews at its bound from the merge, after and before it, reach the window's edge",
    async (_tier, bound) => {
      const { org, page } = await setup();
      const merged = Date.parse("2023-01-01T00:00:00Z") + (bound > 500 * DAY ? 0 : 600 * DAY);
      await postEventsOk([
        ...reviewedPr(org, 1, iso(merged), iso(merged + bound - 1)),
        ...reviewedPr(org, 2, iso(merged + 1), iso(merged + 1 + bound)),
        ...reviewedPr(org, 3, iso(merged + 2), iso(merged + 2 - bound + 1)),
        ...reviewedPr(org, 4, iso(merged + 3), iso(merged + 3 - bound)),
      ]);
      // Windows longer than a week (the walk over merges), in the past, with an edge at each review.
      const starting = async (t: number) => numbers(await page(`org=${org}&${windowOf(t, t + 8 * DAY)}`));
      const ending = async (t: number) => numbers(await page(`org=${org}&${windowOf(t - 8 * DAY, t)}`));
      expect(await starting(merged + bound - 1)).toContain(1);
      expect(await starting(merged + 1 + bound)).toContain(2);
      expect(await ending(merged + 2 - bound + 1)).toContain(3);
      expect(await ending(merged + 3 - bound)).toContain(4);
      // And a millisecond past the review, the window no longer holds it.
      expect(await starting(merged + bound)).not.toContain(1);
      expect(await ending(merged + 3 - bound - 1)).not.toContain(4);
    },
  );
});
