import { describe, expect, it } from "vitest";
import { type BatchResult, errorOf, type State, setup, subscription } from "./admin-helpers";
import { unique } from "./helpers";

/** `PATCH /api/v1/organizations/{org}/members` (contract section 8). */

const seatOn = (githubUserId: string) => ({ githubUserId, seat: true, expectedSeat: false });
const seatOff = (githubUserId: string) => ({ githubUserId, seat: false, expectedSeat: true });

describe("body: 1 to 100 changes, each a single PATCH body plus githubUserId, no member twice", () => {
  it("1 change and 100 changes succeed; 0 and 101 are 400 naming changes", async () => {
    const { batch, member } = await setup({ subscription: subscription(200) });
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await member());
    const one = await batch({ changes: [seatOn(ids[0] as string)] });
    expect(one.status).toBe(200);
    const hundred = await batch({ changes: ids.map((id) => ({ githubUserId: id, role: "viewer", expectedRole: "member" })) });
    expect(hundred.status).toBe(200);
    const body = (await hundred.json()) as BatchResult;
    expect(body.results.map((r) => r.githubUserId)).toEqual(ids);
    for (const changes of [[], [...ids, "1"].map(seatOn)]) {
      const res = await batch({ changes });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).details).toEqual([{ path: "changes", message: "must hold 1 to 100 changes" }]);
    }
  });

  it("a member twice is 400 naming the repeat; nothing changes", async () => {
    const { batch, member, state } = await setup();
    const a = await member();
    const b = await member();
    const res = await batch({ changes: [seatOn(a), seatOn(b), { githubUserId: a, role: "viewer", expectedRole: "member" }] });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details).toEqual([{ path: "changes.2.githubUserId", message: "repeats changes.0.githubUserId" }]);
    expect(await state(a)).toEqual({ seat: false, role: "member" });
  });

  it.each([
    [{ githubUserId: "1", seat: true }, ["changes.1.expectedSeat"]],
    [{ githubUserId: "1", expectedRole: "member" }, ["changes.1.role"]],
    [{ seat: true, expectedSeat: false }, ["changes.1.githubUserId"]],
    [{ githubUserId: "x1", seat: true, expectedSeat: false }, ["changes.1.githubUserId"]],
    [{ githubUserId: "1", seat: "true", expectedSeat: false }, ["changes.1.seat"]],
    [{ githubUserId: "1", seat: true, expectedSeat: false, colour: "red" }, ["changes.1.colour"]],
    [{ githubUserId: "1" }, ["changes.1"]],
  ])("400 for a change %j, with details paths inside the list: %j", async (change, paths) => {
    const { batch, member } = await setup();
    const res = await batch({ changes: [seatOn(await member()), change] });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details.map((d) => d.path)).toEqual(paths);
  });

  it("400 for a body that is not an object with changes, or has other fields; 415; 413 past 64 KiB", async () => {
    const { batch, member } = await setup();
    const id = await member();
    for (const body of ["[]", "{}", '{"changes": {}}', JSON.stringify({ changes: [seatOn(id)], dryRun: true })]) {
      expect((await batch(body)).status, body).toBe(400);
    }
    expect((await batch({ changes: [seatOn(id)] }, { "Content-Type": "text/plain" })).status).toBe(415);
    const big = await batch({ changes: [seatOn(id)], pad: "x".repeat(64 * 1024) });
    expect(big.status).toBe(413);
    expect((await errorOf(big)).code).toBe("payload_too_large");
  });
});

describe("same preconditions as the single PATCH", () => {
  it("404 organization, 403 not a member, not an admin, no subscription, in that order", async () => {
    const { batch, member } = await setup();
    const id = await member();
    expect((await errorOf(await batch({ changes: [seatOn(id)] }, {}, unique("ghost")))).code).toBe("org_not_found");
    const other = await setup();
    expect((await errorOf(await batch({ changes: [seatOn(id)] }, {}, other.org))).code).toBe("org_access_denied");
    const viewer = await setup({ callerRole: "viewer" });
    expect((await errorOf(await viewer.batch({ changes: [seatOn(await viewer.member())] }))).code).toBe("not_org_admin");
    const unpaid = await setup({ subscription: subscription(5, { status: "past_due" }) });
    expect((await errorOf(await unpaid.batch({ changes: [seatOn(await unpaid.member())] }))).code).toBe("subscription_required");
  });
});

describe("all or nothing", () => {
  it("a stale guard in the middle rolls back the whole batch: 409 naming changes.2.expectedSeat", async () => {
    const { batch, member, state } = await setup();
    const ids = [await member(), await member(), await member("member", { seat: true }), await member(), await member()];
    const changes = ids.map(seatOn);
    const res = await batch({ changes });
    expect(res.status).toBe(409);
    expect(await errorOf(res)).toMatchObject({
      code: "expected_value_mismatch",
      details: [{ path: "changes.2.expectedSeat", message: "current value is true" }],
    });
    for (const [i, id] of ids.entries()) expect(await state(id)).toEqual({ seat: i === 2, role: "member" });
  });

  it("an unknown member in the middle: 404 member_not_found naming changes.1.githubUserId; nothing changes", async () => {
    const { batch, member, state } = await setup();
    const a = await member();
    const res = await batch({ changes: [seatOn(a), seatOn("999999999999")] });
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toMatchObject({
      code: "member_not_found",
      details: [{ path: "changes.1.githubUserId", message: expect.any(String) }],
    });
    expect(await state(a)).toEqual({ seat: false, role: "member" });
  });

  it("a bot made admin in the batch: 422 naming its change; nothing changes", async () => {
    const { batch, member, state } = await setup();
    const a = await member();
    const bot = await member("member", { isBot: true });
    const res = await batch({ changes: [seatOn(a), { githubUserId: bot, role: "admin", expectedRole: "member" }] });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).details).toEqual([{ path: "changes.1.role", message: "bot accounts cannot be admins" }]);
    expect(await state(a)).toEqual({ seat: false, role: "member" });
  });

  it("success answers every result in request order, changed or not, with availableSeats after the batch", async () => {
    const { batch, member } = await setup({ subscription: subscription(5) });
    const a = await member("member", { seat: true });
    const b = await member();
    const c = await member("viewer");
    const res = await batch({
      changes: [
        seatOff(a),
        { ...seatOn(b), role: "admin", expectedRole: "member" },
        { githubUserId: c, role: "viewer", expectedRole: "viewer" },
      ],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      results: [
        {
          githubUserId: a,
          before: { seat: true, role: "member" },
          after: { seat: false, role: "member" },
          changed: true,
          availableSeats: 4,
          purchasedQuantityChanged: false,
        },
        {
          githubUserId: b,
          before: { seat: false, role: "member" },
          after: { seat: true, role: "admin" },
          changed: true,
          availableSeats: 4,
          purchasedQuantityChanged: false,
        },
        {
          githubUserId: c,
          before: { seat: false, role: "viewer" },
          after: { seat: false, role: "viewer" },
          changed: false,
          availableSeats: 4,
          purchasedQuantityChanged: false,
        },
      ],
      availableSeats: 4,
    });
  });
});

describe("seat capacity counts the batch's net seats", () => {
  it("in a full organization, one seat off and one on succeeds (in either order); two on and one off is 409", async () => {
    const { batch, member, listOk, state } = await setup({ subscription: subscription(2) });
    const holders = [await member("member", { seat: true }), await member("member", { seat: true })];
    const waiting = [await member(), await member()];
    expect((await listOk()).seats.available).toBe(0);
    const swap = await batch({ changes: [seatOn(waiting[0] as string), seatOff(holders[0] as string)] });
    expect(swap.status).toBe(200);
    expect(((await swap.json()) as BatchResult).availableSeats).toBe(0);
    const over = await batch({
      changes: [seatOff(holders[1] as string), seatOn(waiting[1] as string), seatOn(holders[0] as string)],
    });
    expect(over.status).toBe(409);
    expect(await errorOf(over)).toMatchObject({
      code: "no_seat_available",
      details: [{ path: "changes.1.seat", message: expect.any(String) }],
    });
    expect(await state(holders[1] as string)).toEqual({ seat: true, role: "member" });
  });
});

describe("the last-admin rule looks at the state after the whole batch", () => {
  it("the last admin hands over within a batch; demoting every admin is 409 last_admin", async () => {
    const { caller, batch, member, state } = await setup();
    const heir = await member();
    const handover = await batch({
      changes: [
        { githubUserId: caller.id, role: "member", expectedRole: "admin" },
        { githubUserId: heir, role: "admin", expectedRole: "member" },
      ],
    });
    expect(handover.status).toBe(200);
    expect(await state(heir)).toEqual({ seat: false, role: "admin" });

    const second = await setup();
    const other = await second.member("admin");
    const all = await second.batch({
      changes: [
        { githubUserId: other, role: "viewer", expectedRole: "admin" },
        { githubUserId: second.caller.id, role: "member", expectedRole: "admin" },
      ],
    });
    expect(all.status).toBe(409);
    expect(await errorOf(all)).toMatchObject({
      code: "last_admin",
      details: [{ path: "changes.0.role", message: expect.any(String) }],
    });
    expect(await second.state(other)).toEqual({ seat: false, role: "admin" });
  });
});

describe("the single PATCH is a batch of one", () => {
  it("answers its result and keeps its unprefixed details paths", async () => {
    const { patch, member } = await setup();
    const id = await member("member", { seat: true });
    const res = await patch(id, { seat: true, expectedSeat: false });
    expect((await errorOf(res)).details).toEqual([{ path: "expectedSeat", message: "current value is true" }]);
  });
});

describe("concurrency", () => {
  it("20 batches racing over overlapping members leave the state of the winners applied in some order, never a mix", async () => {
    const { batch, member, state } = await setup({ subscription: subscription(100) });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await member());
    const initial: State = { seat: false, role: "member" };
    // Batch i changes three neighbouring members, each to a value of its own (so a mix would show).
    const plans = Array.from({ length: 20 }, (_, i) =>
      [0, 1, 2].map((k) => {
        const id = ids[(i + k * (1 + (i % 3))) % ids.length] as string;
        return {
          githubUserId: id,
          seat: i % 2 === 0,
          expectedSeat: false,
          role: (i + k) % 2 === 0 ? ("viewer" as const) : ("admin" as const),
          expectedRole: "member",
        };
      }),
    );
    for (const plan of plans) {
      // Keep each member at most once per batch.
      const seen = new Set<string>();
      plan.splice(0, plan.length, ...plan.filter((c) => !seen.has(c.githubUserId) && seen.add(c.githubUserId)));
    }
    const responses = await Promise.all(plans.map((changes) => batch({ changes })));
    const winners: number[] = [];
    for (const [i, res] of responses.entries()) {
      if (res.status === 200) winners.push(i);
      else {
        expect(res.status).toBe(409);
        expect((await errorOf(res)).code).toBe("expected_value_mismatch");
      }
    }
    expect(winners.length).toBeGreaterThan(0);
    // Every guard names the initial state, so two winners can never share a member (a later one
    // would have found a stale guard) and applying the winners in any order gives one state.
    const expected = new Map<string, State>(ids.map((id) => [id, initial]));
    const claimed = new Set<string>();
    for (const w of winners) {
      for (const c of plans[w] ?? []) {
        expect(claimed.has(c.githubUserId)).toBe(false);
        claimed.add(c.githubUserId);
        expected.set(c.githubUserId, { seat: c.seat, role: c.role });
      }
    }
    for (const id of ids) expect(await state(id)).toEqual(expected.get(id));
  });
});
