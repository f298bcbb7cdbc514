import { describe, expect, it } from "vitest";
import { addMember, admin, adminOk, call, createOrg, createUser, unique } from "./helpers";
import { listTools, rpc } from "./mcp-helpers";

/** Contract section 18 for a person's keys: named keys, scopes and allowed networks, over HTTP. */

interface Created {
  key: string;
  keyId: string;
  name: string;
  kind: string;
  scopes: string[];
  hint: string;
  expiresAt: string | null;
  allowedNetworks: string[];
}

const keysOf = (user: string) => `/internal/v1/users/${user}/api-keys`;
const create = (user: string, body: Record<string, unknown>) => admin("POST", keysOf(user), body);
const createOk = (user: string, body: Record<string, unknown>) => adminOk<Created>("POST", keysOf(user), body);
const list = async (user: string) =>
  (await adminOk<{ data: (Omit<Created, "key"> & { lastUsedAt: string | null })[] }>("GET", keysOf(user))).data;

const NO_ORG = "no-such-org-for-named-key-tests";
/** 404 org_not_found: the key passed authentication. */
const membersGet = (key: string, address?: string) =>
  call(`/api/v1/organizations/${NO_ORG}/members/1`, {
    headers: { Authorization: `Bearer ${key}`, ...(address ? { "CF-Connecting-IP": address } : {}) },
  });
const patch = (key: string, path: string, json: unknown, address?: string) =>
  call(path, {
    method: "PATCH",
    json,
    headers: { Authorization: `Bearer ${key}`, ...(address ? { "CF-Connecting-IP": address } : {}) },
  });
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
const used = (res: Response) => Number(res.headers.get("X-RateLimit-Used"));

describe("named personal keys: several of a kind, each told apart and revoked alone", () => {
  it("two named keys work side by side; revoking one leaves the other working", async () => {
    const user = await createUser();
    const sheet = await createOk(user, { kind: "members", name: "spreadsheet" });
    const nightly = await createOk(user, { kind: "members", name: "nightly job" });
    expect(sheet.keyId).not.toBe(nightly.keyId);
    expect((await membersGet(sheet.key)).status).toBe(404);
    expect((await membersGet(nightly.key)).status).toBe(404);
    expect((await admin("DELETE", `${keysOf(user)}/members/${sheet.keyId}`)).status).toBe(204);
    expect((await membersGet(sheet.key)).status).toBe(401);
    expect((await membersGet(nightly.key)).status).toBe(404);
    expect((await list(user)).map((k) => k.name)).toEqual(["nightly job"]);
  });

  it("the same kind and name (compared case-insensitively) regenerates that key only: same id, new value, old value 401", async () => {
    const user = await createUser();
    const first = await createOk(user, { kind: "analytics", name: "Agent" });
    const other = await createOk(user, { kind: "analytics", name: "ci" });
    const again = await createOk(user, { kind: "analytics", name: "AGENT", allowedNetworks: ["192.0.2.0/24"] });
    expect(again.keyId).toBe(first.keyId);
    expect(again.key).not.toBe(first.key);
    expect(again.allowedNetworks).toEqual(["192.0.2.0/24"]);
    const prs = (key: string) =>
      call(`/api/analytics/v1/prs?org=${NO_ORG}`, {
        headers: { Authorization: `Bearer ${key}`, "CF-Connecting-IP": "192.0.2.9" },
      });
    expect((await prs(first.key)).status).toBe(401);
    expect((await prs(again.key)).status).not.toBe(401);
    expect((await prs(other.key)).status).not.toBe(401);
    // A name is unique per kind: the same name of the other kind is another key.
    const members = await createOk(user, { kind: "members", name: "agent" });
    expect(members.keyId).not.toBe(first.keyId);
  });

  it("the hint is the prefix and the last 4 characters; the list never shows a secret", async () => {
    const user = await createUser();
    const created = await createOk(user, { kind: "analytics", name: "hinted" });
    expect(created.hint).toBe(`cak_…${created.key.slice(-4)}`);
    const listed = await list(user);
    expect(listed).toEqual([{ ...created, key: undefined, lastUsedAt: null }].map(({ key: _k, ...rest }) => rest));
    expect(JSON.stringify(listed)).not.toContain(created.key);
  });

  it("at most 10 of a kind: the 11th is 409 key_limit_reached; regenerating one still works; the other kind has its own 10", async () => {
    const user = await createUser();
    for (let i = 0; i < 10; i++) await createOk(user, { kind: "members", name: `key ${i}` });
    const over = await create(user, { kind: "members", name: "one too many" });
    expect(over.status).toBe(409);
    expect(await errorCode(over)).toBe("key_limit_reached");
    expect((await create(user, { kind: "members", name: "KEY 3" })).status).toBe(201);
    expect((await create(user, { kind: "analytics", name: "key 0" })).status).toBe(201);
    expect((await list(user)).filter((k) => k.kind === "members")).toHaveLength(10);
  });

  it("10 concurrent creations never pass the limit: exactly the room left is created", async () => {
    const user = await createUser();
    for (let i = 0; i < 6; i++) await createOk(user, { kind: "analytics", name: `before ${i}` });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(user, { kind: "analytics", name: `concurrent ${i}` })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(4);
    expect(statuses.filter((s) => s === 409)).toHaveLength(6);
    expect(await list(user)).toHaveLength(10);
  });

  it("DELETE .../api-keys/{kind} revokes every key of that kind, as before", async () => {
    const user = await createUser();
    const a = await createOk(user, { kind: "members", name: "a" });
    const b = await createOk(user, { kind: "members", name: "b" });
    const analytics = await createOk(user, { kind: "analytics", name: "a" });
    expect((await admin("DELETE", `${keysOf(user)}/members`)).status).toBe(204);
    expect((await membersGet(a.key)).status).toBe(401);
    expect((await membersGet(b.key)).status).toBe(401);
    expect((await list(user)).map((k) => k.keyId)).toEqual([analytics.keyId]);
  });

  it("400 with details paths: a bad name, a scope of the other kind, an invalid CIDR, more than 20 networks", async () => {
    const user = await createUser();
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "members", name: "" }, "name"],
      [{ kind: "members", name: "tab\there" }, "name"],
      [{ kind: "analytics", scopes: ["members:read"] }, "scopes.0"],
      [{ kind: "members", scopes: ["members:read", "analytics:read"] }, "scopes.1"],
      [{ kind: "members", allowedNetworks: ["10.0.0.0/8", "10.0.0.0/40"] }, "allowedNetworks.1"],
      [{ kind: "members", allowedNetworks: Array.from({ length: 21 }, (_, i) => `10.0.${i}.0/24`) }, "allowedNetworks"],
    ];
    for (const [body, path] of cases) {
      const res = await create(user, body);
      expect(res.status).toBe(400);
      const details = ((await res.json()) as { error: { details: { path: string }[] } }).error.details;
      expect(details.map((d) => d.path)).toContain(path);
    }
    expect(await list(user)).toEqual([]);
  });
});

describe("scopes: a read-only members key reads, and its writes are 403 insufficient_scope, counted", () => {
  async function readOnlyWorld() {
    const org = await createOrg(unique("scopes"), { plan: "team" });
    const [owner, member] = [await createUser(), await createUser()];
    await addMember(org, owner, "admin");
    await addMember(org, member, "member", { seat: false });
    const reader = await createOk(owner, { kind: "members", name: "reader", scopes: ["members:read"] });
    return { org, owner, member, reader };
  }

  it("reads work; PATCH and batch PATCH answer 403 insufficient_scope, counted against the quota, nothing changes", async () => {
    const { org, member, reader } = await readOnlyWorld();
    expect(reader.scopes).toEqual(["members:read"]);
    const read = await call(`/api/v1/organizations/${org}/members/${member}`, {
      headers: { Authorization: `Bearer ${reader.key}` },
    });
    expect(read.status).toBe(200);
    const one = await patch(reader.key, `/api/v1/organizations/${org}/members/${member}`, { seat: true, expectedSeat: false });
    expect(one.status).toBe(403);
    expect(await errorCode(one)).toBe("insufficient_scope");
    expect(used(one)).toBe(used(read) + 1);
    const batch = await patch(reader.key, `/api/v1/organizations/${org}/members`, {
      changes: [{ githubUserId: member, seat: true, expectedSeat: false }],
    });
    expect(batch.status).toBe(403);
    expect(await errorCode(batch)).toBe("insufficient_scope");
    expect(used(batch)).toBe(used(one) + 1);
    const after = await call(`/api/v1/organizations/${org}/members/${member}`, {
      headers: { Authorization: `Bearer ${reader.key}` },
    });
    expect(await after.json()).toMatchObject({ seat: false });
  });

  it("401 comes first: a revoked read-only key is 401 on a write, not 403", async () => {
    const { org, owner, member, reader } = await readOnlyWorld();
    await admin("DELETE", `${keysOf(owner)}/members/${reader.keyId}`);
    const res = await patch(reader.key, `/api/v1/organizations/${org}/members/${member}`, { seat: true, expectedSeat: false });
    expect(res.status).toBe(401);
  });

  it("over MCP a read-only key behaves as /mcp/readonly: read tools only; a write tool is unknown, counted, with no effect", async () => {
    const { org, member, reader } = await readOnlyWorld();
    expect([...(await listTools(reader.key)).keys()].sort()).toEqual([
      "get_member",
      "list_members",
      "list_organizations",
      "read_audit_log",
    ]);
    const first = await rpc(reader.key, "tools/call", { name: "get_member", arguments: { org, githubUserId: member } });
    const write = await rpc(reader.key, "tools/call", {
      name: "update_member",
      arguments: { org, githubUserId: member, seat: true, expectedSeat: false },
    });
    expect(write.response.status).toBe(200);
    expect(write.message?.error?.message).toMatch(/update_member not found/);
    expect(used(write.response)).toBe(used(first.response) + 1);
    const after = await call(`/api/v1/organizations/${org}/members/${member}`, {
      headers: { Authorization: `Bearer ${reader.key}` },
    });
    expect(await after.json()).toMatchObject({ seat: false });
  });
});

describe("allowed networks: outside them 403 ip_not_allowed, right after the key's verdict, never counted", () => {
  it("IPv4 and IPv6 ranges: inside works, outside is refused and counts against nothing", async () => {
    const user = await createUser();
    const key = (await createOk(user, { kind: "members", name: "office", allowedNetworks: ["192.0.2.0/24", "2001:db8::/32"] }))
      .key;
    const inside = await membersGet(key, "192.0.2.77");
    expect(inside.status).toBe(404);
    const before = used(inside);
    for (const address of ["198.51.100.7", "2001:db9::1", "192.0.3.1"]) {
      const outside = await membersGet(key, address);
      expect(outside.status).toBe(403);
      expect(await errorCode(outside)).toBe("ip_not_allowed");
      expect(outside.headers.get("X-RateLimit-Used")).toBeNull();
    }
    const v6 = await membersGet(key, "2001:db8:ffff::1");
    expect(v6.status).toBe(404);
    expect(used(v6)).toBe(before + 1);
  });

  it("on the analytics export: its envelope with that message; a revoked key is still 401 first", async () => {
    const user = await createUser();
    const created = await createOk(user, { kind: "analytics", name: "ci", allowedNetworks: ["10.20.0.0/16"] });
    const prs = (address: string) =>
      call(`/api/analytics/v1/prs?org=${NO_ORG}`, {
        headers: { Authorization: `Bearer ${created.key}`, "CF-Connecting-IP": address },
      });
    const outside = await prs("10.21.0.1");
    expect(outside.status).toBe(403);
    expect(((await outside.json()) as { error: string }).error).toMatch(/allowed networks/);
    expect(outside.headers.get("X-RateLimit-Used")).toBeNull();
    await admin("DELETE", `${keysOf(user)}/analytics/${created.keyId}`);
    expect((await prs("10.21.0.1")).status).toBe(401);
  });

  it("the network check comes before the scope: a read-only key from outside is ip_not_allowed on a write, uncounted", async () => {
    const user = await createUser();
    const key = (
      await createOk(user, { kind: "members", name: "ro", scopes: ["members:read"], allowedNetworks: ["192.0.2.0/24"] })
    ).key;
    const res = await patch(key, `/api/v1/organizations/${NO_ORG}/members/1`, { seat: true, expectedSeat: false }, "203.0.113.1");
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("ip_not_allowed");
    expect(res.headers.get("X-RateLimit-Used")).toBeNull();
  });
});
