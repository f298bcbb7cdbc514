import { describe, expect, it } from "vitest";
import { errorOf, keyedUser, type Member, type MemberPage, setup, subscription, walk } from "./admin-helpers";
import { admin, call, unique, uniqueInstallationId } from "./helpers";

/** `GET /api/v1/organizations/{org}/members` (contract section 8). */

const byListOrder = (a: Member, b: Member) => {
  const la = a.githubLogin.toLowerCase();
  const lb = b.githubLogin.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a.githubUserId < b.githubUserId ? -1 : a.githubUserId > b.githubUserId ? 1 : 0;
};

describe("who may list (401, 400, 404, 403 in the read's order)", () => {
  it("401 without a key, before a bad parameter", async () => {
    const { org } = await setup();
    const res = await call(`/api/v1/organizations/${org}/members?limit=0`);
    expect(res.status).toBe(401);
  });

  it("400 for bad parameters before the organization is looked up", async () => {
    const { list } = await setup();
    const ghost = unique("ghost");
    for (const query of [
      "limit=0",
      "limit=101",
      "limit=1.5",
      "limit=1e1",
      "limit=-1",
      "role=owner",
      "seat=yes",
      `search=${"x".repeat(101)}`,
      "limit=1&limit=2",
    ]) {
      const res = await list(query, ghost);
      expect(res.status, query).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_request");
    }
    expect((await list("limit=100&search=%20%20", ghost)).status).toBe(404);
  });

  it("400 Invalid cursor for a cursor this API did not issue", async () => {
    const { list } = await setup();
    for (const cursor of ["abc", "bTo", "%3D%3D%3D", "x".repeat(2049)]) {
      const res = await list(`cursor=${cursor}`);
      expect(res.status, cursor).toBe(400);
      const error = await errorOf(res);
      expect(error.details.map((d) => d.path)).toEqual(["cursor"]);
    }
    expect((await errorOf(await list("cursor=abc"))).message).toBe("Invalid cursor.");
  });

  it("404 org_not_found, 403 installation_blocked, 403 org_access_denied", async () => {
    const { list } = await setup();
    expect((await errorOf(await list("", unique("ghost")))).code).toBe("org_not_found");
    const blocked = await setup({ blocked: true });
    expect((await errorOf(await blocked.list())).code).toBe("installation_blocked");
    const other = await setup();
    const res = await list("", other.org);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe("org_access_denied");
  });

  it("counts against the members quota like the member endpoints (quota headers on the answer)", async () => {
    const { list } = await setup();
    const first = await list();
    const second = await list("", unique("ghost"));
    expect(second.status).toBe(404);
    expect(Number(second.headers.get("X-RateLimit-Used"))).toBe(Number(first.headers.get("X-RateLimit-Used")) + 1);
  });

  it("any member may list: admin, member and viewer; also without a subscription", async () => {
    for (const callerRole of ["admin", "member", "viewer"] as const) {
      const { list } = await setup({ callerRole, plan: "free", subscription: subscription(0, { status: "none" }) });
      expect((await list()).status).toBe(200);
    }
  });
});

describe("filters", () => {
  it("role, seat and search (case-insensitive substring of githubLogin or workEmail), combined with AND", async () => {
    const { caller, member, listOk } = await setup();
    const a = await member("admin", { seat: true, login: "Alice-Smith", email: "alice@corp.example" });
    const b = await member("member", { seat: false, login: "bob", email: "bob.SMITH@corp.example" });
    const c = await member("viewer", { seat: true, login: "carol", email: "carol@home.example" });
    const d = await member("member", { seat: true, login: "dave-50", email: "dave_50%@corp.example" });
    const ids = async (query: string) => (await listOk(query)).data.map((m) => m.githubUserId).sort();
    const sorted = (...xs: string[]) => xs.sort();
    expect(await ids("role=admin")).toEqual(sorted(a, caller.id));
    expect(await ids("role=viewer")).toEqual([c]);
    expect(await ids("seat=true")).toEqual(sorted(a, c, d));
    expect(await ids("seat=false")).toEqual(sorted(b, caller.id));
    expect(await ids("search=smith")).toEqual(sorted(a, b));
    expect(await ids("search=SMITH")).toEqual(sorted(a, b));
    expect(await ids("search=corp.EXAMPLE")).toEqual(sorted(a, b, d));
    expect(await ids("search=%20ali%20")).toEqual([a]);
    expect(await ids("search=50%25")).toEqual([d]);
    expect(await ids("search=_")).toEqual([d]);
    expect(await ids("search=%25")).toEqual([d]);
    expect(await ids("search=corp&seat=true&role=member")).toEqual([d]);
    expect(await ids("search=nobody")).toEqual([]);
  });
});

describe("order", () => {
  it("by githubLogin case-insensitively, then githubUserId", async () => {
    const { member, listOk } = await setup();
    for (const login of ["zed", "Alpha", "beta", "ALPHA", "Gamma", "alpha"]) await member("member", { login });
    const { data } = await listOk("limit=100");
    expect(data).toEqual([...data].sort(byListOrder));
    expect(data.map((m) => m.githubLogin.toLowerCase()).slice(0, 3)).toEqual(["alpha", "alpha", "alpha"]);
  });
});

describe("seat summary", () => {
  it("purchased, used and available for the whole organization whatever the filter; available never below 0", async () => {
    const { member, listOk, org } = await setup({ subscription: subscription(3) });
    await member("member", { seat: true });
    await member("member", { seat: true });
    await member("member", { seat: false });
    expect((await listOk("role=viewer")).seats).toEqual({ purchased: 3, used: 2, available: 1 });
    await member("member", { seat: true });
    await member("member", { seat: true });
    expect((await listOk("limit=1")).seats).toEqual({ purchased: 3, used: 4, available: 0 });
    await admin("PUT", `/internal/v1/organizations/${org}`, {
      installationId: uniqueInstallationId(),
      installedAt: "2025-01-01T00:00:00.000Z",
      plan: "team",
      subscription: subscription(10),
    });
    expect((await listOk()).seats).toEqual({ purchased: 10, used: 4, available: 6 });
  });
});

describe("pages", () => {
  it("default limit 20; nextCursor null exactly on the last page (no empty last page)", async () => {
    const { member, listOk } = await setup();
    for (let i = 0; i < 20; i++) await member();
    const first = await listOk();
    expect(first.data).toHaveLength(20);
    const next = first.nextCursor as string;
    expect(next).not.toBeNull();
    const last = await listOk(`cursor=${encodeURIComponent(next)}`);
    expect(last.data).toHaveLength(1);
    expect(last.nextCursor).toBeNull();
    const exact = await listOk("limit=21");
    expect(exact.data).toHaveLength(21);
    expect(exact.nextCursor).toBeNull();
  });

  it.each([1, 2, 3, 4, 5])(
    "a walk with limit %i returns every member present throughout exactly once, in order, while members are added and removed",
    async (limit) => {
      const { org, caller, member, listOk } = await setup();
      const logins = ["k", "B", "t", "d", "Q", "h", "m", "a", "x", "f", "p", "c"];
      const stable = new Set([caller.id]);
      for (const login of logins) stable.add(await member("member", { login: `${login}-${limit}` }));
      const transient: string[] = [];
      const extra = ["A", "z", "g", "N", "e", "s", "b", "w", "J", "r", "o", "y", "0"];
      const { items } = await walk<Member>(
        async (cursor) => listOk(`limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
        async (page) => {
          // Add one member somewhere in the order, and remove a member added earlier.
          transient.push(await member("member", { login: `${extra[page % extra.length]}${page}-${limit}` }));
          if (page % 2 === 0) {
            const gone = transient.shift() as string;
            expect((await admin("DELETE", `/internal/v1/organizations/${org}/members/${gone}`)).status).toBe(204);
          }
        },
      );
      const seen = items.map((m) => m.githubUserId);
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of stable) expect(seen.filter((s) => s === id)).toHaveLength(1);
      expect(items).toEqual([...items].sort(byListOrder));
    },
  );

  it("a removed member's cursor still works (the cursor is a position, not a member)", async () => {
    const { org, member, listOk } = await setup();
    const ids = [];
    for (const login of ["a1", "a2", "a3", "a4"]) ids.push(await member("member", { login }));
    const first = await listOk("limit=2");
    const lastOfPage = first.data.at(-1) as Member;
    await admin("DELETE", `/internal/v1/organizations/${org}/members/${lastOfPage.githubUserId}`);
    const rest = await walk<Member>(async (cursor) =>
      listOk(`limit=2&cursor=${encodeURIComponent(cursor ?? (first.nextCursor as string))}`),
    );
    const all = [...first.data, ...rest.items].map((m) => m.githubLogin);
    expect(all.filter((l) => l.startsWith("a"))).toEqual(["a1", "a2", "a3", "a4"]);
  });

  it("the cursor of one key works for another caller of the same organization (it is no secret)", async () => {
    const { org, member, listOk } = await setup();
    for (let i = 0; i < 3; i++) await member();
    const other = await keyedUser();
    await admin("PUT", `/internal/v1/organizations/${org}/members/${other.id}`, {
      githubLogin: "zz-other",
      workEmail: "o@example.com",
      role: "viewer",
      seat: false,
      isBot: false,
    });
    const first = await listOk("limit=2");
    const res = await call(`/api/v1/organizations/${org}/members?limit=2&cursor=${first.nextCursor}`, { headers: other.auth });
    expect(res.status).toBe(200);
    expect(((await res.json()) as MemberPage).data).toHaveLength(2);
  });
});
