import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { callDurable } from "../../src/lib/durable-call";
import {
  addMember,
  admin,
  call,
  createKey,
  createOrg,
  createUser,
  env,
  failingNamespace,
  fetchWithEnv,
  type MemberErrorBody,
  type OrgOptions,
  unique,
  uniqueUserId,
} from "./helpers";

type MemberError = MemberErrorBody;
type Member = { githubUserId: string; githubLogin: string; workEmail: string; role: string; seat: boolean; isBot: boolean };
type UpdateResult = {
  githubUserId: string;
  before: { seat: boolean; role: string };
  after: { seat: boolean; role: string };
  changed: boolean;
  availableSeats: number;
  purchasedQuantityChanged: boolean;
};

const subscription = (purchasedSeats: number, extra: Partial<{ status: string; billedThroughService: boolean }> = {}) => ({
  status: "active",
  billedThroughService: true,
  purchasedSeats,
  ...extra,
});

/** An organization, a caller (admin unless told otherwise) with a members key, and request helpers. */
async function setup(options: OrgOptions & { callerRole?: "admin" | "member" | "viewer" } = {}) {
  const org = await createOrg(unique("mem"), { plan: "team", subscription: subscription(10), ...options });
  const caller = await createUser();
  await addMember(org, caller, options.callerRole ?? "admin", { seat: false });
  const { key } = await createKey(caller, "members");
  const auth = { Authorization: `Bearer ${key}` };
  const get = (id: string, o = org) => call(`/api/v1/organizations/${o}/members/${id}`, { headers: auth });
  const patch = (id: string, body: unknown, headers: Record<string, string> = {}, o = org) =>
    call(`/api/v1/organizations/${o}/members/${id}`, {
      method: "PATCH",
      headers: { ...auth, "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const member = async (role: "admin" | "member" | "viewer" = "member", extra: { seat?: boolean; isBot?: boolean } = {}) => {
    const id = uniqueUserId();
    await addMember(org, id, role, { seat: extra.seat ?? false, isBot: extra.isBot ?? false });
    return id;
  };
  const state = async (id: string) => {
    const res = await get(id);
    expect(res.status).toBe(200);
    const m = (await res.json()) as Member;
    return { seat: m.seat, role: m.role };
  };
  return { org, caller, key, get, patch, member, state };
}

const errorOf = async (res: Response) => ((await res.json()) as MemberError).error;

describe("names GitHub could never issue", () => {
  it("a look-alike of a real login (the Kelvin sign folds to k under toLowerCase) matches nothing: 404, nothing changes", async () => {
    const org = await createOrg(unique("kelvin"), { plan: "team", subscription: subscription(10) });
    const caller = await createUser();
    await addMember(org, caller, "admin", { seat: false });
    const target = uniqueUserId();
    await addMember(org, target, "member", { seat: false });
    const { key } = await createKey(caller, "members");
    const lookAlike = encodeURIComponent(org.replace("k", "\u212a"));
    const auth = { Authorization: `Bearer ${key}` };
    const res = await call(`/api/v1/organizations/${lookAlike}/members/${target}`, {
      method: "PATCH",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ seat: true, expectedSeat: false }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as MemberError).error.code).toBe("org_not_found");
    const read = await call(`/api/v1/organizations/${org}/members/${target}`, { headers: auth });
    expect(((await read.json()) as Member).seat).toBe(false);
  });
});

describe("authentication (401)", () => {
  it("no key, another scheme, an analytics key: 401 unauthenticated in the members envelope", async () => {
    const { org, caller } = await setup();
    const { key: analyticsKey } = await createKey(caller, "analytics");
    const path = `/api/v1/organizations/${org}/members/${caller}`;
    for (const headers of [{}, { Authorization: `Basic ${analyticsKey}` }, { Authorization: `Bearer ${analyticsKey}` }] as Record<
      string,
      string
    >[]) {
      const res = await call(path, { headers: { ...headers, "X-Correlation-Id": "c-401" } });
      expect(res.status).toBe(401);
      expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
      expect(await errorOf(res)).toEqual({
        code: "unauthenticated",
        message: expect.any(String),
        retriable: false,
        correlationId: "c-401",
        details: [],
      });
    }
  });

  it("a revoked key cannot read or change anything", async () => {
    const { org, caller, get, patch, member } = await setup();
    const target = await member("member", { seat: false });
    await admin("DELETE", `/internal/v1/users/${caller}/api-keys/members`);
    expect((await get(target)).status).toBe(401);
    expect((await patch(target, { seat: true, expectedSeat: false })).status).toBe(401);
    const { key } = await createKey(caller, "members");
    const res = await call(`/api/v1/organizations/${org}/members/${target}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(await res.json()).toMatchObject({ seat: false, role: "member" });
  });
});

describe("order of checks", () => {
  it("unauthenticated beats a bad path", async () => {
    const res = await call("/api/v1/organizations/acme/members/not-a-number");
    expect(res.status).toBe(401);
  });

  it("a real key of a blocked owner with a bad path is still 401 (the key verdict is judged first)", async () => {
    const { caller, get } = await setup();
    await admin("PUT", `/internal/v1/users/${caller}`, { githubLogin: `user${caller}`, blocked: true });
    expect((await get("not-a-number")).status).toBe(401);
  });

  it("400 for a bad path: githubUserId must be 1 to 20 digits, org 1 to 255 characters", async () => {
    const { get } = await setup();
    for (const id of ["abc", "1".repeat(21), "-1", "1.5"]) {
      const res = await get(id);
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatchObject({
        code: "invalid_request",
        retriable: false,
        details: [{ path: "githubUserId", message: expect.any(String) }],
      });
    }
    const long = await get("1", "o".repeat(256));
    expect((await errorOf(long)).details).toEqual([{ path: "org", message: expect.any(String) }]);
  });

  it("PATCH: 415, 413 and 400 body problems come before the organization is looked up", async () => {
    const { patch } = await setup();
    const ghost = unique("ghost");
    expect((await patch("1", { seat: true, expectedSeat: false }, { "Content-Type": "text/plain" }, ghost)).status).toBe(415);
    expect((await patch("1", { seat: true, expectedSeat: false, pad: "x".repeat(9000) }, {}, ghost)).status).toBe(413);
    expect((await patch("1", { seat: true }, {}, ghost)).status).toBe(400);
    expect((await patch("1", { seat: true, expectedSeat: false }, {}, ghost)).status).toBe(404);
  });

  it("keeps its own name rules: a name the control plane refuses is simply not found here", async () => {
    const { get } = await setup();
    for (const org of ["o".repeat(40), "ac_me", "-acme"]) {
      const res = await get("1", org);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("org_not_found");
    }
  });

  it("404 org_not_found for an organization without installation", async () => {
    const { get } = await setup();
    const res = await get("1", unique("ghost"));
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toMatchObject({ code: "org_not_found", retriable: false, details: [] });
  });

  it("403 installation_blocked, also for reads", async () => {
    const { get, patch, caller } = await setup({ blocked: true });
    expect(await errorOf(await get(caller))).toMatchObject({ code: "installation_blocked" });
    expect((await patch(caller, { seat: true, expectedSeat: false })).status).toBe(403);
  });

  it("403 org_access_denied for members of another organization", async () => {
    const { get, patch } = await setup();
    const other = await setup();
    const target = await other.member();
    const res = await get(target, other.org);
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toMatchObject({ code: "org_access_denied", retriable: false });
    expect(await errorOf(await patch(target, { seat: true, expectedSeat: false }, {}, other.org))).toMatchObject({
      code: "org_access_denied",
    });
  });

  it("a viewer can read but not patch; a non-admin gets 403 before a guard mismatch is revealed", async () => {
    for (const callerRole of ["viewer", "member"] as const) {
      const { get, patch, member } = await setup({ callerRole });
      const target = await member("member", { seat: true });
      expect((await get(target)).status).toBe(200);
      const res = await patch(target, { seat: false, expectedSeat: false }); // wrong guard too
      expect(res.status).toBe(403);
      expect(await errorOf(res)).toMatchObject({ code: "not_org_admin" });
    }
  });

  // One case over HTTP; every plan and subscription state is a row of memberAccess's table
  // (test/unit/member-rules.test.ts).
  it("403 subscription_required with a canceled subscription (reads still work)", async () => {
    const { get, patch, member } = await setup({ plan: "team", subscription: subscription(5, { status: "canceled" }) });
    const target = await member();
    expect((await get(target)).status).toBe(200);
    const res = await patch(target, { seat: true, expectedSeat: false });
    expect(res.status).toBe(403);
    expect(await errorOf(res)).toMatchObject({ code: "subscription_required", retriable: false });
  });

  it("404 member_not_found only after the 403 checks pass", async () => {
    const { get, patch } = await setup();
    for (const res of [await get("999999999"), await patch("999999999", { seat: true, expectedSeat: false })]) {
      expect(res.status).toBe(404);
      expect(await errorOf(res)).toMatchObject({ code: "member_not_found" });
    }
  });
});

describe("reading a member", () => {
  it("a githubUserId with a leading zero names no member (404), even when the same number does", async () => {
    const { get, patch, member } = await setup();
    const target = await member();
    expect((await get(target)).status).toBe(200);
    for (const res of [await get(`0${target}`), await patch(`00${target}`, { seat: true, expectedSeat: false })]) {
      expect(res.status).toBe(404);
      expect(await errorOf(res)).toMatchObject({ code: "member_not_found" });
    }
  });

  it("answers 200 with the member from the organization's current state", async () => {
    const { org, get } = await setup();
    const id = uniqueUserId();
    await admin("PUT", `/internal/v1/organizations/${org}/members/${id}`, {
      githubLogin: "octo-bot",
      workEmail: "bot@example.com",
      role: "viewer",
      seat: true,
      isBot: true,
    });
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      githubUserId: id,
      githubLogin: "octo-bot",
      workEmail: "bot@example.com",
      role: "viewer",
      seat: true,
      isBot: true,
      lastActivityAt: null,
    });
  });

  it("reads its own writes at once (no replica in between)", async () => {
    const { patch, member, state } = await setup();
    const target = await member();
    expect((await patch(target, { role: "viewer", expectedRole: "member" })).status).toBe(200);
    expect(await state(target)).toEqual({ seat: false, role: "viewer" });
  });
});

describe("PATCH body", () => {
  it.each([
    ["not JSON", "{seat: true"],
    ["an array", "[]"],
    ["empty", ""],
    ["an empty object", "{}"],
  ])("400 for a body that is %s", async (_name, body) => {
    const { patch, member } = await setup();
    const res = await patch(await member(), body);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: "invalid_request" });
  });

  it.each([
    [{ seat: true }, ["expectedSeat"]],
    [{ expectedSeat: false }, ["seat"]],
    [{ role: "admin" }, ["expectedRole"]],
    [{ expectedRole: "member" }, ["role"]],
    [{ seat: "true", expectedSeat: false }, ["seat"]],
    [{ seat: true, expectedSeat: 0 }, ["expectedSeat"]],
    [{ role: "owner", expectedRole: "member" }, ["role"]],
    [{ seat: true, expectedSeat: false, colour: "red" }, ["colour"]],
    [{ seat: true, expectedSeat: false, role: "admin" }, ["expectedRole"]],
  ])("400 for %j naming %j", async (body, paths) => {
    const { patch, member, state } = await setup();
    const target = await member();
    const res = await patch(target, body);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details.map((d) => d.path)).toEqual(paths);
    expect(await state(target)).toEqual({ seat: false, role: "member" });
  });

  it("accepts a charset parameter; refuses other media types with 415", async () => {
    const { patch, member } = await setup();
    const target = await member();
    expect(
      (await patch(target, { seat: true, expectedSeat: false }, { "Content-Type": "application/json; charset=utf-8" })).status,
    ).toBe(200);
    const res = await patch(target, { seat: false, expectedSeat: true }, { "Content-Type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(415);
    expect(await errorOf(res)).toMatchObject({ code: "unsupported_media_type", retriable: false });
  });

  it("413 payload_too_large past 8 KiB", async () => {
    const { patch, member } = await setup();
    const res = await patch(await member(), JSON.stringify({ seat: true, expectedSeat: false, x: "y".repeat(8 * 1024) }));
    expect(res.status).toBe(413);
    expect(await errorOf(res)).toMatchObject({ code: "payload_too_large", retriable: false });
  });
});

describe("guards", () => {
  it("409 expected_value_mismatch naming each failing guard and its current value; nothing changes", async () => {
    const { patch, member, state } = await setup();
    const target = await member("member", { seat: false });
    const res = await patch(target, { seat: true, expectedSeat: true, role: "viewer", expectedRole: "admin" });
    expect(res.status).toBe(409);
    expect(await errorOf(res)).toMatchObject({
      code: "expected_value_mismatch",
      retriable: false,
      details: [
        { path: "expectedSeat", message: "current value is false" },
        { path: "expectedRole", message: "current value is member" },
      ],
    });
    expect(await state(target)).toEqual({ seat: false, role: "member" });
  });

  it("both pairs are atomic: one wrong guard and nothing changes, not even the other pair", async () => {
    const { patch, member, state } = await setup();
    const target = await member("member", { seat: false });
    const res = await patch(target, { seat: true, expectedSeat: false, role: "viewer", expectedRole: "viewer" });
    expect(res.status).toBe(409);
    expect((await errorOf(res)).details).toEqual([{ path: "expectedRole", message: "current value is member" }]);
    expect(await state(target)).toEqual({ seat: false, role: "member" });
  });

  it("both pairs right: both change, and the result reports before and after", async () => {
    const { patch, member, state } = await setup();
    const target = await member("member", { seat: false });
    const res = await patch(target, { seat: true, expectedSeat: false, role: "viewer", expectedRole: "member" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      githubUserId: target,
      before: { seat: false, role: "member" },
      after: { seat: true, role: "viewer" },
      changed: true,
      availableSeats: 9,
      purchasedQuantityChanged: false,
    });
    expect(await state(target)).toEqual({ seat: true, role: "viewer" });
  });

  it("desired equal to current: 200 with changed false and before equal to after", async () => {
    const { patch, member } = await setup();
    const target = await member("viewer", { seat: true });
    const res = await patch(target, { seat: true, expectedSeat: true, role: "viewer", expectedRole: "viewer" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as UpdateResult;
    expect(body).toMatchObject({ changed: false, before: { seat: true, role: "viewer" }, after: { seat: true, role: "viewer" } });
    expect(body.before).toEqual(body.after);
  });

  it("a retry of an applied change (same operation) answers changed false; another request with that guard gets 409", async () => {
    const { org, caller, member } = await setup();
    const target = await member("member", { seat: false });
    const stub = env.ORGANIZATIONS.getByName(org.toLowerCase());
    const changes = [{ githubUserId: target, seat: true, expectedSeat: false }];
    const first = await stub.updateMembers(org, caller, changes, "op-1", null, { correlationId: "c-op-1", key: null, ip: null });
    expect(first).toMatchObject({ ok: true, value: { results: [{ changed: true, after: { seat: true } }] } });
    const retry = await stub.updateMembers(org, caller, changes, "op-1", null, { correlationId: "c-op-1", key: null, ip: null });
    expect(retry).toEqual({
      ok: true,
      value: {
        results: [
          {
            githubUserId: target,
            before: { seat: true, role: "member" },
            after: { seat: true, role: "member" },
            changed: false,
            availableSeats: 9,
            purchasedQuantityChanged: false,
          },
        ],
        availableSeats: 9,
      },
    });
    const other = await stub.updateMembers(org, caller, changes, "op-2", null, { correlationId: "c-op-2", key: null, ip: null });
    expect(other).toMatchObject({ ok: false, code: "expected_value_mismatch" });
  });
});

describe("seat capacity", () => {
  it("availableSeats is purchased minus held seats after the change; purchasedQuantityChanged is always false", async () => {
    const { patch, member } = await setup({ subscription: subscription(3) });
    await member("member", { seat: true });
    const target = await member("member", { seat: false });
    const on = (await (await patch(target, { seat: true, expectedSeat: false })).json()) as UpdateResult;
    expect(on).toMatchObject({ availableSeats: 1, purchasedQuantityChanged: false });
    const off = (await (await patch(target, { seat: false, expectedSeat: true })).json()) as UpdateResult;
    expect(off).toMatchObject({ availableSeats: 2, purchasedQuantityChanged: false });
  });

  it("taking the last free seat succeeds (0 left); the next seat-on is 409 no_seat_available", async () => {
    const { patch, member, state } = await setup({ subscription: subscription(2) });
    await member("member", { seat: true });
    const a = await member();
    const b = await member();
    const last = await patch(a, { seat: true, expectedSeat: false });
    expect(last.status).toBe(200);
    expect(((await last.json()) as UpdateResult).availableSeats).toBe(0);
    const none = await patch(b, { seat: true, expectedSeat: false });
    expect(none.status).toBe(409);
    expect(await errorOf(none)).toMatchObject({ code: "no_seat_available", retriable: false });
    expect(await state(b)).toEqual({ seat: false, role: "member" });
  });

  it("turning a seat off is always allowed, and availableSeats never goes below 0", async () => {
    const { patch, member } = await setup({ subscription: subscription(1) });
    const ids = [
      await member("member", { seat: true }),
      await member("member", { seat: true }),
      await member("member", { seat: true }),
    ];
    const res = await patch(ids[0] as string, { seat: false, expectedSeat: true });
    expect(res.status).toBe(200);
    expect(((await res.json()) as UpdateResult).availableSeats).toBe(0);
  });

  it("a role change never needs a free seat", async () => {
    const { patch, member } = await setup({ subscription: subscription(0) });
    const target = await member("member", { seat: true });
    expect((await patch(target, { role: "viewer", expectedRole: "member" })).status).toBe(200);
  });
});

describe("role rules", () => {
  it("a bot cannot become admin: 422 bot_cannot_be_admin", async () => {
    const { patch, member, state } = await setup();
    const bot = await member("member", { isBot: true });
    const res = await patch(bot, { role: "admin", expectedRole: "member" });
    expect(res.status).toBe(422);
    expect(await errorOf(res)).toMatchObject({ code: "bot_cannot_be_admin", retriable: false });
    expect(await state(bot)).toEqual({ seat: false, role: "member" });
    expect((await patch(bot, { seat: true, expectedSeat: false })).status).toBe(200);
  });

  it("the last admin cannot lose the admin role: 409 last_admin; with a second admin it can", async () => {
    const { caller, patch, member, state } = await setup();
    const self = await patch(caller, { role: "member", expectedRole: "admin" });
    expect(self.status).toBe(409);
    expect(await errorOf(self)).toMatchObject({ code: "last_admin", retriable: false });
    expect(await state(caller)).toEqual({ seat: false, role: "admin" });
    const other = await member("admin");
    expect((await patch(other, { role: "viewer", expectedRole: "admin" })).status).toBe(200);
    const second = await member("member");
    expect((await patch(second, { role: "admin", expectedRole: "member" })).status).toBe(200);
    expect((await patch(caller, { role: "viewer", expectedRole: "admin" })).status).toBe(200);
  });
});

describe("concurrency", () => {
  it("20 PATCHes at once with the same guard: exactly one 200, nineteen 409s, and the final state is the winner's", async () => {
    const { patch, member, state } = await setup();
    const target = await member("member");
    const roles = ["viewer", "admin"];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        patch(target, { role: roles[i % 2], expectedRole: "member", seat: i % 3 === 0, expectedSeat: false }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = responses.find((r) => r.status === 200) as Response;
    const result = (await winner.json()) as UpdateResult;
    for (const loser of responses.filter((r) => r.status === 409)) {
      expect((await errorOf(loser)).code).toBe("expected_value_mismatch");
    }
    expect(await state(target)).toEqual(result.after);
  });

  it("20 seat-on PATCHes for different members with 5 free seats: exactly 5 succeed and 0 seats remain", async () => {
    const { patch, member } = await setup({ subscription: subscription(5) });
    const ids = await Promise.all(Array.from({ length: 20 }, () => member()));
    const responses = await Promise.all(ids.map((id) => patch(id, { seat: true, expectedSeat: false })));
    const ok = responses.filter((r) => r.status === 200);
    const full = responses.filter((r) => r.status === 409);
    expect(ok).toHaveLength(5);
    expect(full).toHaveLength(15);
    for (const r of full) expect((await errorOf(r)).code).toBe("no_seat_available");
    const results = (await Promise.all(ok.map((r) => r.json()))) as UpdateResult[];
    expect(results.map((r) => r.availableSeats).sort()).toEqual([0, 1, 2, 3, 4]);
    const last = await patch(ids[0] as string, { role: "viewer", expectedRole: "member" });
    expect(((await last.json()) as UpdateResult).availableSeats).toBe(0);
  });

  it("a control-plane sync racing a PATCH is never half applied", async () => {
    for (let i = 0; i < 10; i++) {
      const { org, patch, member, state } = await setup();
      const target = await member("member", { seat: false });
      const sync = admin("PUT", `/internal/v1/organizations/${org}/members/${target}`, {
        githubLogin: "synced",
        workEmail: "synced@example.com",
        role: "admin",
        seat: false,
        isBot: false,
      });
      const change = patch(target, { seat: true, expectedSeat: false, role: "viewer", expectedRole: "member" });
      const [syncRes, patchRes] = await Promise.all([sync, change]);
      expect(syncRes.status).toBe(200);
      expect([200, 409]).toContain(patchRes.status);
      // Whichever ran first, the sync's full state wins and no mix of the two can appear.
      expect(await state(target)).toEqual({ seat: false, role: "admin" });
    }
  });
});

describe("Durable Object failures", () => {
  const failing = (flags: Record<string, boolean>) => {
    let calls = 0;
    const fn = async () => {
      calls++;
      throw Object.assign(new Error("internal detail [expected-fault]"), flags);
    };
    return { fn, calls: () => calls };
  };

  it(".overloaded: 503 unavailable at once, no retry", async () => {
    const f = failing({ overloaded: true, retryable: true });
    await expect(callDurable(f.fn, { idempotent: true })).rejects.toMatchObject({
      code: "unavailable",
      status: 503,
      retriable: true,
    });
    expect(f.calls()).toBe(1);
  });

  it(".retryable: one retry with a new stub, then 503", async () => {
    const f = failing({ retryable: true });
    await expect(callDurable(f.fn, { idempotent: true })).rejects.toMatchObject({ code: "unavailable" });
    expect(f.calls()).toBe(2);
    let n = 0;
    const flaky = async () => {
      n++;
      if (n === 1) throw Object.assign(new Error("reset"), { retryable: true });
      return "ok";
    };
    await expect(callDurable(flaky, { idempotent: true })).resolves.toBe("ok");
  });

  it("other errors, and retryable errors of calls that are not idempotent: 503 without retry", async () => {
    for (const [flags, idempotent] of [
      [{}, true],
      [{ retryable: true }, false],
    ] as const) {
      const f = failing(flags);
      await expect(callDurable(f.fn, { idempotent })).rejects.toMatchObject({
        code: "unavailable",
        message: expect.not.stringContaining("internal detail"),
      });
      expect(f.calls()).toBe(1);
    }
  });
});

describe("Durable Object failures over HTTP", () => {
  it("an unreachable organization object is 503 unavailable (retriable) for GET and PATCH, without internals", async () => {
    const { org, key, member } = await setup();
    const target = await member();
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const init of [{}, { method: "PATCH", body: JSON.stringify({ seat: true, expectedSeat: false }) }]) {
        const request = new Request(`https://service.test/api/v1/organizations/${org}/members/${target}`, {
          ...init,
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "X-Correlation-Id": "c-503" },
        });
        const res = await fetchWithEnv(request, { ORGANIZATIONS: failingNamespace({ retryable: true }) });
        expect(res.status).toBe(503);
        const body = await res.text();
        expect(body).not.toContain("internal detail");
        expect((JSON.parse(body) as MemberError).error).toMatchObject({
          code: "unavailable",
          retriable: true,
          correlationId: "c-503",
          details: [],
        });
      }
    } finally {
      logged.mockRestore();
    }
  });
});

describe("arbitrary bodies", () => {
  it("never produce a 500 and never change state unless valid", async () => {
    const { patch, member, state } = await setup({ subscription: subscription(100) });
    const target = await member("member", { seat: false });
    const field = fc.oneof(
      fc.boolean(),
      fc.constantFrom("member", "admin", "viewer", "owner", "true", null, 1, 0),
      fc.anything(),
    );
    const body = fc.oneof(
      fc.record({ seat: field, expectedSeat: field, role: field, expectedRole: field }, { requiredKeys: [] }),
      fc.dictionary(fc.string({ maxLength: 12 }), field, { maxKeys: 4 }),
      fc.jsonValue(),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const before = await state(target);
        const res = await patch(target, typeof b === "string" ? b : JSON.stringify(b));
        expect([200, 400, 409, 422]).toContain(res.status);
        const after = await state(target);
        if (res.status !== 200) {
          expect(after).toEqual(before);
        } else {
          const r = (await res.json()) as UpdateResult;
          expect(r.before).toEqual(before);
          expect(after).toEqual(r.after);
          const sent = b as Record<string, unknown>;
          expect(after).toEqual({
            seat: (sent.seat as boolean | undefined) ?? before.seat,
            role: (sent.role as string | undefined) ?? before.role,
          });
        }
      }),
      { numRuns: 150 },
    );
  });
});
