import { describe, expect, it } from "vitest";
import {
  type ChangeFacts,
  capabilities,
  decideMemberChanges,
  type InstallationFacts,
  type MemberChange,
  type MemberFacts,
  memberAccess,
} from "../../src/rules/members";
import type { Role } from "../../src/schemas/common";

/**
 * The member rules of contract sections 4 and 8 (src/members/rules.ts), as tables. The HTTP tests
 * keep one case per rule family; every combination lives here, where a case costs microseconds.
 */

const PLANS = ["free", "team", "pro"] as const;
const STATUSES = ["active", "past_due", "canceled", "none"] as const;
const ROLES: Role[] = ["admin", "member", "viewer"];

const installation = (over: Partial<InstallationFacts> = {}): InstallationFacts => ({
  blocked: false,
  plan: "pro",
  subscriptionStatus: "active",
  billedThroughService: true,
  purchasedSeats: 5,
  ...over,
});

/** Every installation the contract distinguishes: plan × subscription status × billed × blocked. */
const everyInstallation = PLANS.flatMap((plan) =>
  STATUSES.flatMap((subscriptionStatus) =>
    [true, false].flatMap((billedThroughService) =>
      [false, true].map((blocked) => installation({ plan, subscriptionStatus, billedThroughService, blocked })),
    ),
  ),
);

/** An independent statement of section 4: an active Team or Pro subscription billed through the service, unblocked. */
const subscribed = (i: InstallationFacts) =>
  !i.blocked && i.subscriptionStatus === "active" && i.billedThroughService && i.plan !== "free";

describe("memberAccess: 404 no installation, 403 blocked, 403 not a member, then for writes 403 not an admin, 403 no subscription", () => {
  it.each([
    ["no installation", undefined, { seat: true, role: "admin" as Role }, "read", "org_not_found"],
    ["no installation beats not a member", undefined, undefined, "write", "org_not_found"],
    [
      "blocked, also for reads",
      installation({ blocked: true }),
      { seat: true, role: "admin" as Role },
      "read",
      "installation_blocked",
    ],
    ["blocked beats not a member", installation({ blocked: true }), undefined, "read", "installation_blocked"],
    ["not a member", installation(), undefined, "read", "org_access_denied"],
    ["not a member, for a write", installation(), undefined, "write", "org_access_denied"],
    ["a viewer reads", installation(), { seat: false, role: "viewer" as Role }, "read", null],
    [
      "a member reads without a subscription",
      installation({ plan: "free", subscriptionStatus: "none" }),
      { seat: false, role: "member" as Role },
      "read",
      null,
    ],
    ["a member cannot write", installation(), { seat: true, role: "member" as Role }, "write", "not_org_admin"],
    ["a viewer cannot write", installation(), { seat: true, role: "viewer" as Role }, "write", "not_org_admin"],
    [
      "not an admin beats no subscription",
      installation({ plan: "free" }),
      { seat: true, role: "member" as Role },
      "write",
      "not_org_admin",
    ],
    ["a member cannot do admin things", installation(), { seat: true, role: "member" as Role }, "admin", "not_org_admin"],
    [
      "an admin does admin things without a subscription",
      installation({ subscriptionStatus: "canceled" }),
      { seat: true, role: "admin" as Role },
      "admin",
      null,
    ],
    ["an admin writes with a subscription", installation(), { seat: true, role: "admin" as Role }, "write", null],
  ] as const)("%s → %s", (_name, inst, caller, need, expected) => {
    expect(memberAccess(inst, caller, need)?.code ?? null).toBe(expected);
  });

  it.each(everyInstallation.filter((i) => !i.blocked))(
    "an admin's write with plan $plan, subscription $subscriptionStatus, billed $billedThroughService: allowed exactly when subscribed",
    (inst) => {
      const refusal = memberAccess(inst, { seat: true, role: "admin" }, "write");
      expect(refusal?.code ?? null).toBe(subscribed(inst) ? null : "subscription_required");
    },
  );

  it("the messages are the contract's", () => {
    expect(memberAccess(installation(), { seat: true, role: "member" }, "write")).toEqual({
      ok: false,
      code: "not_org_admin",
      message: "Only an admin of the organization can change members.",
      details: [],
    });
    expect(memberAccess(installation(), { seat: true, role: "member" }, "admin")?.message).toBe(
      "Only an admin of the organization can do this.",
    );
    expect(memberAccess(installation({ plan: "free" }), { seat: true, role: "admin" }, "write")?.message).toBe(
      "Changing members needs an active Team or Pro subscription billed through the service.",
    );
  });
});

describe("capabilities: every plan, subscription, billing, blocked and role combination (contract section 8)", () => {
  const cases = everyInstallation.flatMap((inst) => ROLES.map((role) => ({ ...inst, role })));

  it.each(cases)(
    "plan $plan, $subscriptionStatus, billed $billedThroughService, blocked $blocked, $role",
    ({ role, ...inst }) => {
      const manage = role === "admin" && subscribed(inst);
      expect(capabilities(inst, { seat: true, role })).toEqual({
        canManageSeats: manage,
        canManageRoles: manage,
        canExportAnalytics: !inst.blocked && inst.plan === "pro",
      });
    },
  );

  it("the table is the whole space, and the counts match the contract's prose", () => {
    expect(cases).toHaveLength(3 * 4 * 2 * 2 * 3);
    const flags = cases.map(({ role, ...inst }) => capabilities(inst, { seat: false, role }));
    // Team and Pro, active, billed, unblocked, admin.
    expect(flags.filter((f) => f.canManageSeats)).toHaveLength(2);
    // Pro, unblocked, any subscription and role.
    expect(flags.filter((f) => f.canExportAnalytics)).toHaveLength(4 * 2 * 3);
  });

  it("the seat does not matter", () => {
    for (const seat of [true, false]) {
      expect(capabilities(installation(), { seat, role: "admin" })).toEqual({
        canManageSeats: true,
        canManageRoles: true,
        canExportAnalytics: true,
      });
    }
  });
});

/** An organization of these members (id → facts), with seats used and admins counted from them. */
function org(members: Record<string, Partial<MemberFacts>>, purchasedSeats = 3): ChangeFacts {
  const all = Object.fromEntries(
    Object.entries(members).map(([id, m]) => [id, { seat: false, role: "member" as Role, isBot: false, ...m }]),
  );
  const list = Object.values(all);
  return {
    member: (id) => all[id],
    purchasedSeats,
    seatsUsed: list.filter((m) => m.seat).length,
    adminCount: list.filter((m) => m.role === "admin").length,
  };
}

const single = (_i: number, field: string) => field;
const batch = (i: number, field: string) => `changes.${i}.${field}`;

type Expected =
  | { code: string; paths: string[] }
  | { availableSeats: number; after: Record<string, { seat: boolean; role: Role }> };

describe("decideMemberChanges: the first failing rule decides, in the contract's order", () => {
  // a: admin with a seat, b: member with a seat, c: viewer without a seat, bot: a bot member without a seat.
  const base = () =>
    org({ a: { role: "admin", seat: true }, b: { role: "member", seat: true }, c: { role: "viewer" }, bot: { isBot: true } });

  const cases: [string, ChangeFacts, MemberChange[], Expected][] = [
    [
      "a seat on, guard right",
      base(),
      [{ githubUserId: "c", seat: true, expectedSeat: false }],
      {
        availableSeats: 0,
        after: { c: { seat: true, role: "viewer" } },
      },
    ],
    [
      "a seat off is always allowed, also over capacity",
      org({ a: { role: "admin", seat: true }, b: { seat: true } }, 0),
      [{ githubUserId: "b", seat: false, expectedSeat: true }],
      { availableSeats: 0, after: { b: { seat: false, role: "member" } } },
    ],
    [
      "desired equals current: allowed, nothing changes",
      base(),
      [{ githubUserId: "b", seat: true, expectedSeat: true }],
      {
        availableSeats: 1,
        after: { b: { seat: true, role: "member" } },
      },
    ],
    [
      "both pairs at once",
      base(),
      [{ githubUserId: "c", seat: true, expectedSeat: false, role: "admin", expectedRole: "viewer" }],
      {
        availableSeats: 0,
        after: { c: { seat: true, role: "admin" } },
      },
    ],
    [
      "a role change needs no free seat",
      org({ a: { role: "admin", seat: true }, b: { seat: true } }, 2),
      [{ githubUserId: "b", role: "admin", expectedRole: "member" }],
      { availableSeats: 0, after: { b: { seat: true, role: "admin" } } },
    ],
    [
      "unknown member",
      base(),
      [{ githubUserId: "zz", seat: true, expectedSeat: false }],
      {
        code: "member_not_found",
        paths: ["githubUserId"],
      },
    ],
    [
      "unknown member beats a stale guard of another change",
      base(),
      [
        { githubUserId: "b", seat: false, expectedSeat: false },
        { githubUserId: "zz", seat: true, expectedSeat: false },
      ],
      { code: "member_not_found", paths: ["githubUserId"] },
    ],
    [
      "a stale seat guard",
      base(),
      [{ githubUserId: "b", seat: false, expectedSeat: false }],
      {
        code: "expected_value_mismatch",
        paths: ["expectedSeat"],
      },
    ],
    [
      "a stale role guard",
      base(),
      [{ githubUserId: "b", role: "viewer", expectedRole: "admin" }],
      {
        code: "expected_value_mismatch",
        paths: ["expectedRole"],
      },
    ],
    [
      "both guards stale: both named",
      base(),
      [{ githubUserId: "b", seat: false, expectedSeat: false, role: "viewer", expectedRole: "admin" }],
      {
        code: "expected_value_mismatch",
        paths: ["expectedSeat", "expectedRole"],
      },
    ],
    [
      "one pair right, the other stale: refused as a whole",
      base(),
      [{ githubUserId: "b", seat: false, expectedSeat: true, role: "viewer", expectedRole: "viewer" }],
      { code: "expected_value_mismatch", paths: ["expectedRole"] },
    ],
    [
      "a stale guard beats a bot made admin",
      base(),
      [{ githubUserId: "bot", role: "admin", expectedRole: "viewer" }],
      {
        code: "expected_value_mismatch",
        paths: ["expectedRole"],
      },
    ],
    [
      "a bot made admin",
      base(),
      [{ githubUserId: "bot", role: "admin", expectedRole: "member" }],
      {
        code: "bot_cannot_be_admin",
        paths: ["role"],
      },
    ],
    [
      "a bot made admin beats no seat available",
      org({ a: { role: "admin", seat: true }, bot: { isBot: true } }, 1),
      [{ githubUserId: "bot", role: "admin", expectedRole: "member", seat: true, expectedSeat: false }],
      { code: "bot_cannot_be_admin", paths: ["role"] },
    ],
    [
      "a bot may lose a role it has",
      org({ a: { role: "admin" }, bot: { isBot: true, role: "member" } }),
      [{ githubUserId: "bot", role: "viewer", expectedRole: "member" }],
      { availableSeats: 3, after: { bot: { seat: false, role: "viewer" } } },
    ],
    [
      "the last admin demoted",
      base(),
      [{ githubUserId: "a", role: "member", expectedRole: "admin" }],
      {
        code: "last_admin",
        paths: ["role"],
      },
    ],
    [
      "the last admin demoted beats no seat available",
      org({ a: { role: "admin" }, b: { seat: true } }, 1),
      [{ githubUserId: "a", role: "member", expectedRole: "admin", seat: true, expectedSeat: false }],
      { code: "last_admin", paths: ["role"] },
    ],
    [
      "an admin demoted while another stays",
      org({ a: { role: "admin" }, b: { role: "admin" } }),
      [{ githubUserId: "a", role: "viewer", expectedRole: "admin" }],
      { availableSeats: 3, after: { a: { seat: false, role: "viewer" } } },
    ],
    [
      "no seat available",
      org({ a: { role: "admin", seat: true }, b: {} }, 1),
      [{ githubUserId: "b", seat: true, expectedSeat: false }],
      {
        code: "no_seat_available",
        paths: ["seat"],
      },
    ],
    [
      "taking the last free seat leaves 0",
      org({ a: { role: "admin", seat: true }, b: {} }, 2),
      [{ githubUserId: "b", seat: true, expectedSeat: false }],
      { availableSeats: 0, after: { b: { seat: true, role: "member" } } },
    ],
    [
      "availableSeats never below 0 when over capacity already",
      org({ a: { role: "admin", seat: true }, b: { seat: true }, c: { seat: true } }, 1),
      [{ githubUserId: "c", seat: false, expectedSeat: true }],
      { availableSeats: 0, after: { c: { seat: false, role: "member" } } },
    ],
  ];

  it.each(cases)("%s", (_name, facts, changes, expected) => {
    const decision = decideMemberChanges(facts, changes, single);
    if ("code" in expected) {
      expect(decision).toMatchObject({ ok: false, code: expected.code });
      if (decision.ok) return;
      expect(decision.details.map((d) => d.path)).toEqual(expected.paths);
    } else {
      expect(decision).toMatchObject({ ok: true, availableSeats: expected.availableSeats });
      if (!decision.ok) return;
      expect(Object.fromEntries(decision.updates.map((u) => [u.githubUserId, u.after]))).toEqual(expected.after);
    }
  });

  it("details carry the current values and the seat count", () => {
    const stale = decideMemberChanges(
      base(),
      [{ githubUserId: "b", seat: false, expectedSeat: false, role: "viewer", expectedRole: "viewer" }],
      single,
    );
    expect(stale).toMatchObject({
      code: "expected_value_mismatch",
      details: [
        { path: "expectedSeat", message: "current value is true" },
        { path: "expectedRole", message: "current value is member" },
      ],
    });
    const full = decideMemberChanges(
      org({ a: { role: "admin", seat: true }, b: {} }, 1),
      [{ githubUserId: "b", seat: true, expectedSeat: false }],
      single,
    );
    expect(full).toMatchObject({
      code: "no_seat_available",
      details: [{ path: "seat", message: "all 1 purchased seats are in use" }],
    });
  });

  it("updates report before and after of every change, changed or not", () => {
    const decision = decideMemberChanges(
      base(),
      [
        { githubUserId: "c", seat: true, expectedSeat: false },
        { githubUserId: "b", role: "member", expectedRole: "member" },
      ],
      single,
    );
    expect(decision).toEqual({
      ok: true,
      availableSeats: 0,
      updates: [
        { githubUserId: "c", before: { seat: false, role: "viewer" }, after: { seat: true, role: "viewer" } },
        { githubUserId: "b", before: { seat: true, role: "member" }, after: { seat: true, role: "member" } },
      ],
    });
  });
});

describe("decideMemberChanges on a batch: the state after the whole batch counts", () => {
  const cases: [string, ChangeFacts, MemberChange[], Expected][] = [
    [
      "one seat off and one on in a full organization",
      org({ a: { role: "admin", seat: true }, b: { seat: true }, c: {} }, 2),
      [
        { githubUserId: "b", seat: false, expectedSeat: true },
        { githubUserId: "c", seat: true, expectedSeat: false },
      ],
      { availableSeats: 0, after: { b: { seat: false, role: "member" }, c: { seat: true, role: "member" } } },
    ],
    [
      "the same, on first",
      org({ a: { role: "admin", seat: true }, b: { seat: true }, c: {} }, 2),
      [
        { githubUserId: "c", seat: true, expectedSeat: false },
        { githubUserId: "b", seat: false, expectedSeat: true },
      ],
      { availableSeats: 0, after: { b: { seat: false, role: "member" }, c: { seat: true, role: "member" } } },
    ],
    [
      "two on and one off in a full organization",
      org({ a: { role: "admin", seat: true }, b: { seat: true }, c: {}, d: {} }, 2),
      [
        { githubUserId: "b", seat: false, expectedSeat: true },
        { githubUserId: "c", seat: true, expectedSeat: false },
        { githubUserId: "d", seat: true, expectedSeat: false },
      ],
      { code: "no_seat_available", paths: ["changes.1.seat"] },
    ],
    [
      "the last admin hands over within the batch",
      org({ a: { role: "admin" }, b: {} }),
      [
        { githubUserId: "a", role: "member", expectedRole: "admin" },
        { githubUserId: "b", role: "admin", expectedRole: "member" },
      ],
      { availableSeats: 3, after: { a: { seat: false, role: "member" }, b: { seat: false, role: "admin" } } },
    ],
    [
      "demoting every admin",
      org({ a: { role: "admin" }, b: { role: "admin" } }),
      [
        { githubUserId: "a", role: "member", expectedRole: "admin" },
        { githubUserId: "b", role: "viewer", expectedRole: "admin" },
      ],
      { code: "last_admin", paths: ["changes.0.role"] },
    ],
    [
      "a stale guard in the middle",
      org({ a: { role: "admin" }, b: {}, c: {} }),
      [
        { githubUserId: "a", seat: true, expectedSeat: false },
        { githubUserId: "b", seat: true, expectedSeat: false },
        { githubUserId: "c", seat: true, expectedSeat: true },
      ],
      { code: "expected_value_mismatch", paths: ["changes.2.expectedSeat"] },
    ],
    [
      "an unknown member in the middle",
      org({ a: { role: "admin" }, b: {} }),
      [
        { githubUserId: "b", seat: true, expectedSeat: false },
        { githubUserId: "zz", seat: true, expectedSeat: false },
      ],
      { code: "member_not_found", paths: ["changes.1.githubUserId"] },
    ],
    [
      "a bot made admin in the batch",
      org({ a: { role: "admin" }, b: {}, bot: { isBot: true } }),
      [
        { githubUserId: "b", seat: true, expectedSeat: false },
        { githubUserId: "bot", role: "admin", expectedRole: "member" },
      ],
      { code: "bot_cannot_be_admin", paths: ["changes.1.role"] },
    ],
  ];

  it.each(cases)("%s", (_name, facts, changes, expected) => {
    const decision = decideMemberChanges(facts, changes, batch);
    if ("code" in expected) {
      expect(decision).toMatchObject({ ok: false, code: expected.code });
      if (decision.ok) return;
      expect(decision.details.map((d) => d.path)).toEqual(expected.paths);
    } else {
      expect(decision).toMatchObject({ ok: true, availableSeats: expected.availableSeats });
      if (!decision.ok) return;
      expect(Object.fromEntries(decision.updates.map((u) => [u.githubUserId, u.after]))).toEqual(expected.after);
    }
  });
});
