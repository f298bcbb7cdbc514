import { type Schema, Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../src/lib/errors";
import { addMember, call, createKey, createOrg, createUser, ev, fetchWithEnv, postEventsOk, unique } from "./helpers";
import { callTool, type ListedTool, listTools, refusalOf, type ToolResult } from "./mcp-helpers";

/**
 * Contract section 15, "Equivalence": a tool's result is the JSON body of the equivalent REST
 * request at that moment; a refusal is a tool error with the REST answer's code, message and
 * details. Each case makes the REST request and the tool call back to back on the same data.
 */

interface Rest {
  status: number;
  body: unknown;
}

async function rest(key: string, path: string, init: { method?: string; json?: unknown } = {}): Promise<Rest> {
  const res = await call(path, { method: init.method ?? "GET", json: init.json, headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

const toolsByKey = new Map<string, Map<string, ListedTool>>();
async function toolOf(key: string, name: string): Promise<ListedTool> {
  const tools = toolsByKey.get(key) ?? (await listTools(key));
  toolsByKey.set(key, tools);
  const tool = tools.get(name);
  if (!tool) throw new Error(`${name} is not listed for this key`);
  return tool;
}

/** The same success: structuredContent is the REST body, content the same JSON, and both fit the tool's outputSchema. */
async function expectSameSuccess(key: string, name: string, result: ToolResult, answer: Rest) {
  expect(answer.status).toBe(200);
  expect(result.isError).toBeUndefined();
  expect(result.structuredContent).toEqual(answer.body);
  expect(JSON.parse(result.content[0]?.text ?? "")).toEqual(answer.body);
  const validator = new Validator((await toolOf(key, name)).outputSchema as Schema, "2020-12", false);
  expect(validator.validate(result.structuredContent).errors).toEqual([]);
}

/** The same refusal: the REST status is the code's, and message and details are the REST ones. */
function expectSameRefusal(result: ToolResult, answer: Rest, code: ErrorCode) {
  const error = refusalOf(result);
  expect(error.code).toBe(code);
  expect(answer.status).toBe(ERROR_CODES[code].status);
  expect(error.retriable).toBe(ERROR_CODES[code].retriable);
  const body = answer.body as { error: string | { code: string; message: string; details: unknown[] }; details?: unknown[] };
  if (typeof body.error === "string") {
    // The analytics envelope: a sentence, and details for 400 and 429.
    expect(error.message).toBe(body.error);
    expect(error.details).toEqual(body.details ?? []);
  } else {
    expect(body.error.code).toBe(code);
    expect(error.message).toBe(body.error.message);
    expect(error.details).toEqual(body.error.details);
  }
}

/** An organization with an admin (1 seat of 3 used), a member, a bot and a non-member; members keys for each. */
async function membersWorld(options: { seats?: number } = {}) {
  const org = await createOrg(unique("mcp"), {
    plan: "team",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: options.seats ?? 3 },
  });
  const [admin, member, bot, outsider] = [await createUser(), await createUser(), await createUser(), await createUser()];
  await addMember(org, admin, "admin", { seat: true });
  await addMember(org, member, "member", { seat: false });
  await addMember(org, bot, "member", { seat: false, isBot: true });
  const keys = {
    admin: (await createKey(admin, "members")).key,
    member: (await createKey(member, "members")).key,
    outsider: (await createKey(outsider, "members")).key,
  };
  return { org, admin, member, bot, outsider, keys };
}

describe("list_pull_request_analytics is GET /api/analytics/v1/prs", () => {
  async function analyticsWorld(plan: "pro" | "team" = "pro") {
    const org = await createOrg(unique("mcpa"), { plan });
    const user = await createUser();
    await addMember(org, user, "admin");
    const key = (await createKey(user, "analytics")).key;
    const events = [1, 2, 3].flatMap((n) => [
      ev.pr(org, n, { mergedAt: `2026-10-0${n}T10:00:00Z` }),
      ev.review(org, n, `r${n}`, { completedAt: `2026-10-0${n}T09:00:00Z` }),
      ev.finding(org, n, `f${n}`, { createdAt: `2026-10-0${n}T09:30:00Z` }),
    ]);
    await postEventsOk(events);
    return { org, key };
  }
  const WINDOW = { startDate: "2026-09-01", endDate: "2026-10-31" };
  const query = (args: Record<string, string | number>) =>
    new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)])).toString();

  it("success: every page, cursor passed back, the same rows", async () => {
    const { org, key } = await analyticsWorld();
    let args: Record<string, string | number> = { org, ...WINDOW, perPage: 2 };
    for (let page = 0; page < 2; page++) {
      const answer = await rest(key, `/api/analytics/v1/prs?${query(args)}`);
      const { result } = await callTool(key, "list_pull_request_analytics", args);
      await expectSameSuccess(key, "list_pull_request_analytics", result, answer);
      const next = (answer.body as { nextCursor: string | null }).nextCursor;
      if (next === null) break;
      args = { ...args, cursor: next };
    }
    expect(args.cursor).toBeDefined();
  });

  it("format is not a tool argument: the tool answers JSON even when asked for CSV", async () => {
    const { org, key } = await analyticsWorld();
    const answer = await rest(key, `/api/analytics/v1/prs?${query({ org, ...WINDOW })}`);
    const { result } = await callTool(key, "list_pull_request_analytics", { org, ...WINDOW, format: "csv" });
    await expectSameSuccess(key, "list_pull_request_analytics", result, answer);
  });

  it("400 (parameters), 404 (organization), 403 (plan, repository, not a member)", async () => {
    const { org, key } = await analyticsWorld();
    const team = await analyticsWorld("team");
    const other = await analyticsWorld();
    const cases: [string, Record<string, string | number>, ErrorCode][] = [
      [key, { org, perPage: 0, startDate: "2026-02-30" }, "invalid_request"],
      [key, { org, cursor: "nope" }, "invalid_request"],
      [key, { org: unique("missing") }, "org_not_found"],
      [team.key, { org: team.org }, "plan_required"],
      [key, { org, repo: "no-such-repo" }, "repo_access_denied"],
      [key, { org: other.org }, "org_access_denied"],
    ];
    for (const [k, args, code] of cases) {
      const answer = await rest(k, `/api/analytics/v1/prs?${query(args)}`);
      const { result } = await callTool(k, "list_pull_request_analytics", args);
      expectSameRefusal(result, answer, code);
    }
  });
});

describe("summarize_pull_request_analytics is GET /api/analytics/v1/summary", () => {
  it("success for every groupBy, and the refusals, equal the REST route's", async () => {
    const org = await createOrg(unique("mcps"), { plan: "pro" });
    const user = await createUser();
    await addMember(org, user, "admin");
    const key = (await createKey(user, "analytics")).key;
    await postEventsOk(
      [1, 2, 3].flatMap((n) => [
        ev.pr(org, n, { mergedAt: `2026-10-0${n}T10:00:00Z`, author: n === 3 ? "bob" : "alice" }),
        ev.review(org, n, `r${n}`, { completedAt: `2026-10-0${n}T09:00:00Z` }),
      ]),
    );
    const window = { startDate: "2026-09-01", endDate: "2026-10-31" };
    for (const groupBy of ["day", "week", "month", "repo", "author"]) {
      const args = { org, ...window, groupBy };
      const answer = await rest(key, `/api/analytics/v1/summary?${new URLSearchParams(args)}`);
      const { result } = await callTool(key, "summarize_pull_request_analytics", args);
      await expectSameSuccess(key, "summarize_pull_request_analytics", result, answer);
    }
    for (const [args, code] of [
      [{ org, ...window, groupBy: "year" }, "invalid_request"],
      [{ org: unique("missing"), groupBy: "week" }, "org_not_found"],
      // The audit's repro (91 MB over REST, 191 MB as a tool): every time grouping spans at most 400 buckets.
      [{ org, groupBy: "week", startDate: "1970-01-01", endDate: "9999-12-31" }, "invalid_request"],
      [{ org, groupBy: "month", endDate: "9999-12-31" }, "invalid_request"],
    ] as const) {
      const answer = await rest(key, `/api/analytics/v1/summary?${new URLSearchParams(args)}`);
      const { result } = await callTool(key, "summarize_pull_request_analytics", args);
      expectSameRefusal(result, answer, code);
    }
    const { result } = await callTool(key, "summarize_pull_request_analytics", {
      org,
      groupBy: "week",
      startDate: "1970-01-01",
      endDate: "9999-12-31",
    });
    expect(refusalOf(result).details).toEqual([{ path: "groupBy", message: "week needs a window of at most 400 weeks" }]);
  });
});

describe("member reads: list_organizations, list_members, get_member, read_audit_log", () => {
  it("success, for a member and an admin", async () => {
    const w = await membersWorld();
    const cases: [string, string, Record<string, unknown>, string][] = [
      [w.keys.member, "list_organizations", { limit: 5 }, "/api/v1/organizations?limit=5"],
      [w.keys.member, "list_members", { org: w.org }, `/api/v1/organizations/${w.org}/members`],
      [
        w.keys.member,
        "list_members",
        { org: w.org, seat: false, limit: 1 },
        `/api/v1/organizations/${w.org}/members?seat=false&limit=1`,
      ],
      [w.keys.member, "get_member", { org: w.org, githubUserId: w.bot }, `/api/v1/organizations/${w.org}/members/${w.bot}`],
      [w.keys.admin, "read_audit_log", { org: w.org }, `/api/v1/organizations/${w.org}/audit-log`],
    ];
    for (const [key, name, args, path] of cases) {
      const answer = await rest(key, path);
      const { result } = await callTool(key, name, args);
      await expectSameSuccess(key, name, result, answer);
    }
  });

  it("400, 403, 404", async () => {
    const w = await membersWorld();
    const missing = unique("missing");
    const cases: [string, string, Record<string, unknown>, string, ErrorCode][] = [
      [w.keys.member, "list_organizations", { limit: 500 }, "/api/v1/organizations?limit=500", "invalid_request"],
      [
        w.keys.member,
        "list_members",
        { org: w.org, role: "owner" },
        `/api/v1/organizations/${w.org}/members?role=owner`,
        "invalid_request",
      ],
      [
        w.keys.member,
        "get_member",
        { org: w.org, githubUserId: "abc" },
        `/api/v1/organizations/${w.org}/members/abc`,
        "invalid_request",
      ],
      [
        w.keys.outsider,
        "get_member",
        { org: w.org, githubUserId: w.admin },
        `/api/v1/organizations/${w.org}/members/${w.admin}`,
        "org_access_denied",
      ],
      [
        w.keys.member,
        "get_member",
        { org: w.org, githubUserId: w.outsider },
        `/api/v1/organizations/${w.org}/members/${w.outsider}`,
        "member_not_found",
      ],
      [w.keys.member, "list_members", { org: missing }, `/api/v1/organizations/${missing}/members`, "org_not_found"],
      [w.keys.member, "read_audit_log", { org: w.org }, `/api/v1/organizations/${w.org}/audit-log`, "not_org_admin"],
      [
        w.keys.admin,
        "read_audit_log",
        { org: w.org, cursor: "!" },
        `/api/v1/organizations/${w.org}/audit-log?cursor=!`,
        "invalid_request",
      ],
    ];
    for (const [key, name, args, path, code] of cases) {
      const answer = await rest(key, path);
      const { result } = await callTool(key, name, args);
      expectSameRefusal(result, answer, code);
    }
  });
});

describe("update_member is the guarded PATCH", () => {
  it("success: the same change on two identical organizations gives the same result", async () => {
    const a = await membersWorld();
    const b = await membersWorld();
    const change = { seat: true, expectedSeat: false, role: "viewer", expectedRole: "member" };
    const { result } = await callTool(a.keys.admin, "update_member", { org: a.org, githubUserId: a.member, ...change });
    const answer = await rest(b.keys.admin, `/api/v1/organizations/${b.org}/members/${b.member}`, {
      method: "PATCH",
      json: change,
    });
    // Same shape and values; only the member's id differs between the two organizations.
    await expectSameSuccess(a.keys.admin, "update_member", result, {
      ...answer,
      body: { ...(answer.body as object), githubUserId: a.member },
    });
    const after = await rest(a.keys.admin, `/api/v1/organizations/${a.org}/members/${a.member}`);
    expect(after.body).toMatchObject({ seat: true, role: "viewer" });
  });

  it("stale expected values: nothing changes, and details report the current values", async () => {
    const w = await membersWorld();
    const stale = { seat: false, expectedSeat: true, role: "admin", expectedRole: "viewer" };
    const before = await rest(w.keys.admin, `/api/v1/organizations/${w.org}/members/${w.member}`);
    const { result } = await callTool(w.keys.admin, "update_member", { org: w.org, githubUserId: w.member, ...stale });
    const answer = await rest(w.keys.admin, `/api/v1/organizations/${w.org}/members/${w.member}`, {
      method: "PATCH",
      json: stale,
    });
    expectSameRefusal(result, answer, "expected_value_mismatch");
    expect(refusalOf(result).details).toEqual([
      { path: "expectedSeat", message: "current value is false" },
      { path: "expectedRole", message: "current value is member" },
    ]);
    expect((await rest(w.keys.admin, `/api/v1/organizations/${w.org}/members/${w.member}`)).body).toEqual(before.body);
    const audit = (await rest(w.keys.admin, `/api/v1/organizations/${w.org}/audit-log`)).body as { data: { action: string }[] };
    expect(audit.data.filter((entry) => entry.action === "member.updated")).toEqual([]);
  });

  it("400 (body), 403 (not an admin), 404 (member), 409 (last admin, no seat), 422 (bot admin)", async () => {
    const w = await membersWorld({ seats: 1 });
    const path = (id: string) => `/api/v1/organizations/${w.org}/members/${id}`;
    const cases: [string, string, Record<string, unknown>, ErrorCode][] = [
      [w.keys.admin, w.member, { seat: true }, "invalid_request"],
      [w.keys.admin, w.member, { seat: true, expectedSeat: false, color: "red" }, "invalid_request"],
      [w.keys.member, w.member, { seat: true, expectedSeat: false }, "not_org_admin"],
      [w.keys.admin, w.outsider, { seat: true, expectedSeat: false }, "member_not_found"],
      [w.keys.admin, w.admin, { role: "member", expectedRole: "admin" }, "last_admin"],
      [w.keys.admin, w.member, { seat: true, expectedSeat: false }, "no_seat_available"],
      [w.keys.admin, w.bot, { role: "admin", expectedRole: "member" }, "bot_cannot_be_admin"],
    ];
    for (const [key, id, body, code] of cases) {
      const { result } = await callTool(key, "update_member", { org: w.org, githubUserId: id, ...body });
      const answer = await rest(key, path(id), { method: "PATCH", json: body });
      expectSameRefusal(result, answer, code);
    }
  });
});

describe("update_members is the batch PATCH", () => {
  it("success on two identical organizations; a failing guard changes nothing (path changes.N)", async () => {
    const a = await membersWorld();
    const b = await membersWorld();
    const changes = (w: typeof a) => [
      { githubUserId: w.member, seat: true, expectedSeat: false },
      { githubUserId: w.bot, role: "viewer", expectedRole: "member" },
    ];
    const { result } = await callTool(a.keys.admin, "update_members", { org: a.org, changes: changes(a) });
    const answer = await rest(b.keys.admin, `/api/v1/organizations/${b.org}/members`, {
      method: "PATCH",
      json: { changes: changes(b) },
    });
    const ids = new Map([
      [b.member, a.member],
      [b.bot, a.bot],
    ]);
    const body = answer.body as { results: { githubUserId: string }[] };
    const translated = { ...body, results: body.results.map((r) => ({ ...r, githubUserId: ids.get(r.githubUserId) })) };
    await expectSameSuccess(a.keys.admin, "update_members", result, { ...answer, body: translated });

    const stale = [{ githubUserId: a.member, seat: false, expectedSeat: false }];
    const refused = await callTool(a.keys.admin, "update_members", { org: a.org, changes: stale });
    const restRefused = await rest(a.keys.admin, `/api/v1/organizations/${a.org}/members`, {
      method: "PATCH",
      json: { changes: stale },
    });
    expectSameRefusal(refused.result, restRefused, "expected_value_mismatch");
    expect(refusalOf(refused.result).details).toEqual([{ path: "changes.0.expectedSeat", message: "current value is true" }]);
  });

  it("400 (a member twice), 409 (no seat for the batch)", async () => {
    const w = await membersWorld({ seats: 1 });
    const cases: [unknown[], ErrorCode][] = [
      [
        [
          { githubUserId: w.member, seat: true, expectedSeat: false },
          { githubUserId: w.member, role: "viewer", expectedRole: "member" },
        ],
        "invalid_request",
      ],
      [[{ githubUserId: w.member, seat: true, expectedSeat: false }], "no_seat_available"],
    ];
    for (const [changes, code] of cases) {
      const { result } = await callTool(w.keys.admin, "update_members", { org: w.org, changes });
      const answer = await rest(w.keys.admin, `/api/v1/organizations/${w.org}/members`, { method: "PATCH", json: { changes } });
      expectSameRefusal(result, answer, code);
    }
  });
});

describe("429: the quota of the key's kind, as a tool error with retryAfterSeconds", () => {
  const vars = { RATE_LIMIT_MEMBERS: "2", RATE_LIMIT_ANALYTICS: "2", RATE_LIMIT_WINDOW_SECONDS: "60" };

  it("tools and REST requests share one quota; over it, both refuse the same way", async () => {
    const w = await membersWorld();
    const path = `/api/v1/organizations/${w.org}/members/${w.member}`;
    const restGet = () =>
      fetchWithEnv(new Request(`https://service.test${path}`, { headers: { Authorization: `Bearer ${w.keys.member}` } }), vars);
    const args = { org: w.org, githubUserId: w.member };
    expect((await callTool(w.keys.member, "get_member", args, { vars })).result.isError).toBeUndefined();
    expect((await restGet()).status).toBe(200);
    const refused = await callTool(w.keys.member, "get_member", args, { vars });
    const restRefused = await restGet();
    expectSameRefusal(refused.result, { status: restRefused.status, body: await restRefused.json() }, "rate_limited");
    // The HTTP answer of the refused call carries the quota headers and Retry-After.
    const headers = refused.response.headers;
    expect(refused.response.status).toBe(200);
    expect(headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(headers.get("X-RateLimit-Limit")).toBe("2");
    const retryAfter = refusalOf(refused.result).retryAfterSeconds;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Math.abs(Number(headers.get("Retry-After")) - (retryAfter ?? Number.NaN))).toBeLessThanOrEqual(1);
  });

  it("analytics keys count against the analytics quota", async () => {
    const org = await createOrg(unique("mcpq"), { plan: "pro" });
    const user = await createUser();
    await addMember(org, user, "admin");
    const key = (await createKey(user, "analytics")).key;
    for (let i = 0; i < 2; i++) {
      expect((await callTool(key, "list_pull_request_analytics", { org }, { vars })).result.isError).toBeUndefined();
    }
    const refused = await callTool(key, "list_pull_request_analytics", { org }, { vars });
    expect(refusalOf(refused.result).code).toBe("rate_limited");
    expect(refused.response.headers.get("X-RateLimit-Used")).toBe("2");
  });
});
