import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { toHour } from "../../src/rules/sessions";
import { appCall, signIn } from "./app-helpers";
import { call, createKey, createUser, env } from "./helpers";

/** Contract section 13, `/app/keys`: list, create or regenerate with an expiry, revoke; one code path with the control plane. */

const DAY = 86_400_000;
const NO_ORG = "no-such-org-for-app-key-tests";
/** 404 org_not_found: the key passed authentication. 401: it did not. */
const useMembersKey = (key: string) =>
  call(`/api/v1/organizations/${NO_ORG}/members/1`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);

type Created = { key: string; kind: string; createdAt: string; expiresAt: string | null };
type Listed = Record<"analytics" | "members", { createdAt: string; expiresAt: string | null; lastUsedAt: string | null } | null>;

describe("keys in the app", () => {
  it("none of either kind at first", async () => {
    const session = await signIn(await createUser());
    const res = await appCall("/app/api/keys", session);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ analytics: null, members: null });
  });

  it.each([
    [7, 7 * DAY],
    [30, 30 * DAY],
    [90, 90 * DAY],
    [365, 365 * DAY],
    [null, null],
  ])("creates a key that expires in %s days; it works on the API at once", async (days, span) => {
    const session = await signIn(await createUser());
    const before = Date.now();
    const res = await appCall("/app/api/keys", session, { method: "POST", json: { kind: "members", expiresInDays: days } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Created;
    expect(created.key).toMatch(/^cbk_/);
    if (span === null) expect(created.expiresAt).toBeNull();
    else expect(Date.parse(created.expiresAt ?? "") - Date.parse(created.createdAt)).toBe(span);
    expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before);
    expect(await useMembersKey(created.key)).toBe(404);
  });

  it("400 for an expiry the app does not offer, or a kind that does not exist", async () => {
    const session = await signIn(await createUser());
    for (const json of [
      { kind: "members", expiresInDays: 10 },
      { kind: "members", expiresInDays: "30" },
      { kind: "members" },
      { kind: "admin", expiresInDays: 7 },
    ]) {
      const res = await appCall("/app/api/keys", session, { method: "POST", json });
      expect(res.status).toBe(400);
    }
  });

  it("lists created, expires and last used (to the hour); last used is written with the quota counters", async () => {
    const user = await createUser();
    const session = await signIn(user);
    const created = (await (
      await appCall("/app/api/keys", session, { method: "POST", json: { kind: "members", expiresInDays: 30 } })
    ).json()) as Created;
    let listed = (await (await appCall("/app/api/keys", session)).json()) as Listed;
    expect(listed).toEqual({
      analytics: null,
      members: { createdAt: created.createdAt, expiresAt: created.expiresAt, lastUsedAt: null },
    });

    const usedAt = Date.now();
    expect(await useMembersKey(created.key)).toBe(404);
    listed = (await (await appCall("/app/api/keys", session)).json()) as Listed;
    const hour = toHour(usedAt);
    expect([new Date(hour).toISOString(), new Date(hour + 3_600_000).toISOString()]).toContain(listed.members?.lastUsedAt);
    // The first request of a quota window is written before answering, and "last used" with it.
    const stored = await runInDurableObject(env.USERS.getByName(user), (_i, state) =>
      state.storage.sql.exec<{ last_used_at: number | null }>("SELECT last_used_at FROM api_keys WHERE kind = 'members'").one(),
    );
    expect(stored.last_used_at).toBe(Date.parse(listed.members?.lastUsedAt ?? ""));
  });

  it("regenerating replaces the key: the old one is 401 at once, the new one works, last used starts again", async () => {
    const session = await signIn(await createUser());
    const create = () => appCall("/app/api/keys", session, { method: "POST", json: { kind: "members", expiresInDays: null } });
    const first = (await (await create()).json()) as Created;
    expect(await useMembersKey(first.key)).toBe(404);
    const second = (await (await create()).json()) as Created;
    expect(await useMembersKey(first.key)).toBe(401);
    const listed = (await (await appCall("/app/api/keys", session)).json()) as Listed;
    expect(listed.members?.lastUsedAt).toBeNull();
    expect(await useMembersKey(second.key)).toBe(404);
  });

  it("revoking ends the key at once and lists none; revoking again is fine", async () => {
    const session = await signIn(await createUser());
    const created = (await (
      await appCall("/app/api/keys", session, { method: "POST", json: { kind: "members", expiresInDays: 7 } })
    ).json()) as Created;
    expect((await appCall("/app/api/keys/members", session, { method: "DELETE" })).status).toBe(204);
    expect(await useMembersKey(created.key)).toBe(401);
    expect(await (await appCall("/app/api/keys", session)).json()).toEqual({ analytics: null, members: null });
    expect((await appCall("/app/api/keys/members", session, { method: "DELETE" })).status).toBe(204);
  });

  it("one code path with the control plane: a key it created is listed, replaced and revoked here", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    const session = await signIn(user);
    const listed = (await (await appCall("/app/api/keys", session)).json()) as Listed;
    expect(listed.analytics).not.toBeNull();
    await appCall("/app/api/keys", session, { method: "POST", json: { kind: "analytics", expiresInDays: 7 } });
    const res = await call(`/api/analytics/v1/prs?org=${NO_ORG}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(401);
  });

  it("a session's key requests touch only its own user's keys", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const { key } = await createKey(b, "members");
    const session = await signIn(a);
    expect((await appCall("/app/api/keys/members", session, { method: "DELETE" })).status).toBe(204);
    expect(await useMembersKey(key)).toBe(404);
  });
});

describe("quotas: the app's member routes count as a members key would, its key routes not at all", () => {
  it("GET /app/api/orgs carries the members quota's headers and shares its count with the user's cbk_ key", async () => {
    const user = await createUser();
    const session = await signIn(user);
    const first = await appCall("/app/api/orgs", session);
    expect(first.status).toBe(200);
    const used = Number(first.headers.get("X-RateLimit-Used"));
    expect(used).toBeGreaterThanOrEqual(1);
    const { key } = await createKey(user, "members");
    const viaKey = await call("/api/v1/organizations", { headers: { Authorization: `Bearer ${key}` } });
    expect(Number(viaKey.headers.get("X-RateLimit-Used"))).toBe(used + 1);
    const keys = await appCall("/app/api/keys", session);
    expect(keys.headers.get("X-RateLimit-Used")).toBeNull();
  });
});
