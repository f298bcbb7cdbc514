import { describe, expect, it } from "vitest";
import { bearer, errorOf, keyedUser, type Role, walk } from "./admin-helpers";
import {
  addMember,
  admin,
  adminOk,
  call,
  createOrg,
  env,
  failingNamespace,
  fetchWithEnv,
  hangingNamespace,
  unique,
} from "./helpers";
import { deliverQueued, eventually, example, install, installationOf, joins, person } from "./webhook-helpers";

/** `GET /api/v1/organizations` (contract section 8). */

type Entry = {
  org: string;
  plan: string;
  role: Role;
  seat: boolean;
  canManageSeats: boolean;
  canManageRoles: boolean;
  canExportAnalytics: boolean;
};
type Page = { data: Entry[]; nextCursor: string | null };

const list = (auth: Record<string, string>, query = "") =>
  call(`/api/v1/organizations${query ? `?${query}` : ""}`, { headers: auth });
const listOk = async (auth: Record<string, string>, query = "") => {
  const res = await list(auth, query);
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
};
const all = async (auth: Record<string, string>, limit = 100) =>
  (await walk<Entry>(async (cursor) => listOk(auth, `limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`))).items;

/** A short organization login that sorts where the test wants it (GitHub logins: 39 characters at most). */
const orgName = (prefix: string) => `${prefix}-${unique("o").slice(2)}`.slice(0, 39);

describe("authentication and parameters", () => {
  it("401 without a members key; 400 for limit outside 1..100 or not digits, and for a foreign cursor", async () => {
    expect((await call("/api/v1/organizations")).status).toBe(401);
    const { auth } = await keyedUser();
    for (const query of [
      "limit=0",
      "limit=101",
      "limit=2.0",
      "limit=%2B5",
      "limit=1&limit=1",
      "cursor=abc",
      `cursor=${"A".repeat(256)}`,
    ]) {
      const res = await list(auth, query);
      expect(res.status, query).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_request");
    }
    expect((await listOk(auth, "limit=%2020%20&cursor=")).data).toEqual([]);
  });
});

describe("the flags (every combination: capabilities in test/unit/member-rules.test.ts)", () => {
  it("one organization per outcome: managing needs an admin of a subscribed organization; exporting, any member of an unblocked Pro one", async () => {
    const user = await keyedUser();
    const cases = [
      // Team, active, billed, admin: may manage, may not export.
      { plan: "team", blocked: false, status: "active", billed: true, role: "admin", manage: true, exportable: false },
      // Pro, not billed through the service, plain member: may export only.
      { plan: "pro", blocked: false, status: "active", billed: false, role: "member", manage: false, exportable: true },
      // Pro, subscribed, but blocked: nothing at all, even for an admin.
      { plan: "pro", blocked: true, status: "active", billed: true, role: "admin", manage: false, exportable: false },
    ] as const;
    const expected = new Map<string, Entry>();
    for (const [n, c] of cases.entries()) {
      const login = await createOrg(orgName("flags"), {
        plan: c.plan,
        blocked: c.blocked,
        subscription: { status: c.status, billedThroughService: c.billed, purchasedSeats: 3 },
      });
      const seat = n % 2 === 0;
      await addMember(login, user.id, c.role, { seat });
      expected.set(login, {
        org: login,
        plan: c.plan,
        role: c.role,
        seat,
        canManageSeats: c.manage,
        canManageRoles: c.manage,
        canExportAnalytics: c.exportable,
      });
    }
    const listed = await all(user.auth);
    expect(listed).toHaveLength(cases.length);
    for (const entry of listed) expect(entry).toEqual(expected.get(entry.org));
  });
});

describe("order and pages", () => {
  it("ordered by login case-insensitively; a walk with each limit 1..5 returns every organization once", async () => {
    const user = await keyedUser();
    const logins = ["Zulu", "alpha", "Bravo", "charlie", "DELTA", "echo", "Foxtrot"].map((p) => orgName(p));
    for (const login of logins) {
      await createOrg(login);
      await addMember(login, user.id, "member");
    }
    const sorted = [...logins].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
    expect((await all(user.auth)).map((e) => e.org)).toEqual(sorted);
    for (const limit of [1, 2, 3, 4, 5]) {
      const { items, pages } = await walk<Entry>(async (cursor) =>
        listOk(user.auth, `limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`),
      );
      expect(items.map((e) => e.org)).toEqual(sorted);
      expect(pages).toBe(Math.ceil(sorted.length / limit));
    }
    const first = await listOk(user.auth);
    expect(first.data).toHaveLength(7);
    expect(first.nextCursor).toBeNull();
  });

  it("lists only installed organizations the caller is a member of", async () => {
    const user = await keyedUser();
    const mine = await createOrg(orgName("mine"));
    await addMember(mine, user.id, "viewer", { seat: false });
    await createOrg(orgName("theirs"));
    const notInstalled = orgName("pending");
    await adminOk("PUT", `/internal/v1/organizations/${notInstalled}/members/${user.id}`, {
      githubLogin: `user${user.id}`,
      workEmail: "x@example.com",
      role: "admin",
      seat: true,
      isBot: false,
    });
    expect((await all(user.auth)).map((e) => e.org)).toEqual([mine]);
    // Installing it later lists it: the index kept the membership.
    await createOrg(notInstalled);
    expect((await all(user.auth)).map((e) => e.org).sort()).toEqual([mine, notInstalled].sort());
  });
});

describe("the index follows membership writes", () => {
  it("a member added or removed shows up in the next request; role and seat are the organization's current ones", async () => {
    const user = await keyedUser();
    const org = await createOrg(orgName("follow"));
    expect(await all(user.auth)).toEqual([]);
    await addMember(org, user.id, "member", { seat: false });
    expect((await all(user.auth)).map((e) => [e.org, e.role, e.seat])).toEqual([[org, "member", false]]);
    await addMember(org, user.id, "admin", { seat: true });
    expect((await all(user.auth)).map((e) => [e.org, e.role, e.seat])).toEqual([[org, "admin", true]]);
    expect((await admin("DELETE", `/internal/v1/organizations/${org}/members/${user.id}`)).status).toBe(204);
    expect(await all(user.auth)).toEqual([]);
    await addMember(org, user.id, "viewer");
    expect((await all(user.auth)).map((e) => e.org)).toEqual([org]);
  });

  it("never claims an organization after the member was removed, also while removals race the listing", async () => {
    const user = await keyedUser();
    const orgs: string[] = [];
    for (let i = 0; i < 6; i++) {
      const org = await createOrg(orgName(`race${i}`));
      await addMember(org, user.id, "member");
      orgs.push(org);
    }
    for (const org of orgs) {
      const removal = admin("DELETE", `/internal/v1/organizations/${org}/members/${user.id}`);
      const during = list(user.auth, "limit=2");
      expect((await removal).status).toBe(204);
      expect((await during).status).toBe(200);
      const after = (await all(user.auth, 2)).map((e) => e.org);
      expect(after).not.toContain(org);
    }
    expect(await all(user.auth)).toEqual([]);
  });

  it("an index entry the organization denies (a report lost after a removal) is never listed, and pages stay full", async () => {
    const user = await keyedUser();
    const real = [orgName("b-real"), orgName("d-real"), orgName("f-real")];
    for (const org of real) {
      await createOrg(org);
      await addMember(org, user.id, "member");
    }
    // Stale claims, as if the organization's report of a removal had never arrived.
    const ghosts = [orgName("a-gone"), orgName("c-gone"), orgName("e-gone")];
    for (const org of ghosts) {
      await createOrg(org);
      await env.USERS.getByName(user.id).recordMembership(org.toLowerCase(), org.toLowerCase(), true, 1, true);
    }
    const first = await listOk(user.auth, "limit=2");
    expect(first.data.map((e) => e.org)).toEqual(real.slice(0, 2));
    expect(first.nextCursor).not.toBeNull();
    const second = await listOk(user.auth, `limit=2&cursor=${first.nextCursor}`);
    expect(second.data.map((e) => e.org)).toEqual(real.slice(2));
    expect(second.nextCursor).toBeNull();
  });

  it("reports that arrive out of order cannot undo a later one (versions)", async () => {
    const user = await keyedUser();
    const org = await createOrg(orgName("order"));
    await addMember(org, user.id, "member");
    const index = env.USERS.getByName(user.id);
    // A late "removed" with an old version changes nothing.
    await index.recordMembership(org.toLowerCase(), org.toLowerCase(), false, 0, false);
    expect((await all(user.auth)).map((e) => e.org)).toEqual([org]);
  });

  it("one user's listing never shows another user's organizations", async () => {
    const a = await keyedUser();
    const b = await keyedUser();
    const org = await createOrg(orgName("private"));
    await addMember(org, a.id, "admin");
    expect(await all(b.auth)).toEqual([]);
    expect((await call("/api/v1/organizations", { headers: bearer(a.key) })).status).toBe(200);
  });
});

/** The list with the organizations' objects unreachable: it answers only if it asks none of them. */
const listWithoutObjects = (key: string) =>
  fetchWithEnv(new Request("https://service.test/api/v1/organizations?limit=100", { headers: bearer(key) }), {
    ORGANIZATIONS: failingNamespace(),
  });

describe("memberships of organizations not installed cost the list nothing (issue 22, finding 4)", () => {
  it("a membership synchronised before the installation is not listed and its object is not asked; registering the organization lists it", async () => {
    const user = await keyedUser();
    const pending = orgName("pending");
    await addMember(pending, user.id, "admin");
    const res = await listWithoutObjects(user.key);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Page).data).toEqual([]);
    await createOrg(pending);
    expect((await all(user.auth)).map((e) => e.org)).toEqual([pending]);
  });

  it("uninstalled by GitHub: not listed and not asked; installed again: listed again", async () => {
    const org = orgName("gone");
    const user = await person();
    const auth = bearer(user.membersKey);
    await install(org);
    await joins(org, user, "admin");
    await eventually(async () => expect((await all(auth)).map((e) => e.org)).toEqual([org]));

    const deleted = example("installation", "deleted", org);
    (deleted.installation as Record<string, unknown>).id = installationOf(org);
    await deliverQueued("installation", deleted);
    await eventually(async () => {
      const res = await listWithoutObjects(user.membersKey);
      expect(res.status).toBe(200);
      expect(((await res.json()) as Page).data).toEqual([]);
    });

    await install(org, [], installationOf(org) + 1);
    await eventually(async () => expect((await all(auth)).map((e) => e.org)).toEqual([org]));
  });
});

describe("a refused request does not wait for the read started alongside the key verdict", () => {
  it("over the quota: 429 at once while the organizations' objects never answer", async () => {
    const user = await keyedUser();
    const org = await createOrg(orgName("quota"));
    await addMember(org, user.id, "member");
    const request = () => new Request("https://service.test/api/v1/organizations", { headers: bearer(user.key) });
    // A quota of one request: the first is answered (and lists the organization), the second is over it.
    const first = await fetchWithEnv(request(), { RATE_LIMIT_MEMBERS: "1" });
    expect(first.status).toBe(200);
    expect(((await first.json()) as Page).data.map((e) => e.org)).toEqual([org]);
    const stuck = hangingNamespace();
    const refused = await fetchWithEnv(request(), { RATE_LIMIT_MEMBERS: "1", ORGANIZATIONS: stuck.namespace });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).not.toBeNull();
    // The read was started and is still stuck: the answer did not wait for it.
    await stuck.reached;
  });
});
