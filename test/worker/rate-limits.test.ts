import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UserObject } from "../../src/auth/user-object";
import { addMember, admin, call, createKey, createOrg, createUser, fetchWithEnv, type MemberErrorBody, unique } from "./helpers";

/** Contract section 7, with small quotas set through the Worker vars of one request. */
const WINDOW_SECONDS = 60;
const vars = (limit: number, persistMs?: number) => ({
  RATE_LIMIT_MEMBERS: String(limit),
  RATE_LIMIT_ANALYTICS: String(limit),
  RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  ...(persistMs === undefined ? {} : { RATE_LIMIT_PERSIST_MS: String(persistMs) }),
});

async function owner() {
  const org = await createOrg(unique("rl"), { plan: "pro" });
  const user = await createUser();
  await addMember(org, user, "admin");
  const members = (await createKey(user, "members")).key;
  const analytics = (await createKey(user, "analytics")).key;
  return { org, user, members, analytics };
}

const memberGet = (o: { org: string; user: string }, key: string, limit: number, path?: string, persistMs?: number) =>
  fetchWithEnv(
    new Request(`https://service.test${path ?? `/api/v1/organizations/${o.org}/members/${o.user}`}`, {
      headers: { Authorization: `Bearer ${key}` },
    }),
    vars(limit, persistMs),
  );

const analyticsGet = (o: { org: string }, key: string, limit: number, query = `org=${o.org}`) =>
  fetchWithEnv(
    new Request(`https://service.test/api/analytics/v1/prs?${query}`, { headers: { Authorization: `Bearer ${key}` } }),
    vars(limit),
  );

const header = (res: Response, name: string) => res.headers.get(name);

afterEach(() => {
  vi.useRealTimers();
});

describe("exact quotas", () => {
  it("30 concurrent requests of one owner against a limit of 10: exactly 10 pass, 20 are 429", async () => {
    const o = await owner();
    const answers = await Promise.all(Array.from({ length: 30 }, () => memberGet(o, o.members, 10)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    // Every counted answer reports the same window; the passed ones count 1..10 exactly once each.
    const used = answers.filter((r) => r.status === 200).map((r) => Number(header(r, "X-RateLimit-Used")));
    expect(used.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(answers.map((r) => header(r, "X-RateLimit-Reset"))).size).toBe(1);
  });

  it("headers on each counted response: limit, remaining, used, reset, and the IETF fields", async () => {
    const o = await owner();
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.parse("2026-11-22T10:00:00.000Z");
    vi.setSystemTime(t0);
    for (let i = 1; i <= 3; i++) {
      vi.setSystemTime(t0 + (i - 1) * 1500);
      const res = await memberGet(o, o.members, 3);
      expect(res.status).toBe(200);
      const secondsLeft = Math.ceil((t0 + WINDOW_SECONDS * 1000 - Date.now()) / 1000);
      expect({
        limit: header(res, "X-RateLimit-Limit"),
        remaining: header(res, "X-RateLimit-Remaining"),
        used: header(res, "X-RateLimit-Used"),
        reset: header(res, "X-RateLimit-Reset"),
        policy: header(res, "RateLimit-Policy"),
        rateLimit: header(res, "RateLimit"),
        retryAfter: header(res, "Retry-After"),
      }).toEqual({
        limit: "3",
        remaining: String(3 - i),
        used: String(i),
        reset: String((t0 + WINDOW_SECONDS * 1000) / 1000),
        policy: `"default";q=3;w=${WINDOW_SECONDS}`,
        rateLimit: `"default";r=${3 - i};t=${secondsLeft}`,
        retryAfter: null,
      });
    }
  });

  it("429 in the members envelope with Retry-After: the seconds left in the window, at least 1", async () => {
    const o = await owner();
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.parse("2026-11-22T11:00:00.000Z");
    vi.setSystemTime(t0);
    expect((await memberGet(o, o.members, 1)).status).toBe(200);
    vi.setSystemTime(t0 + 20_500);
    const res = await memberGet(o, o.members, 1);
    expect(res.status).toBe(429);
    expect(header(res, "Retry-After")).toBe("40");
    expect(header(res, "X-RateLimit-Remaining")).toBe("0");
    expect(header(res, "X-RateLimit-Used")).toBe("1");
    const body = (await res.json()) as MemberErrorBody;
    expect(body.error).toMatchObject({ code: "rate_limited", retriable: true, details: [] });
    vi.setSystemTime(t0 + WINDOW_SECONDS * 1000 - 1);
    expect(header(await memberGet(o, o.members, 1), "Retry-After")).toBe("1");
  });

  it("429 in the analytics envelope", async () => {
    const o = await owner();
    expect((await analyticsGet(o, o.analytics, 1)).status).toBe(200);
    const res = await analyticsGet(o, o.analytics, 1);
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/^Rate limit exceeded/), details: [] });
    expect(Number(header(res, "Retry-After"))).toBeGreaterThanOrEqual(1);
  });

  it("the window resets when it ends, not a millisecond earlier, and the next request opens a new one", async () => {
    const o = await owner();
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.parse("2026-11-22T12:00:00.000Z");
    vi.setSystemTime(t0);
    expect((await memberGet(o, o.members, 2)).status).toBe(200);
    expect((await memberGet(o, o.members, 2)).status).toBe(200);
    vi.setSystemTime(t0 + WINDOW_SECONDS * 1000 - 1);
    expect((await memberGet(o, o.members, 2)).status).toBe(429);
    const later = t0 + WINDOW_SECONDS * 1000 + 5_000;
    vi.setSystemTime(later);
    const fresh = await memberGet(o, o.members, 2);
    expect(fresh.status).toBe(200);
    expect(header(fresh, "X-RateLimit-Used")).toBe("1");
    expect(header(fresh, "X-RateLimit-Reset")).toBe(String((later + WINDOW_SECONDS * 1000) / 1000));
  });

  it("429 comes after 401 and before everything else (a 400 for bad parameters is not reached)", async () => {
    const o = await owner();
    expect((await analyticsGet(o, o.analytics, 1)).status).toBe(200);
    expect((await analyticsGet(o, o.analytics, 1, "perPage=0")).status).toBe(429);
    expect((await analyticsGet(o, "cak_not-a-key", 1)).status).toBe(401);
  });

  it("every authenticated answer counts, whatever its status after that (400, 404)", async () => {
    const o = await owner();
    expect((await analyticsGet(o, o.analytics, 3, "perPage=0")).status).toBe(400);
    expect((await analyticsGet(o, o.analytics, 3, `org=${unique("ghost")}`)).status).toBe(404);
    const third = await analyticsGet(o, o.analytics, 3);
    expect(header(third, "X-RateLimit-Used")).toBe("3");
    expect((await analyticsGet(o, o.analytics, 3)).status).toBe(429);
  });
});

describe("whose quota", () => {
  it("another owner is unaffected", async () => {
    const a = await owner();
    const b = await owner();
    expect((await memberGet(a, a.members, 1)).status).toBe(200);
    expect((await memberGet(a, a.members, 1)).status).toBe(429);
    const other = await memberGet(b, b.members, 1);
    expect(other.status).toBe(200);
    expect(header(other, "X-RateLimit-Used")).toBe("1");
  });

  it("regenerating a key does not reset the owner's quota", async () => {
    const o = await owner();
    expect((await memberGet(o, o.members, 1)).status).toBe(200);
    const regenerated = (await createKey(o.user, "members")).key;
    expect((await memberGet(o, regenerated, 1)).status).toBe(429);
  });

  it("the analytics and members quotas are independent", async () => {
    const o = await owner();
    expect((await memberGet(o, o.members, 1)).status).toBe(200);
    expect((await memberGet(o, o.members, 1)).status).toBe(429);
    const analytics = await analyticsGet(o, o.analytics, 1);
    expect(analytics.status).toBe(200);
    expect(header(analytics, "X-RateLimit-Used")).toBe("1");
  });

  it("a 401 never counts: a revoked key's requests leave the owner's quota alone", async () => {
    const o = await owner();
    await admin("DELETE", `/internal/v1/users/${o.user}/api-keys/members`);
    for (let i = 0; i < 3; i++) expect((await memberGet(o, o.members, 1)).status).toBe(401);
    const fresh = (await createKey(o.user, "members")).key;
    const res = await memberGet(o, fresh, 1);
    expect(res.status).toBe(200);
    expect(header(res, "X-RateLimit-Used")).toBe("1");
  });
});

/** What the owner's object has written to storage for a quota (memory may be ahead; see UserObject#counted). */
const storedUsed = (user: string, kind: "members" | "analytics") =>
  runInDurableObject(env.USERS.getByName(user), (_instance: UserObject, state) => {
    const rows = state.storage.sql.exec<{ used: number }>("SELECT used FROM quotas WHERE kind = ?", kind).toArray();
    return rows[0]?.used ?? 0;
  });

describe("the count survives a restart of the owner's object (RATE_LIMIT_PERSIST_MS)", () => {
  /** A crash of the owner's object (`ctx.abort()`, not graceful): what memory held and storage did not is gone. */
  const crash = (user: string) =>
    runInDurableObject(env.USERS.getByName(user), (_instance: UserObject, state) =>
      state.abort("test crash [expected-fault]"),
    ).then(
      () => expect.unreachable("abort returned"),
      (error: unknown) => expect(String(error)).toContain("test crash"),
    );
  /** Never written by the timer while a test runs. */
  const LONG = 60_000;
  const get = (o: Awaited<ReturnType<typeof owner>>, limit: number, persistMs?: number) =>
    memberGet(o, o.members, limit, undefined, persistMs);

  it("by default every count is written within the delay, one write for the requests counted meanwhile", async () => {
    const o = await owner();
    for (let i = 0; i < 3; i++) expect((await get(o, 10)).status).toBe(200);
    // Polls storage until the timer has written the count: a condition, not a fixed sleep.
    await vi.waitFor(async () => expect(await storedUsed(o.user, "members")).toBe(3), { timeout: 10_000, interval: 50 });
    await evictDurableObject(env.USERS.getByName(o.user));
    expect(header(await get(o, 10), "X-RateLimit-Used")).toBe("4");
  });

  it("the first request of a window and the one that exhausts the quota are written before answering", async () => {
    const o = await owner();
    expect((await get(o, 3, LONG)).status).toBe(200);
    expect(await storedUsed(o.user, "members")).toBe(1);
    expect((await get(o, 3, LONG)).status).toBe(200);
    expect(await storedUsed(o.user, "members")).toBe(1); // in memory only, exact all the same
    expect((await get(o, 3, LONG)).status).toBe(200);
    expect(await storedUsed(o.user, "members")).toBe(3);
    await crash(o.user);
    const refused = await get(o, 3, LONG);
    expect(refused.status).toBe(429);
    expect(header(refused, "X-RateLimit-Used")).toBe("3");
  });

  it("the documented price: a crash forgets the counts not yet written, and only those", async () => {
    const o = await owner();
    for (let i = 0; i < 3; i++) expect((await get(o, 10, LONG)).status).toBe(200);
    await crash(o.user);
    // The first was written before answering; the other two were still in memory.
    expect(header(await get(o, 10, LONG), "X-RateLimit-Used")).toBe("2");
  });

  it("0 writes every count before answering", async () => {
    const o = await owner();
    for (let i = 1; i <= 3; i++) {
      expect((await get(o, 10, 0)).status).toBe(200);
      expect(await storedUsed(o.user, "members")).toBe(i);
    }
    await crash(o.user);
    expect(header(await get(o, 10, 0), "X-RateLimit-Used")).toBe("4");
  });
});

describe("configuration", () => {
  it("a limit of 0 switches that kind's quota off: nothing counted, no quota headers; the other kind still counts", async () => {
    const o = await owner();
    const off = { RATE_LIMIT_MEMBERS: "0", RATE_LIMIT_ANALYTICS: "5", RATE_LIMIT_WINDOW_SECONDS: "60" };
    const member = () =>
      fetchWithEnv(
        new Request(`https://service.test/api/v1/organizations/${o.org}/members/${o.user}`, {
          headers: { Authorization: `Bearer ${o.members}` },
        }),
        off,
        { documented: false },
      );
    for (let i = 0; i < 3; i++) {
      const res = await member();
      expect(res.status).toBe(200);
      expect(header(res, "X-RateLimit-Limit")).toBeNull();
    }
    const analytics = await fetchWithEnv(
      new Request(`https://service.test/api/analytics/v1/prs?org=${o.org}`, {
        headers: { Authorization: `Bearer ${o.analytics}` },
      }),
      off,
    );
    expect(header(analytics, "X-RateLimit-Limit")).toBe("5");
    // Switching it on again finds nothing counted while it was off.
    expect(header(await memberGet(o, o.members, 5), "X-RateLimit-Used")).toBe("1");
  });

  it("a misconfigured var falls back to the default rather than switching limiting off", async () => {
    const o = await owner();
    const res = await fetchWithEnv(
      new Request(`https://service.test/api/v1/organizations/${o.org}/members/${o.user}`, {
        headers: { Authorization: `Bearer ${o.members}` },
      }),
      { RATE_LIMIT_MEMBERS: "ten", RATE_LIMIT_WINDOW_SECONDS: "-5" },
    );
    expect(header(res, "X-RateLimit-Limit")).toBe("1000");
    expect(header(res, "RateLimit-Policy")).toBe('"default";q=1000;w=900');
  });
});

describe("never limited", () => {
  it("health, readiness, the documents and the control plane carry no quota headers and are never 429", async () => {
    const o = await owner();
    const requests: [string, Record<string, string>][] = [
      ["/healthz", {}],
      ["/readyz", {}],
      ["/openapi.json", {}],
      ["/internal/v1/openapi.json", { Authorization: "Bearer test-admin-token-0123456789abcdef" }],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [path, headers] of requests) {
        const res = await fetchWithEnv(new Request(`https://service.test${path}`, { headers }), vars(1));
        expect(res.status).toBe(200);
        expect(header(res, "X-RateLimit-Limit")).toBeNull();
      }
      const put = await admin("PUT", `/internal/v1/organizations/${o.org}/members/${o.user}`, {
        githubLogin: "x",
        workEmail: "x@example.com",
        role: "admin",
        seat: true,
        isBot: false,
      });
      expect(put.headers.get("X-RateLimit-Limit")).toBeNull();
    }
  });

  it("401 responses carry no quota headers", async () => {
    const res = await call("/api/v1/organizations/acme/members/1");
    expect(res.status).toBe(401);
    expect(header(res, "X-RateLimit-Limit")).toBeNull();
  });
});

describe("unauthenticated floods (per client address, the Rate Limiting binding)", () => {
  it("past the binding's limit, failed authentications from one address are 429 with Retry-After; other addresses still get 401", async () => {
    const flood = (ip: string) =>
      call("/api/analytics/v1/prs?org=acme", { headers: { Authorization: "Bearer cak_forged", "CF-Connecting-IP": ip } });
    // The binding allows 100 per 60 s per address, in fixed wall-clock windows locally: if a window
    // boundary passes during the flood, up to 200 may get through before the first 429.
    let refused = 0;
    let first = await flood("203.0.113.7");
    while (first.status === 401 && refused < 250) {
      refused++;
      first = await flood("203.0.113.7");
    }
    expect(first.status).toBe(429);
    expect(refused).toBeGreaterThanOrEqual(100);
    expect(refused).toBeLessThanOrEqual(200);
    // From then on this address is refused before any key lookup, for the rest of the period.
    for (let i = 0; i < 5; i++) expect((await flood("203.0.113.7")).status).toBe(429);
    const throttled = await flood("203.0.113.7");
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(throttled.headers.get("X-RateLimit-Limit")).toBeNull();
    expect(await throttled.json()).toEqual({ error: expect.stringMatching(/failed authentications/), details: [] });
    expect((await flood("198.51.100.9")).status).toBe(401);
  });

  it("IPv6 addresses are throttled by /64: forged keys from one /64 get 429, another /64 still 401", async () => {
    const forged = (ip: string) =>
      call("/api/analytics/v1/prs?org=acme", { headers: { Authorization: "Bearer cak_forged", "CF-Connecting-IP": ip } });
    // One client controls a whole /64: every request from another address inside it.
    let refused = 0;
    let last = await forged("2001:db8:7:64::1");
    while (last.status === 401 && refused < 300) {
      refused++;
      last = await forged(
        `2001:db8:7:64:${((refused * 7919) % 0xffff).toString(16)}:${refused.toString(16)}:0:${(refused % 9) + 1}`,
      );
    }
    expect(last.status).toBe(429);
    expect(refused).toBeLessThanOrEqual(200);
    // The same /64 written another way is the same client.
    expect((await forged("2001:0db8:0007:0064:ffff::2")).status).toBe(429);
    expect((await forged("2001:db8:7:65::1")).status).toBe(401);
  });
});
