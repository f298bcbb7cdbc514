import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { generateApiKey, hashApiKey } from "../../src/auth/api-key";
import { isKeyRecordCached } from "../../src/auth/authenticate";
import { keyRecordKey, kvExpiry } from "../../src/auth/key-record";
import { admin, call, createKey, createUser, env } from "./helpers";

// An organization no test creates: a key that passes authentication gets the next check's 404.
const NO_ORG = "no-such-org-for-key-tests";
const ANALYTICS = `/api/analytics/v1/prs?org=${NO_ORG}`;
const MEMBERS = `/api/v1/organizations/${NO_ORG}/members/1`;
/**
 * Authentication passed: the answer is the 404 of the unknown organization, the check that comes
 * right after authentication (not a 401, and not a 500 or any other failure either).
 */
async function passes(res: Promise<Response>): Promise<void> {
  const response = await res;
  const body = (await response.json()) as { error: string | { code: string } };
  expect(response.status).toBe(404);
  expect(response.headers.get("WWW-Authenticate")).toBeNull();
  // The analytics envelope carries its message, the members envelope its code.
  if (typeof body.error === "string") expect(body.error).toBe("The organization cannot be resolved to an installation.");
  else expect(body.error.code).toBe("org_not_found");
}

const withKey = (path: string, key: string, scheme = "Bearer") => call(path, { headers: { Authorization: `${scheme} ${key}` } });

describe("authentication", () => {
  it("accepts a current key, with the scheme name in any case", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    await passes(withKey(ANALYTICS, key));
    await passes(withKey(ANALYTICS, key, "bearer"));
    await passes(withKey(ANALYTICS, key, "BEARER"));
  });

  it("401 with WWW-Authenticate: Bearer without a header", async () => {
    const res = await call(ANALYTICS);
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
    expect(await res.json()).toEqual({ error: expect.stringContaining("bearer") });
  });

  it("401 for another scheme", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    const res = await withKey(ANALYTICS, key, "Basic");
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
  });

  it("401 for a malformed key, before any storage is touched", async () => {
    const res = await withKey(ANALYTICS, "cak_not-a-key");
    expect(res.status).toBe(401);
  });

  it("unknown and revoked keys get the same answer", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    await admin("DELETE", `/internal/v1/users/${user}/api-keys/analytics`);
    const revoked = await withKey(ANALYTICS, key);
    const unknown = await withKey(ANALYTICS, generateApiKey("analytics"));
    expect(revoked.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await revoked.json()).toEqual(await unknown.json());
  });

  it("a key refused by its owner's verdict leaves the isolate's record cache, so it costs what an unknown key does", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    const hash = await hashApiKey(key);
    await passes(withKey(ANALYTICS, key));
    expect(isKeyRecordCached(hash)).toBe(true);
    await admin("DELETE", `/internal/v1/users/${user}/api-keys/analytics`);
    expect((await withKey(ANALYTICS, key)).status).toBe(401);
    expect(isKeyRecordCached(hash)).toBe(false);
    // Still refused afterwards, now at the KV lookup (the revoked key's record is gone there too).
    expect((await withKey(ANALYTICS, key)).status).toBe(401);
    expect(isKeyRecordCached(hash)).toBe(false);
  });

  it("a cbk_ key cannot authenticate the analytics export, a cak_ key not the members API", async () => {
    const user = await createUser();
    const analytics = await createKey(user, "analytics");
    const members = await createKey(user, "members");
    expect((await withKey(ANALYTICS, members.key)).status).toBe(401);
    expect((await withKey(MEMBERS, analytics.key)).status).toBe(401);
    await passes(withKey(MEMBERS, members.key));
    const body = (await (await withKey(MEMBERS, analytics.key)).json()) as { error: { code: string } };
    expect(body.error.code).toBe("unauthenticated");
  });

  it("regenerating invalidates the previous key on the very next request", async () => {
    const user = await createUser();
    const first = await createKey(user, "analytics");
    await passes(withKey(ANALYTICS, first.key));
    const second = await createKey(user, "analytics");
    expect(second.key).not.toBe(first.key);
    expect((await withKey(ANALYTICS, first.key)).status).toBe(401);
    await passes(withKey(ANALYTICS, second.key));
  });

  it("keys of the two kinds are independent", async () => {
    const user = await createUser();
    const analytics = await createKey(user, "analytics");
    await createKey(user, "members");
    await admin("DELETE", `/internal/v1/users/${user}/api-keys/members`);
    await passes(withKey(ANALYTICS, analytics.key));
  });

  it("revoking takes effect on the very next request, and revoking again is fine", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "members");
    await passes(withKey(MEMBERS, key));
    expect((await admin("DELETE", `/internal/v1/users/${user}/api-keys/members`)).status).toBe(204);
    expect((await withKey(MEMBERS, key)).status).toBe(401);
    expect((await admin("DELETE", `/internal/v1/users/${user}/api-keys/members`)).status).toBe(204);
  });

  it("blocking the owner refuses the key on the next request; unblocking restores it", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    await admin("PUT", `/internal/v1/users/${user}`, { githubLogin: `user${user}`, blocked: true });
    expect((await withKey(ANALYTICS, key)).status).toBe(401);
    await admin("PUT", `/internal/v1/users/${user}`, { githubLogin: `user${user}`, blocked: false });
    await passes(withKey(ANALYTICS, key));
  });

  it("a blocked owner's key is refused as cheaply as an unknown key: its lookup is gone, no owner's object is asked", async () => {
    const user = await createUser();
    const analytics = await createKey(user, "analytics");
    const members = await createKey(user, "members");
    const hashes = await Promise.all([hashApiKey(analytics.key), hashApiKey(members.key)]);
    await admin("PUT", `/internal/v1/users/${user}`, { githubLogin: `user${user}`, blocked: true });
    for (const hash of hashes) expect(await env.API_KEYS.get(keyRecordKey(hash))).toBeNull();
    expect((await withKey(ANALYTICS, analytics.key)).status).toBe(401);
    expect(isKeyRecordCached(hashes[0] as string)).toBe(false);
    // A key created while blocked gets no lookup either, and works once the owner is unblocked.
    const created = await createKey(user, "analytics");
    expect(await env.API_KEYS.get(keyRecordKey(await hashApiKey(created.key)))).toBeNull();
    await admin("PUT", `/internal/v1/users/${user}`, { githubLogin: `user${user}`, blocked: false });
    await passes(withKey(ANALYTICS, created.key));
    await passes(withKey(MEMBERS, members.key));
    expect((await withKey(ANALYTICS, analytics.key)).status).toBe(401);
  });

  describe("expiry", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("a key works until its expiry and is refused from then on", async () => {
      const user = await createUser();
      const expiresAt = new Date(Date.now() + 3_600_000);
      const created = await createKey(user, "analytics", expiresAt.toISOString());
      expect(created.expiresAt).toBe(expiresAt.toISOString());
      await passes(withKey(ANALYTICS, created.key));

      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(expiresAt.getTime() - 1);
      await passes(withKey(ANALYTICS, created.key));
      vi.setSystemTime(expiresAt.getTime());
      expect((await withKey(ANALYTICS, created.key)).status).toBe(401);
    });

    it("a key without expiry keeps working", async () => {
      const user = await createUser();
      const created = await createKey(user, "analytics");
      expect(created.expiresAt).toBeNull();
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.now() + 10 * 365 * 86_400_000);
      await passes(withKey(ANALYTICS, created.key));
    });
  });
});

describe("concurrent creation (docs/api.md: each answer is the key current when it was answered)", () => {
  it("10 concurrent creations for one user: ten 201s, and the one key that works is the one answered last", async () => {
    const user = await createUser();
    const answered: string[] = [];
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        admin("POST", `/internal/v1/users/${user}/api-keys`, { kind: "members", expiresAt: null }).then(async (res) => {
          answered.push(((await res.clone().json()) as { key: string }).key);
          return res.status;
        }),
      ),
    );
    expect(statuses).toEqual(Array(10).fill(201));
    expect(new Set(answered).size).toBe(10);
    const working: string[] = [];
    for (const key of answered) if ((await withKey(MEMBERS, key)).status !== 401) working.push(key);
    expect(working).toEqual([answered[9]]);
    // Every replaced key's lookup is gone from KV; only the working one remains.
    const present = await Promise.all(
      answered.map(async (key) => (await env.API_KEYS.get(keyRecordKey(await hashApiKey(key)))) !== null),
    );
    expect(present).toEqual([...Array(9).fill(false), true]);
  });
});

describe("keys at rest", () => {
  it("KV holds only SHA-256 hashes as keys and no plaintext in any value", async () => {
    const user = await createUser();
    const analytics = await createKey(user, "analytics");
    const members = await createKey(user, "members");
    const listed = await env.API_KEYS.list();
    const names = listed.keys.map((k) => k.name);
    expect(names).toContain(`apikey:${await hashApiKey(analytics.key)}`);
    expect(names).toContain(`apikey:${await hashApiKey(members.key)}`);
    for (const name of names) {
      expect(name).toMatch(/^apikey:[0-9a-f]{64}$/);
      const value = (await env.API_KEYS.get(name)) ?? "";
      for (const key of [analytics.key, members.key]) {
        expect(name).not.toContain(key);
        expect(value).not.toContain(key);
        expect(value).not.toContain(key.slice(4));
      }
    }
  });

  it("the user's Durable Object stores only the hash", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "members");
    const rows = await runInDurableObject(env.USERS.getByName(user), (_instance, state) =>
      state.storage.sql.exec("SELECT * FROM api_keys").toArray(),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key_hash).toBe(await hashApiKey(key));
    expect(JSON.stringify(rows)).not.toContain(key.slice(4));
  });

  it("D1 holds nothing of a key", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>();
    for (const { name } of tables.results) {
      if (name.startsWith("_cf_") || name.startsWith("sqlite_")) continue;
      const rows = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
      expect(JSON.stringify(rows.results)).not.toContain(key.slice(4));
    }
  });

  it("regenerating removes the old lookup entry from KV", async () => {
    const user = await createUser();
    const first = await createKey(user, "analytics");
    await createKey(user, "analytics");
    expect(await env.API_KEYS.get(`apikey:${await hashApiKey(first.key)}`)).toBeNull();
  });
});

describe("key expiry (contract section 5)", () => {
  /** The expiry (epoch seconds) KV holds for a key's lookup entry; undefined when it has none. */
  async function kvExpiration(key: string): Promise<number | undefined> {
    const name = `apikey:${await hashApiKey(key)}`;
    const listed = await env.API_KEYS.list({ prefix: name });
    expect(listed.keys.map((k) => k.name)).toEqual([name]);
    return listed.keys[0]?.expiration;
  }

  it.each([
    ["one second after KV's 32-bit expiry ends", "2038-01-19T03:14:08Z", "2038-01-19T03:14:08.000Z"],
    ["in 2100", "2100-01-01T00:00:00Z", "2100-01-01T00:00:00.000Z"],
    ["at the last instant there is", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
    ["at the last instant, written with an offset", "9999-12-31T23:59:59.999+00:00", "9999-12-31T23:59:59.999Z"],
  ])("a key expiring %s is created (201), authenticates, and its KV entry has no expiry", async (_when, expiresAt, echoed) => {
    const user = await createUser();
    for (const kind of ["analytics", "members"] as const) {
      const res = await admin("POST", `/internal/v1/users/${user}/api-keys`, { kind, expiresAt });
      expect(res.status).toBe(201);
      const created = (await res.json()) as { key: string; expiresAt: string };
      expect(created.expiresAt).toBe(echoed);
      await passes(withKey(kind === "analytics" ? ANALYTICS : MEMBERS, created.key));
      // No KV expiry can express it; the UserObject refuses the key once it has expired.
      expect(await kvExpiration(created.key)).toBeUndefined();
    }
  });

  it("a key expiring in 30 seconds still gets a KV expiry, a minute after the key's", async () => {
    const user = await createUser();
    const expiresAt = Date.now() + 30_000;
    const { key } = await createKey(user, "members", new Date(expiresAt).toISOString());
    await passes(withKey(MEMBERS, key));
    const expiration = await kvExpiration(key);
    expect(expiration).toBeGreaterThanOrEqual(Math.ceil(expiresAt / 1000) + 59);
    expect(expiration).toBeLessThanOrEqual(Math.ceil(expiresAt / 1000) + 62);
  });

  it("a key expiring in a year has its KV entry expire a minute after it", async () => {
    const user = await createUser();
    const expiresAt = Date.now() + 365 * 86_400_000;
    const { key } = await createKey(user, "analytics", new Date(expiresAt).toISOString());
    const expiration = await kvExpiration(key);
    expect(expiration).toBeGreaterThanOrEqual(Math.ceil(expiresAt / 1000) + 59);
    expect(expiration).toBeLessThanOrEqual(Math.ceil(expiresAt / 1000) + 62);
  });

  it("a key without expiry has no KV expiry", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    expect(await kvExpiration(key)).toBeUndefined();
  });

  it.each([
    ["one millisecond after the last instant", "9999-12-31T23:59:59.999-00:01", "must not be after 9999-12-31T23:59:59.999Z"],
    ["a five-digit year", "10000-01-01T00:00:00Z", expect.stringMatching(/^must be an ISO 8601 timestamp/)],
    ["a signed year", "+010000-01-01T00:00:00Z", expect.stringMatching(/^must be an ISO 8601 timestamp/)],
    ["the past", "2020-01-01T00:00:00Z", "must be in the future"],
    ["a second ago", new Date(Date.now() - 1000).toISOString(), "must be in the future"],
  ])("400 for an expiry in %s", async (_what, expiresAt, message) => {
    const user = await createUser();
    const res = await admin("POST", `/internal/v1/users/${user}/api-keys`, { kind: "analytics", expiresAt });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: unknown[] } };
    expect(body.error.details).toEqual([{ path: "expiresAt", message }]);
  });
});

// A plain function, but its module defines the UserObject (cloudflare:workers): it stays here.
describe("kvExpiry", () => {
  const now = Date.parse("2026-11-22T12:00:00Z");
  const lastKvSecond = 2_147_483_647; // 2038-01-19T03:14:07Z

  it("is a TTL of the remaining seconds plus a minute, and at least KV's 60 s", () => {
    expect(kvExpiry(now + 86_400_000, now)).toEqual({ expirationTtl: 86_400 + 60 });
    expect(kvExpiry(now + 30_000, now)).toEqual({ expirationTtl: 90 });
    expect(kvExpiry(now + 1, now)).toEqual({ expirationTtl: 61 });
    expect(kvExpiry(now, now)).toEqual({ expirationTtl: 60 });
  });

  it("has none where KV's 32-bit expiry cannot reach, and none for keys without expiry", () => {
    const nowSeconds = Math.floor(now / 1000);
    const reachable = (lastKvSecond - 60) * 1000; // its entry expires at the last second KV can hold
    expect(kvExpiry(reachable, now)).toEqual({ expirationTtl: lastKvSecond - nowSeconds });
    expect(kvExpiry(reachable + 1, now)).toEqual({});
    expect(kvExpiry(Date.parse("9999-12-31T23:59:59.999Z"), now)).toEqual({});
    expect(kvExpiry(null, now)).toEqual({});
  });
});
