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

type Created = {
  key: string;
  keyId: string;
  name: string;
  kind: string;
  scopes: string[];
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  allowedNetworks: string[];
};
type Listed = { data: (Omit<Created, "key"> & { lastUsedAt: string | null })[] };

const createIn = (session: Awaited<ReturnType<typeof signIn>>, json: Record<string, unknown>) =>
  appCall("/app/api/keys", session, { method: "POST", json: { expiresInDays: null, ...json } });
const listIn = async (session: Awaited<ReturnType<typeof signIn>>) =>
  (await (await appCall("/app/api/keys", session)).json()) as Listed;

describe("keys in the app", () => {
  it("none at first", async () => {
    const session = await signIn(await createUser());
    const res = await appCall("/app/api/keys", session);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [] });
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
    expect(created.name).toBe("default");
    if (span === null) expect(created.expiresAt).toBeNull();
    else expect(Date.parse(created.expiresAt ?? "") - Date.parse(created.createdAt)).toBe(span);
    expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before);
    expect(await useMembersKey(created.key)).toBe(404);
  });

  it("400 for an expiry the app does not offer, a kind that does not exist, a bad name or network", async () => {
    const session = await signIn(await createUser());
    for (const json of [
      { kind: "members", expiresInDays: 10 },
      { kind: "members", expiresInDays: "30" },
      { kind: "members" },
      { kind: "admin", expiresInDays: 7 },
      { kind: "members", expiresInDays: 7, name: "" },
      { kind: "members", expiresInDays: 7, name: "x".repeat(65) },
      { kind: "members", expiresInDays: 7, allowedNetworks: ["10.0.0.0/33"] },
    ]) {
      const res = await appCall("/app/api/keys", session, { method: "POST", json });
      expect(res.status).toBe(400);
    }
  });

  it("lists name, hint, scopes, networks, created, expires and last used (to the hour); last used is written with the quota counters", async () => {
    const user = await createUser();
    const session = await signIn(user);
    const created = (await (
      await createIn(session, {
        kind: "members",
        name: "Agent",
        readOnly: true,
        expiresInDays: 30,
        allowedNetworks: ["10.0.0.0/8"],
      })
    ).json()) as Created;
    expect(created.scopes).toEqual(["members:read"]);
    expect(created.hint).toBe(`cbk_…${created.key.slice(-4)}`);
    expect(created.keyId).toMatch(/^key_[0-9A-Za-z]{20}$/);
    let listed = await listIn(session);
    const { key: _secret, ...shown } = created;
    expect(listed).toEqual({ data: [{ ...shown, lastUsedAt: null }] });

    const usedAt = Date.now();
    const used = await call(`/api/v1/organizations/${NO_ORG}/members/1`, {
      headers: { Authorization: `Bearer ${created.key}`, "CF-Connecting-IP": "10.1.2.3" },
    });
    expect(used.status).toBe(404);
    listed = await listIn(session);
    const hour = toHour(usedAt);
    expect([new Date(hour).toISOString(), new Date(hour + 3_600_000).toISOString()]).toContain(listed.data[0]?.lastUsedAt);
    // The first request of a quota window is written before answering, and "last used" with it.
    const stored = await runInDurableObject(env.USERS.getByName(user), (_i, state) =>
      state.storage.sql
        .exec<{ last_used_at: number | null }>("SELECT last_used_at FROM api_keys WHERE key_id = ?", created.keyId)
        .one(),
    );
    expect(stored.last_used_at).toBe(Date.parse(listed.data[0]?.lastUsedAt ?? ""));
  });

  it("regenerating (the same kind and name) replaces that key's value: the old one is 401 at once, the new one works", async () => {
    const session = await signIn(await createUser());
    const first = (await (await createIn(session, { kind: "members", name: "ci" })).json()) as Created;
    const other = (await (await createIn(session, { kind: "members", name: "sheet" })).json()) as Created;
    expect(await useMembersKey(first.key)).toBe(404);
    const second = (await (await createIn(session, { kind: "members", name: "CI" })).json()) as Created;
    expect(second.keyId).toBe(first.keyId);
    expect(await useMembersKey(first.key)).toBe(401);
    expect(await useMembersKey(second.key)).toBe(404);
    expect(await useMembersKey(other.key)).toBe(404);
    // Listed by kind, then by when each value was made: the regenerated one last.
    expect((await listIn(session)).data.map((k) => k.name)).toEqual(["sheet", "CI"]);
  });

  it("revoking one key ends it at once and leaves the others; revoking again is fine", async () => {
    const session = await signIn(await createUser());
    const a = (await (await createIn(session, { kind: "members", name: "a" })).json()) as Created;
    const b = (await (await createIn(session, { kind: "members", name: "b" })).json()) as Created;
    expect((await appCall(`/app/api/keys/${a.keyId}`, session, { method: "DELETE" })).status).toBe(204);
    expect(await useMembersKey(a.key)).toBe(401);
    expect(await useMembersKey(b.key)).toBe(404);
    expect((await listIn(session)).data.map((k) => k.keyId)).toEqual([b.keyId]);
    expect((await appCall(`/app/api/keys/${a.keyId}`, session, { method: "DELETE" })).status).toBe(204);
  });

  it("one code path with the control plane: its key is the default key, listed and regenerated here", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "analytics");
    const session = await signIn(user);
    const listed = await listIn(session);
    expect(listed.data.map((k) => [k.kind, k.name])).toEqual([["analytics", "default"]]);
    await createIn(session, { kind: "analytics", expiresInDays: 7 });
    const res = await call(`/api/analytics/v1/prs?org=${NO_ORG}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(401);
  });

  it("a session's key requests touch only its own user's keys", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const { key, keyId } = await createKey(b, "members");
    const session = await signIn(a);
    expect((await appCall(`/app/api/keys/${keyId}`, session, { method: "DELETE" })).status).toBe(204);
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
