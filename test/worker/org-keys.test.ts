import { describe, expect, it } from "vitest";
import type { AuditEntry } from "./admin-helpers";
import { appCall, signIn } from "./app-helpers";
import { addMember, admin, adminOk, call, createKey, createOrg, createUser, unique } from "./helpers";
import { deliverQueued, example, world as githubWorld, installationOf } from "./webhook-helpers";

/** Contract section 18, organization keys: owned by the organization, over HTTP. */

interface OrgKey {
  key: string;
  keyId: string;
  name: string;
  kind: string;
  scopes: string[];
  hint: string;
  repositories: string[];
  allowedNetworks: string[];
}

const keysOf = (org: string) => `/internal/v1/organizations/${org}/api-keys`;
const createOrgKey = (org: string, body: Record<string, unknown>) => admin("POST", keysOf(org), body);
const createOrgKeyOk = (org: string, body: Record<string, unknown>) => adminOk<OrgKey>("POST", keysOf(org), body);
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

async function world(plan: "team" | "pro" = "team") {
  const org = await createOrg(unique("okeys"), { plan });
  const [creator, member, reader] = [await createUser(), await createUser(), await createUser()];
  await addMember(org, creator, "admin");
  await addMember(org, member, "member", { seat: false });
  await addMember(org, reader, "admin");
  const readerKey = (await createKey(reader, "members")).key;
  return { org, creator, member, reader, readerKey };
}

describe("organization keys: made by admins, owned by the organization", () => {
  it("an admin creates one in the app; it keeps working after its creator is removed and blocked; revoked, it ends at once", async () => {
    const w = await world();
    const session = await signIn(w.creator);
    const res = await appCall(`/app/api/orgs/${w.org}/keys`, session, {
      method: "POST",
      json: { kind: "members", name: "Seat bot", expiresInDays: null },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as OrgKey;
    expect(created.hint).toBe(`cbk_…${created.key.slice(-4)}`);
    const read = () => call(`/api/v1/organizations/${w.org}/members/${w.member}`, { headers: bearer(created.key) });
    expect((await read()).status).toBe(200);
    expect((await admin("DELETE", `/internal/v1/organizations/${w.org}/members/${w.creator}`)).status).toBe(204);
    await adminOk("PUT", `/internal/v1/users/${w.creator}`, { githubLogin: `user${w.creator}`, blocked: true });
    expect((await read()).status).toBe(200);
    expect((await admin("DELETE", `${keysOf(w.org)}/${created.keyId}`)).status).toBe(204);
    expect((await read()).status).toBe(401);
  });

  it("changes seats as an admin would; the audit log has key.created with the actor, and the change with actor null and the key", async () => {
    const w = await world();
    const created = await createOrgKeyOk(w.org, { kind: "members", name: "seat sync" });
    expect(created.scopes).toEqual(["members:read", "members:write"]);
    const patch = await call(`/api/v1/organizations/${w.org}/members/${w.member}`, {
      method: "PATCH",
      json: { seat: true, expectedSeat: false },
      headers: { ...bearer(created.key), "CF-Connecting-IP": "198.51.100.4" },
    });
    expect(patch.status).toBe(200);
    const log = (await (
      await call(`/api/v1/organizations/${w.org}/audit-log?limit=10`, { headers: bearer(w.readerKey) })
    ).json()) as { data: AuditEntry[] };
    const [change, made] = log.data;
    expect(change).toMatchObject({
      action: "member.updated",
      actor: null,
      key: { id: created.keyId, name: "seat sync" },
      ip: "198.51.100.4",
      githubUserId: w.member,
    });
    expect(made).toMatchObject({
      action: "key.created",
      actor: null,
      githubUserId: null,
      before: null,
      after: null,
      key: { id: created.keyId, name: "seat sync", kind: "members", scopes: ["members:read", "members:write"] },
    });
  });

  it("works on its own organization only: another answers as for a non-member; the organizations list has its own only", async () => {
    const w = await world();
    const other = await world();
    const { key } = await createOrgKeyOk(w.org, { kind: "members", name: "ci" });
    const elsewhere = await call(`/api/v1/organizations/${other.org}/members/${other.member}`, { headers: bearer(key) });
    expect(elsewhere.status).toBe(403);
    expect(await errorCode(elsewhere)).toBe("org_access_denied");
    const list = (await (await call("/api/v1/organizations", { headers: bearer(key) })).json()) as {
      data: { org: string; role: string }[];
    };
    expect(list.data.map((e) => [e.org, e.role])).toEqual([[w.org, "admin"]]);
  });

  it("regenerated (by its name, in another case too), the key keeps its id and its rights: reads, lists and analytics work with the new value", async () => {
    const w = await world("pro");
    await adminOk("PUT", `/internal/v1/organizations/${w.org}/repositories/web`, { private: true });
    const first = await createOrgKeyOk(w.org, { kind: "members", name: "bot" });
    const again = await createOrgKeyOk(w.org, { kind: "members", name: "BOT" });
    expect(again.keyId).toBe(first.keyId);
    expect(again.key).not.toBe(first.key);
    expect((await call(`/api/v1/organizations/${w.org}/members/${w.member}`, { headers: bearer(first.key) })).status).toBe(401);
    expect((await call(`/api/v1/organizations/${w.org}/members/${w.member}`, { headers: bearer(again.key) })).status).toBe(200);
    const list = (await (await call("/api/v1/organizations", { headers: bearer(again.key) })).json()) as {
      data: { org: string }[];
    };
    expect(list.data.map((e) => e.org)).toEqual([w.org]);
    await createOrgKeyOk(w.org, { kind: "analytics", name: "dash" });
    const analytics = await createOrgKeyOk(w.org, { kind: "analytics", name: "dash" });
    const prs = await call(`/api/analytics/v1/prs?org=${w.org}&repo=web`, { headers: bearer(analytics.key) });
    expect(prs.status).toBe(200);
  });

  it("each organization key has its own quota, apart from its creator's and from the other keys'", async () => {
    const w = await world();
    const a = await createOrgKeyOk(w.org, { kind: "members", name: "a" });
    const b = await createOrgKeyOk(w.org, { kind: "members", name: "b" });
    const used = async (key: string) =>
      Number((await call("/api/v1/organizations", { headers: bearer(key) })).headers.get("X-RateLimit-Used"));
    expect(await used(a.key)).toBe(1);
    expect(await used(a.key)).toBe(2);
    expect(await used(b.key)).toBe(1);
    expect(await used(w.readerKey)).toBe(1);
    // The last use shows in the list (to the hour).
    const listed = (await adminOk<{ data: { name: string; lastUsedAt: string | null }[] }>("GET", keysOf(w.org))).data;
    expect(listed.every((k) => k.lastUsedAt !== null)).toBe(true);
  });

  it("a read-only organization key reads, and its writes are 403 insufficient_scope", async () => {
    const w = await world();
    const { key } = await createOrgKeyOk(w.org, { kind: "members", name: "reader", scopes: ["members:read"] });
    const patch = await call(`/api/v1/organizations/${w.org}/members/${w.member}`, {
      method: "PATCH",
      json: { seat: true, expectedSeat: false },
      headers: bearer(key),
    });
    expect(patch.status).toBe(403);
    expect(await errorCode(patch)).toBe("insufficient_scope");
  });

  it("an analytics key limited to repositories reads those, and repo naming another is 403 repo_access_denied", async () => {
    const w = await world("pro");
    for (const repo of ["api", "web"])
      await adminOk("PUT", `/internal/v1/organizations/${w.org}/repositories/${repo}`, { private: true });
    const { key, repositories } = await createOrgKeyOk(w.org, { kind: "analytics", name: "api only", repositories: ["API"] });
    expect(repositories).toEqual(["api"]);
    const prs = (repo: string) => call(`/api/analytics/v1/prs?org=${w.org}&repo=${repo}`, { headers: bearer(key) });
    expect((await prs("api")).status).toBe(200);
    const web = await prs("web");
    expect(web.status).toBe(403);
    expect(((await web.json()) as { error: string }).error).toMatch(/access/);
    const all = await createOrgKeyOk(w.org, { kind: "analytics", name: "everything" });
    expect((await call(`/api/analytics/v1/prs?org=${w.org}&repo=web`, { headers: bearer(all.key) })).status).toBe(200);
  });

  it("ends with the installation's deletion: the key is 401; while suspended it is refused like every caller", async () => {
    const gh = await githubWorld([]);
    const { key } = await createOrgKeyOk(gh.org, { kind: "members", name: "ci" });
    const read = () => call(`/api/v1/organizations/${gh.org}/members/${gh.member.id}`, { headers: bearer(key) });
    expect((await read()).status).toBe(200);
    const suspended = example("installation", "suspend", gh.org);
    (suspended.installation as Record<string, unknown>).id = installationOf(gh.org);
    await deliverQueued("installation", suspended);
    const refused = await read();
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("installation_blocked");
    const deleted = example("installation", "deleted", gh.org);
    (deleted.installation as Record<string, unknown>).id = installationOf(gh.org);
    await deliverQueued("installation", deleted);
    expect((await read()).status).toBe(401);
  });
});

describe("who manages them, and their limits", () => {
  it("members and viewers are refused with 403 not_org_admin in the app; a non-member with org_access_denied", async () => {
    const w = await world();
    const stranger = await createUser();
    for (const [user, code] of [
      [w.member, "not_org_admin"],
      [stranger, "org_access_denied"],
    ] as const) {
      const session = await signIn(user);
      const list = await appCall(`/app/api/orgs/${w.org}/keys`, session);
      expect(list.status).toBe(403);
      expect(await errorCode(list)).toBe(code);
      const create = await appCall(`/app/api/orgs/${w.org}/keys`, session, {
        method: "POST",
        json: { kind: "members", name: "mine", expiresInDays: null },
      });
      expect(create.status).toBe(403);
    }
    expect((await adminOk<{ data: unknown[] }>("GET", keysOf(w.org))).data).toEqual([]);
  });

  it("at most 25 of a kind: of 10 concurrent creations past 20, exactly 5 are made", async () => {
    const w = await world();
    for (let i = 0; i < 20; i++) await createOrgKeyOk(w.org, { kind: "analytics", name: `k${i}` });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createOrgKey(w.org, { kind: "analytics", name: `c${i}` })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    expect((await adminOk<{ data: unknown[] }>("GET", keysOf(w.org))).data).toHaveLength(25);
  });

  it("400 with its path: an unknown repository, repositories on a members key", async () => {
    const w = await world();
    for (const [body, path] of [
      [{ kind: "analytics", name: "x", repositories: ["nope"] }, "repositories.0"],
      [{ kind: "members", name: "x", repositories: ["api"] }, "repositories"],
    ] as const) {
      const res = await createOrgKey(w.org, body);
      expect(res.status).toBe(400);
      const details = ((await res.json()) as { error: { details: { path: string }[] } }).error.details;
      expect(details.map((d) => d.path)).toContain(path);
    }
  });
});
