import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OrganizationObject } from "../../src/organization/object";
import { type AuditEntry, errorOf, setup, walk } from "./admin-helpers";
import { admin, adminOk, env, unique } from "./helpers";

/** `GET /api/v1/organizations/{org}/audit-log` (contract section 8). */

const sync = (org: string, id: string, body: Record<string, unknown>, correlationId = "c-sync") =>
  admin(
    "PUT",
    `/internal/v1/organizations/${org}/members/${id}`,
    { githubLogin: `user${id}`, workEmail: `user${id}@example.com`, role: "member", seat: false, isBot: false, ...body },
    { "X-Correlation-Id": correlationId },
  );

/** The organization's entries apart from the setup's own (its caller being added). */
const entriesOf = async (s: Awaited<ReturnType<typeof setup>>) =>
  (await walk<AuditEntry>(async (cursor) => s.auditOk(`limit=100${cursor ? `&cursor=${cursor}` : ""}`))).items.filter(
    (e) => e.githubUserId !== s.caller.id || e.action !== "member.added",
  );

describe("who may read (admins only)", () => {
  it("401, 400, 404, 403 blocked, 403 not a member, 403 not_org_admin for members and viewers", async () => {
    const s = await setup();
    expect((await s.audit("", {})).status).toBe(401);
    expect((await errorOf(await s.audit("limit=0"))).code).toBe("invalid_request");
    expect((await errorOf(await s.audit("githubUserId=abc"))).code).toBe("invalid_request");
    expect((await errorOf(await s.audit("cursor=zz"))).message).toBe("Invalid cursor.");
    expect((await errorOf(await s.audit("", s.auth, unique("ghost")))).code).toBe("org_not_found");
    const blocked = await setup({ blocked: true });
    expect((await errorOf(await blocked.audit())).code).toBe("installation_blocked");
    const other = await setup();
    expect((await errorOf(await s.audit("", s.auth, other.org))).code).toBe("org_access_denied");
    for (const callerRole of ["member", "viewer"] as const) {
      const res = await (await setup({ callerRole })).audit();
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("not_org_admin");
    }
  });

  it("admins may read it without a subscription", async () => {
    const s = await setup({ plan: "free", subscription: { status: "none", billedThroughService: false, purchasedSeats: 0 } });
    expect((await s.audit()).status).toBe(200);
  });
});

describe("PATCH and batch PATCH: one member.updated per member that changed, by the caller, source api", () => {
  it("records before, after, actor, source, the request's correlation id, the key and the caller's address", async () => {
    const s = await setup();
    const id = await s.member();
    const headers = { "X-Correlation-Id": "c-patch-1", "CF-Connecting-IP": "2001:db8::7" };
    expect((await s.patch(id, { seat: true, expectedSeat: false }, headers)).status).toBe(200);
    const [defaultKey] = (
      await adminOk<{ data: { keyId: string; name: string }[] }>("GET", `/internal/v1/users/${s.caller.id}/api-keys`)
    ).data;
    const [entry] = await entriesOf(s).then((es) => es.filter((e) => e.action === "member.updated"));
    expect(entry).toEqual({
      id: expect.any(String),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      action: "member.updated",
      actor: { githubUserId: s.caller.id, githubLogin: `user${s.caller.id}` },
      source: "api",
      githubUserId: id,
      before: { seat: false, role: "member" },
      after: { seat: true, role: "member" },
      correlationId: "c-patch-1",
      key: { id: defaultKey?.keyId, name: "default" },
      ip: "2001:db8::7",
    });
  });

  it("a batch writes entries for exactly the changes that changed something", async () => {
    const s = await setup();
    const a = await s.member();
    const b = await s.member("viewer");
    const c = await s.member();
    const res = await s.batch(
      {
        changes: [
          { githubUserId: a, role: "admin", expectedRole: "member" },
          { githubUserId: b, role: "viewer", expectedRole: "viewer" },
          { githubUserId: c, seat: true, expectedSeat: false },
        ],
      },
      { "X-Correlation-Id": "c-batch" },
    );
    expect(res.status).toBe(200);
    const updated = (await entriesOf(s)).filter((e) => e.action === "member.updated");
    expect(updated.map((e) => e.githubUserId).sort()).toEqual([a, c].sort());
    expect(updated.every((e) => e.correlationId === "c-batch" && e.source === "api")).toBe(true);
  });

  it("refused requests and no-ops write nothing", async () => {
    const s = await setup({ subscription: { status: "active", billedThroughService: true, purchasedSeats: 1 } });
    const a = await s.member("member", { seat: true });
    const b = await s.member();
    const bot = await s.member("member", { isBot: true });
    const before = await entriesOf(s);
    expect((await s.patch(a, { seat: true, expectedSeat: true })).status).toBe(200); // no-op
    expect((await s.patch(a, { seat: false, expectedSeat: false })).status).toBe(409); // stale guard
    expect((await s.patch(b, { seat: true, expectedSeat: false })).status).toBe(409); // no seat
    expect((await s.patch(bot, { role: "admin", expectedRole: "member" })).status).toBe(422);
    expect((await s.patch(s.caller.id, { role: "member", expectedRole: "admin" })).status).toBe(409); // last admin
    expect(
      (
        await s.batch({
          changes: [
            { githubUserId: a, seat: false, expectedSeat: true },
            { githubUserId: b, seat: true, expectedSeat: true },
          ],
        })
      ).status,
    ).toBe(409);
    expect((await s.batch({ changes: [] })).status).toBe(400);
    const viewer = await setup({ callerRole: "viewer" });
    expect((await s.patch(a, { seat: false, expectedSeat: true }, viewer.auth)).status).toBe(403);
    expect(await entriesOf(s)).toEqual(before);
  });
});

describe("a retried PATCH (same operation) records its change once", () => {
  it("the retry that finds its own earlier write answers changed false and writes no second entry", async () => {
    const s = await setup();
    const id = await s.member();
    const stub = env.ORGANIZATIONS.getByName(s.org.toLowerCase());
    const changes = [{ githubUserId: id, seat: true, expectedSeat: false }];
    await stub.updateMembers(s.org, s.caller.id, changes, "op-retry", "changes", {
      correlationId: "c-first",
      key: null,
      ip: null,
    });
    await stub.updateMembers(s.org, s.caller.id, changes, "op-retry", "changes", {
      correlationId: "c-retry",
      key: null,
      ip: null,
    });
    const entries = (await s.auditOk(`githubUserId=${id}`)).data.filter((e) => e.action === "member.updated");
    expect(entries.map((e) => e.correlationId)).toEqual(["c-first"]);
  });
});

describe("control-plane sync: source sync, no actor", () => {
  it("member.added, member.updated only when seat or role changed, member.removed; repeats write nothing", async () => {
    const s = await setup();
    const id = String(8_000_000 + Math.floor(Math.random() * 1_000_000));
    await sync(s.org, id, {}, "c-add");
    await sync(s.org, id, {}, "c-again"); // same state
    await sync(s.org, id, { githubLogin: "renamed", workEmail: "new@example.com" }, "c-rename"); // neither seat nor role
    await sync(s.org, id, { role: "viewer", seat: true }, "c-update");
    expect(
      (await admin("DELETE", `/internal/v1/organizations/${s.org}/members/${id}`, undefined, { "X-Correlation-Id": "c-del" }))
        .status,
    ).toBe(204);
    expect((await admin("DELETE", `/internal/v1/organizations/${s.org}/members/${id}`)).status).toBe(204);
    const entries = (await s.auditOk(`githubUserId=${id}`)).data;
    expect(entries.map((e) => [e.action, e.source, e.actor, e.before, e.after, e.correlationId])).toEqual([
      ["member.removed", "sync", null, { seat: true, role: "viewer" }, null, "c-del"],
      ["member.updated", "sync", null, { seat: false, role: "member" }, { seat: true, role: "viewer" }, "c-update"],
      ["member.added", "sync", null, null, { seat: false, role: "member" }, "c-add"],
    ]);
    // Not an API change: no key, and no caller's address (contract section 18).
    expect(entries.map((e) => [e.key, e.ip])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
  });

  it("the webhook path records source github through the same write (with its actor when known)", async () => {
    const s = await setup();
    const stub = env.ORGANIZATIONS.getByName(s.org.toLowerCase());
    const input = { githubLogin: "hooked", workEmail: "h@example.com", role: "member" as const, seat: false, isBot: false };
    const at = { home: s.org.toLowerCase(), login: s.org };
    await stub.putMember(
      at,
      "7000001",
      input,
      { source: "github", correlationId: "gh-delivery-1", actor: { githubUserId: "1", githubLogin: "octo" } },
      false,
    );
    await stub.deleteMember(at, "7000001", { source: "github", correlationId: "gh-delivery-2" }, false);
    const entries = (await s.auditOk("githubUserId=7000001")).data;
    expect(entries.map((e) => [e.action, e.source, e.actor, e.correlationId])).toEqual([
      ["member.removed", "github", null, "gh-delivery-2"],
      ["member.added", "github", { githubUserId: "1", githubLogin: "octo" }, "gh-delivery-1"],
    ]);
  });
});

describe("order and pages", () => {
  it("newest first; cursor pages of every limit return each entry once; githubUserId filters", async () => {
    const s = await setup();
    const a = await s.member();
    const b = await s.member();
    for (let i = 0; i < 3; i++) {
      await s.patch(a, { seat: i % 2 === 0, expectedSeat: i % 2 !== 0 });
      await s.patch(b, { role: i % 2 === 0 ? "viewer" : "member", expectedRole: i % 2 === 0 ? "member" : "viewer" });
    }
    const all = (await s.auditOk("limit=100")).data;
    expect(all).toHaveLength(9); // caller, a, b added; 6 updates
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(all.map((e) => e.at)).toEqual([...all.map((e) => e.at)].sort().reverse());
    for (const limit of [1, 2, 3, 4, 5]) {
      const { items } = await walk<AuditEntry>(async (cursor) => s.auditOk(`limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`));
      expect(items).toEqual(all);
    }
    const onlyB = (await s.auditOk(`githubUserId=${b}`)).data;
    expect(onlyB).toEqual(all.filter((e) => e.githubUserId === b));
    expect(onlyB).toHaveLength(4);
  });
});

describe("retention: 400 days", () => {
  it("entries older than 400 days are not listed and are deleted by the next write", async () => {
    const s = await setup();
    const stub = env.ORGANIZATIONS.getByName(s.org.toLowerCase());
    const old = Date.now() - 401 * 24 * 3_600_000;
    const count = () =>
      runInDurableObject(stub, (_: OrganizationObject, state) =>
        Number(
          state.storage.sql.exec("SELECT count(*) AS n FROM audit_log WHERE at < ?", Date.now() - 400 * 24 * 3_600_000).one().n,
        ),
      );
    await runInDurableObject(stub, (_: OrganizationObject, state) => {
      state.storage.sql.exec(
        "INSERT INTO audit_log (at, action, source, github_user_id, after_seat, after_role, correlation_id) VALUES (?, 'member.added', 'sync', '1', 0, 'member', 'old')",
        old,
      );
    });
    expect(await count()).toBe(1);
    expect((await s.auditOk()).data.some((e) => e.correlationId === "old")).toBe(false);
    await s.member();
    expect(await count()).toBe(0);
  });
});
