import { describe, expect, it } from "vitest";
import { type AuditPage, errorOf, type MemberPage, setup, subscription } from "./admin-helpers";
import { adminOk, call, ev, postEventsOk } from "./helpers";
import { callTool } from "./mcp-helpers";
import { billing, deliverQueued, install, joins, mergedPr, person, readMember, repoId } from "./webhook-helpers";

/** Contract section 20: seats that follow the work. */

type ActiveMember = { githubUserId: string; githubLogin: string; seat: boolean; lastActivityAt: string | null };
type SeatRequests = { data: { githubUserId: string; githubLogin: string; since: string }[] };

const DAY = 86_400_000;
/** The test's clock, read once: every time below is relative to it. */
const NOW = Date.now();
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString();

async function world(options: Parameters<typeof setup>[0] = {}) {
  const s = await setup(options);
  const get = async (id: string) => {
    const res = await call(`/api/v1/organizations/${s.org}/members/${id}`, { headers: s.auth });
    expect(res.status).toBe(200);
    return (await res.json()) as ActiveMember;
  };
  const settings = (headers = s.auth) => call(`/api/v1/organizations/${s.org}/settings`, { headers });
  const patchSettings = (body: unknown, headers: Record<string, string> = {}) =>
    call(`/api/v1/organizations/${s.org}/settings`, {
      method: "PATCH",
      headers: { ...s.auth, "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const automatic = async () => {
    const res = await patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "manual" });
    expect(res.status).toBe(200);
  };
  const waiting = async (headers = s.auth) => {
    const res = await call(`/api/v1/organizations/${s.org}/seat-requests`, { headers });
    expect(res.status).toBe(200);
    return ((await res.json()) as SeatRequests).data;
  };
  const automaticEntries = async () => {
    const entries: AuditPage["data"] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page: AuditPage = await s.auditOk(`limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      entries.push(...page.data);
      cursor = page.nextCursor;
    }
    return entries.filter((e) => (e.source as string) === "automatic");
  };
  /** A pull request event authored by `login`, created `days` ago. */
  let prNumbers = 1;
  const pr = (login: string, extra: Record<string, unknown> = {}) =>
    ev.pr(s.org, prNumbers++, { author: login, createdAt: daysAgo(3), mergedAt: null, ...extra });
  return { ...s, get, settings, patchSettings, automatic, waiting, automaticEntries, pr };
}

describe("activity: the newest creation, merge or completed review of a pull request the member authored", () => {
  it("is null without pull requests; follows creation, merge and reviews; authors matched case-insensitively", async () => {
    const w = await world();
    const id = await w.member("member", { login: "Grace-Hopper" });
    expect((await w.get(id)).lastActivityAt).toBeNull();
    await postEventsOk([ev.pr(w.org, 1, { author: "grace-hopper", createdAt: daysAgo(30), mergedAt: null })]);
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(30));
    await postEventsOk([
      ev.pr(w.org, 1, { author: "GRACE-HOPPER", createdAt: daysAgo(30), mergedAt: daysAgo(20), updatedAt: daysAgo(20) }),
    ]);
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(20));
    await postEventsOk([ev.review(w.org, 1, "r-1", { completedAt: daysAgo(10), updatedAt: daysAgo(10) })]);
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(10));
    // A review that is not completed is no activity.
    await postEventsOk([ev.review(w.org, 1, "r-2", { status: "failed", completedAt: daysAgo(5), updatedAt: daysAgo(5) })]);
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(10));
  });

  it("an older event never moves it back; a replay in any order ends the same", async () => {
    const w = await world();
    const id = await w.member("member", { login: "linus" });
    const events = [
      ev.pr(w.org, 7, { author: "linus", createdAt: daysAgo(40), mergedAt: null, updatedAt: daysAgo(40) }),
      ev.review(w.org, 7, "r-7a", { completedAt: daysAgo(2), updatedAt: daysAgo(2) }),
      ev.pr(w.org, 8, { author: "linus", createdAt: daysAgo(60), mergedAt: daysAgo(50), updatedAt: daysAgo(50) }),
    ];
    // The review first: its pull request's author is not known yet, then is.
    await postEventsOk([events[1]]);
    expect((await w.get(id)).lastActivityAt).toBeNull();
    await postEventsOk([events[0]]);
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(2));
    await postEventsOk([events[2]]);
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(2));
    await postEventsOk([...events].reverse());
    await Promise.all(events.map((e) => postEventsOk([e])));
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(2));
  });

  it("activity recorded before the person became a member counts once they are", async () => {
    const w = await world();
    await postEventsOk([ev.pr(w.org, 1, { author: "early-bird", createdAt: daysAgo(4), mergedAt: null })]);
    const id = await w.member("member", { login: "Early-Bird" });
    expect((await w.get(id)).lastActivityAt).toBe(daysAgo(4));
  });

  it("webhooks maintain it too", async () => {
    const org = `wh-${NOW.toString(36)}-${Math.floor(Math.random() * 1e6)}`;
    const admin = await person();
    const dev = await person();
    const repo = { id: repoId(), name: "api", private: false };
    await billing(org);
    await install(org, [repo]);
    await joins(org, admin, "admin");
    await joins(org, dev, "member");
    const pr = mergedPr(org, repo, 5, {
      user: { login: `gh${dev.id}`, id: Number(dev.id), type: "User" },
      created_at: daysAgo(9),
      merged_at: daysAgo(8),
      updated_at: daysAgo(8),
    });
    await deliverQueued("pull_request", pr);
    const res = await readMember(org, admin, dev.id);
    expect(((await res.json()) as ActiveMember).lastActivityAt).toBe(daysAgo(8));
  });
});

describe("the member list: lastActivityAt and inactiveDays", () => {
  it("inactiveDays keeps members with no activity or activity older than that many days, in list order", async () => {
    const w = await world();
    const recent = await w.member("member", { login: "a-recent" });
    const old = await w.member("member", { login: "b-old" });
    const never = await w.member("member", { login: "c-never" });
    await postEventsOk([
      ev.pr(w.org, 1, { author: "a-recent", createdAt: daysAgo(5), mergedAt: null }),
      ev.pr(w.org, 2, { author: "b-old", createdAt: daysAgo(200), mergedAt: null }),
    ]);
    const all = await w.listOk("limit=100");
    const byId = new Map(all.data.map((m) => [m.githubUserId, m as unknown as ActiveMember]));
    expect(byId.get(recent)?.lastActivityAt).toBe(daysAgo(5));
    expect(byId.get(never)?.lastActivityAt).toBeNull();
    const idle = await w.listOk("inactiveDays=90&limit=100");
    expect(idle.data.map((m) => m.githubUserId)).toEqual(
      all.data.map((m) => m.githubUserId).filter((id) => id === old || id === never || id === w.caller.id),
    );
    expect((await w.listOk("inactiveDays=3650&limit=100")).data.map((m) => m.githubUserId)).not.toContain(old);
    expect((await w.listOk("inactiveDays=1&limit=100")).data.map((m) => m.githubUserId)).toContain(recent);
    // Pages: one member per page, every idle one once.
    const walked: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page: MemberPage = await w.listOk(`inactiveDays=90&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      walked.push(...page.data.map((m) => m.githubUserId));
      cursor = page.nextCursor;
    }
    expect(walked).toEqual(idle.data.map((m) => m.githubUserId));
  });

  it.each(["0", "3651", "1.5", "+5", "abc", "-1", "1e2"])("inactiveDays=%s is 400 naming it", async (value) => {
    const w = await world();
    const res = await w.list(`inactiveDays=${encodeURIComponent(value)}`);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details).toEqual([{ path: "inactiveDays", message: "must be an integer from 1 to 3650" }]);
  });

  // Contract section 3 for every query parameter: values are trimmed before any check, blank ones
  // ignored. " 5" is the parameter 5 (a query string has no number type to be strict about); a
  // space inside the digits is still 400.
  it("inactiveDays is trimmed before its digits check, as every query value: ' 5 ' is 5, blank is no filter, '5 5' is 400", async () => {
    const w = await world();
    const recent = await w.member("member", { login: "t-recent" });
    const idle = await w.member("member", { login: "t-idle" });
    await postEventsOk([
      ev.pr(w.org, 1, { author: "t-recent", createdAt: daysAgo(2), mergedAt: null }),
      ev.pr(w.org, 2, { author: "t-idle", createdAt: daysAgo(8), mergedAt: null }),
    ]);
    const ids = async (query: string) => (await w.listOk(`${query}&limit=100`)).data.map((m) => m.githubUserId);
    const five = await ids("inactiveDays=5");
    expect(five).toContain(idle);
    expect(five).not.toContain(recent);
    expect(await ids("inactiveDays=%205")).toEqual(five);
    expect(await ids("inactiveDays=5%20%09")).toEqual(five);
    expect(await ids("inactiveDays=%20%20")).toEqual(await ids(""));
    const res = await w.list("inactiveDays=5%205");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details).toEqual([{ path: "inactiveDays", message: "must be an integer from 1 to 3650" }]);
  });

  it("the MCP tool list_members takes inactiveDays and answers lastActivityAt", async () => {
    const w = await world();
    const old = await w.member("member", { login: "mcp-old" });
    await postEventsOk([ev.pr(w.org, 1, { author: "mcp-old", createdAt: daysAgo(100), mergedAt: null })]);
    const key = w.auth.Authorization.slice("Bearer ".length);
    const { result } = await callTool(key, "list_members", { org: w.org, inactiveDays: 30 });
    const data = (result.structuredContent as { data: ActiveMember[] }).data;
    expect(data.find((m) => m.githubUserId === old)?.lastActivityAt).toBe(daysAgo(100));
    const refused = await callTool(key, "list_members", { org: w.org, inactiveDays: 0 });
    expect(refused.result.isError).toBe(true);
  });
});

describe("settings: seatAssignment, guarded", () => {
  it("any member reads the default manual; an admin changes it with the guard; settings.updated is audited once", async () => {
    const w = await world();
    const viewer = await w.member("viewer");
    expect(viewer).toBeTruthy();
    const read = await w.settings();
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ seatAssignment: "manual" });
    const res = await w.patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "manual" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      before: { seatAssignment: "manual" },
      after: { seatAssignment: "automatic" },
      changed: true,
    });
    expect(await (await w.settings()).json()).toEqual({ seatAssignment: "automatic" });
    const same = await w.patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "automatic" });
    expect(await same.json()).toEqual({
      before: { seatAssignment: "automatic" },
      after: { seatAssignment: "automatic" },
      changed: false,
    });
    const entries = (await w.auditOk()).data.filter((e) => (e.action as string) === "settings.updated");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: { githubUserId: w.caller.id },
      source: "api",
      githubUserId: null,
      before: { seatAssignment: "manual" },
      after: { seatAssignment: "automatic" },
    });
  });

  it("a stale guard is 409 expected_value_mismatch with the current value; nothing changes", async () => {
    const w = await world();
    const res = await w.patchSettings({ seatAssignment: "manual", expectedSeatAssignment: "automatic" });
    expect(res.status).toBe(409);
    const error = await errorOf(res);
    expect(error.code).toBe("expected_value_mismatch");
    expect(error.details).toEqual([{ path: "expectedSeatAssignment", message: "current value is manual" }]);
  });

  it("concurrent PATCHes with the same guard: exactly one wins", async () => {
    const w = await world();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => w.patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "manual" })),
    );
    const bodies = await Promise.all(
      answers.map(async (r) => ({ status: r.status, body: (await r.json()) as { changed?: boolean } })),
    );
    expect(bodies.filter((b) => b.status === 200 && b.body.changed).length).toBe(1);
    expect(bodies.filter((b) => b.status === 409).length).toBe(4);
  });

  it("the PATCH preconditions of section 4: 400 body, 415, 403 not an admin, 403 no subscription, 404", async () => {
    const w = await world();
    for (const body of [
      {},
      { seatAssignment: "automatic" },
      { expectedSeatAssignment: "manual" },
      { seatAssignment: "sometimes", expectedSeatAssignment: "manual" },
      { seatAssignment: "automatic", expectedSeatAssignment: "manual", extra: 1 },
      "[]",
    ]) {
      expect((await w.patchSettings(body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(
      (await w.patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "manual" }, { "Content-Type": "text/plain" }))
        .status,
    ).toBe(415);
    const member = await world({ callerRole: "member" });
    const notAdmin = await member.patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "manual" });
    expect(notAdmin.status).toBe(403);
    expect((await errorOf(notAdmin)).code).toBe("not_org_admin");
    expect((await member.settings()).status).toBe(200);
    const unpaid = await world({ subscription: subscription(10, { status: "canceled" }) });
    const refused = await unpaid.patchSettings({ seatAssignment: "automatic", expectedSeatAssignment: "manual" });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe("subscription_required");
    const missing = await call("/api/v1/organizations/no-such-org-seats/settings", { headers: w.auth });
    expect(missing.status).toBe(404);
  });
});

describe("automatic assignment: a seat on a member's first pull request, within the seats bought", () => {
  it("50 new pull requests of 50 seatless members at once, 10 free seats: 10 seats, 40 waiting, 10 audit entries; a replay changes nothing", async () => {
    const w = await world({ subscription: subscription(10) });
    await w.automatic();
    const logins: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      logins.push(`dev-${i}-${NOW.toString(36)}`);
      ids.push(await w.member("member", { login: logins[i] }));
    }
    const events = logins.map((login) => w.pr(login));
    const answers = await Promise.all(events.map((e) => call("/internal/v1/events", adminBody([e]))));
    expect(answers.map((r) => r.status)).toEqual(events.map(() => 200));

    const check = async () => {
      const page = await w.listOk("limit=100");
      const seated = page.data.filter((m) => m.seat).map((m) => m.githubUserId);
      expect(page.seats).toEqual({ purchased: 10, used: 10, available: 0 });
      const waiting = (await w.waiting()).map((r) => r.githubUserId);
      expect(seated).toHaveLength(10);
      expect(waiting).toHaveLength(40);
      expect(new Set([...seated, ...waiting])).toEqual(new Set(ids));
      const entries = await w.automaticEntries();
      expect(entries).toHaveLength(10);
      for (const e of entries) {
        expect(e).toMatchObject({ action: "member.updated", actor: null, before: { seat: false }, after: { seat: true } });
      }
      expect(new Set(entries.map((e) => e.githubUserId))).toEqual(new Set(seated));
      return { seated, waiting };
    };
    const first = await check();
    // The whole replay, in another order, twice at once.
    const shuffled = [...events].reverse();
    await Promise.all([postEventsOk(shuffled), ...shuffled.map((e) => postEventsOk([e]))]);
    expect(await check()).toEqual(first);
  });

  it("one batch of 300 new pull requests by 150 members, 10 free seats: 10 seats, 140 waiting", async () => {
    const w = await world({ subscription: subscription(10) });
    await w.automatic();
    const logins = Array.from({ length: 150 }, (_, i) => `batch-${i}-${NOW.toString(36)}`);
    for (const login of logins) await w.member("member", { login });
    await postEventsOk([...logins, ...logins].map((login) => w.pr(login)));
    expect((await w.listOk("limit=1")).seats).toEqual({ purchased: 10, used: 10, available: 0 });
    expect(await w.waiting()).toHaveLength(140);
    expect(await w.automaticEntries()).toHaveLength(10);
  });

  it("a bot never gets a seat, nor waits; a member holding one changes nothing", async () => {
    const w = await world();
    await w.automatic();
    const bot = await w.member("member", { login: "deploy-bot", isBot: true });
    const seated = await w.member("member", { login: "has-seat", seat: true });
    await postEventsOk([w.pr("deploy-bot"), w.pr("has-seat")]);
    expect((await w.get(bot)).seat).toBe(false);
    expect((await w.get(seated)).seat).toBe(true);
    expect(await w.waiting()).toEqual([]);
    expect(await w.automaticEntries()).toEqual([]);
  });

  it("manual changes nothing, and a pull request learned in manual mode assigns nothing later", async () => {
    const w = await world();
    const id = await w.member("member", { login: "manual-dev" });
    const event = w.pr("manual-dev");
    await postEventsOk([event]);
    expect((await w.get(id)).seat).toBe(false);
    expect(await w.waiting()).toEqual([]);
    await w.automatic();
    await postEventsOk([event]);
    expect((await w.get(id)).seat).toBe(false);
    await postEventsOk([w.pr("manual-dev")]);
    expect((await w.get(id)).seat).toBe(true);
  });

  it("once per pull request: a seat taken away is not given back by a replay, only by a new pull request", async () => {
    const w = await world();
    await w.automatic();
    const id = await w.member("member", { login: "returning" });
    const first = w.pr("returning");
    await postEventsOk([first]);
    expect((await w.get(id)).seat).toBe(true);
    expect((await w.patch(id, { seat: false, expectedSeat: true })).status).toBe(200);
    await postEventsOk([first, ev.review(w.org, first.prNumber, "r-back", { completedAt: daysAgo(1) })]);
    expect((await w.get(id)).seat).toBe(false);
    await postEventsOk([w.pr("returning")]);
    expect((await w.get(id)).seat).toBe(true);
    expect(await w.automaticEntries()).toHaveLength(2);
  });

  it("a review before its pull request: the seat comes when the pull request names its author, once", async () => {
    const w = await world();
    await w.automatic();
    const id = await w.member("member", { login: "review-first" });
    const event = w.pr("review-first");
    await postEventsOk([ev.review(w.org, event.prNumber, "r-first", { completedAt: daysAgo(1) })]);
    expect((await w.get(id)).seat).toBe(false);
    await postEventsOk([event]);
    expect((await w.get(id)).seat).toBe(true);
    expect(await w.automaticEntries()).toHaveLength(1);
  });

  it("seats never above the purchased number, also when a sync left more in use than bought", async () => {
    const w = await world({ subscription: subscription(1) });
    await w.automatic();
    await w.member("member", { login: "synced-a", seat: true });
    await w.member("member", { login: "synced-b", seat: true });
    const id = await w.member("member", { login: "over" });
    await postEventsOk([w.pr("over")]);
    expect((await w.get(id)).seat).toBe(false);
    expect((await w.waiting()).map((r) => r.githubUserId)).toEqual([id]);
  });

  it("the waiting list: admins only; a member leaves it when given a seat or when leaving the organization", async () => {
    const w = await world({ subscription: subscription(1) });
    await w.automatic();
    const filler = await w.member("member", { login: "filler", seat: true });
    const a = await w.member("member", { login: "wait-a" });
    const b = await w.member("member", { login: "wait-b" });
    await postEventsOk([w.pr("wait-a")]);
    await postEventsOk([w.pr("wait-b"), w.pr("wait-a")]);
    const list = await w.waiting();
    expect(list.map((r) => [r.githubUserId, r.githubLogin])).toEqual([
      [a, "wait-a"],
      [b, "wait-b"],
    ]);
    expect(Date.parse(list[0]?.since ?? "")).toBeGreaterThanOrEqual(NOW);
    const member = await world({ callerRole: "member" });
    const refused = await call(`/api/v1/organizations/${member.org}/seat-requests`, { headers: member.auth });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe("not_org_admin");
    const given = await w.batch({
      changes: [
        { githubUserId: filler, seat: false, expectedSeat: true },
        { githubUserId: a, seat: true, expectedSeat: false },
      ],
    });
    expect(given.status).toBe(200);
    expect((await w.waiting()).map((r) => r.githubUserId)).toEqual([b]);
    await adminOk("DELETE", `/internal/v1/organizations/${w.org}/members/${b}`);
    expect(await w.waiting()).toEqual([]);
  });

  it("a webhook's new pull request assigns a seat too", async () => {
    const org = `whs-${NOW.toString(36)}-${Math.floor(Math.random() * 1e6)}`;
    const admin = await person();
    const dev = await person();
    const repo = { id: repoId(), name: "api", private: false };
    await billing(org);
    await install(org, [repo]);
    await joins(org, admin, "admin");
    await joins(org, dev, "member");
    const auth = { Authorization: `Bearer ${admin.membersKey}`, "Content-Type": "application/json" };
    const patched = await call(`/api/v1/organizations/${org}/settings`, {
      method: "PATCH",
      headers: auth,
      body: JSON.stringify({ seatAssignment: "automatic", expectedSeatAssignment: "manual" }),
    });
    expect(patched.status).toBe(200);
    await deliverQueued(
      "pull_request",
      mergedPr(org, repo, 3, { user: { login: `gh${dev.id}`, id: Number(dev.id), type: "User" } }),
    );
    const res = await readMember(org, admin, dev.id);
    expect(((await res.json()) as ActiveMember).seat).toBe(true);
  });
});

const adminBody = (events: unknown[]) => ({
  method: "POST",
  headers: { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" },
  body: JSON.stringify({ events }),
});
