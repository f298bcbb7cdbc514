import type { ErrorCode, ErrorDetail } from "../lib/errors";
import type { Role } from "../schemas/common";

/**
 * The member rules of contract sections 4 and 8 as plain functions: facts in, decision out. The
 * organization's Durable Object loads the facts, calls these and writes the outcome in one
 * transaction; nothing here knows about storage or HTTP.
 */

export type Refusal = { ok: false; code: ErrorCode; message: string; details: ErrorDetail[] };

const refuse = (code: ErrorCode, message: string, details: ErrorDetail[] = []): Refusal => ({
  ok: false,
  code,
  message,
  details,
});

/** What the rules need to know of the installation. */
export interface InstallationFacts {
  blocked: boolean;
  plan: "free" | "team" | "pro";
  subscriptionStatus: "active" | "past_due" | "canceled" | "none";
  billedThroughService: boolean;
  purchasedSeats: number;
}

export interface MemberState {
  seat: boolean;
  role: Role;
}

export interface MemberFacts extends MemberState {
  isBot: boolean;
}

/** An active Team or Pro subscription billed through the service: what changing members needs. */
export const canManageMembers = (i: InstallationFacts): boolean =>
  !i.blocked && i.subscriptionStatus === "active" && i.billedThroughService && (i.plan === "team" || i.plan === "pro");

/**
 * Who may use the member endpoints, in the contract's order: 404 no installation, 403 blocked,
 * 403 not a member; to change members also 403 not an admin, then 403 no active Team or Pro
 * subscription billed through the service. Null when allowed.
 */
export function memberAccess(
  installation: InstallationFacts | undefined,
  caller: MemberState | undefined,
  need: "read" | "write" | "admin",
): Refusal | null {
  if (!installation) return refuse("org_not_found", "The organization cannot be resolved to an installation.");
  if (installation.blocked) return refuse("installation_blocked", "The installation of this organization is blocked.");
  if (!caller) return refuse("org_access_denied", "You are not a member of this organization.");
  if (need === "read") return null;
  if (caller.role !== "admin") {
    const what = need === "write" ? "change members" : "do this";
    return refuse("not_org_admin", `Only an admin of the organization can ${what}.`);
  }
  if (need === "write" && !canManageMembers(installation)) {
    return refuse(
      "subscription_required",
      "Changing members needs an active Team or Pro subscription billed through the service.",
    );
  }
  return null;
}

/** One guarded change: a pair or both pairs of section 4. */
export interface MemberChange {
  githubUserId: string;
  seat?: boolean;
  expectedSeat?: boolean;
  role?: Role;
  expectedRole?: Role;
}

export interface MemberUpdate {
  githubUserId: string;
  before: MemberState;
  after: MemberState;
}

export interface ChangeFacts {
  /** The current state of a member, or undefined when there is no such member. */
  member: (githubUserId: string) => MemberFacts | undefined;
  purchasedSeats: number;
  seatsUsed: number;
  adminCount: number;
}

/**
 * Judges a list of changes as a whole (a single PATCH is a list of one): every change applies or
 * none. The first failing rule decides the answer, in this order: unknown member (404), stale
 * guards (409, every one named), a bot made admin (422), no admin left afterwards (409), seats:
 * the net seats turned on must fit the purchased ones (409). Turning seats off is always allowed.
 * `path` names a field of the i-th change in `details` (`expectedSeat`, or `changes.3.expectedSeat`).
 */
export function decideMemberChanges(
  facts: ChangeFacts,
  changes: readonly MemberChange[],
  path: (index: number, field: string) => string,
): { ok: true; updates: MemberUpdate[]; availableSeats: number } | Refusal {
  const current: MemberFacts[] = [];
  for (const [i, change] of changes.entries()) {
    const member = facts.member(change.githubUserId);
    if (!member) {
      return refuse("member_not_found", "No member with this githubUserId in the organization.", [
        { path: path(i, "githubUserId"), message: "is not a member of the organization" },
      ]);
    }
    current.push(member);
  }

  const mismatches: ErrorDetail[] = [];
  changes.forEach((change, i) => {
    const before = current[i] as MemberFacts;
    if (change.seat !== undefined && change.expectedSeat !== before.seat) {
      mismatches.push({ path: path(i, "expectedSeat"), message: `current value is ${before.seat}` });
    }
    if (change.role !== undefined && change.expectedRole !== before.role) {
      mismatches.push({ path: path(i, "expectedRole"), message: `current value is ${before.role}` });
    }
  });
  if (mismatches.length > 0) {
    return refuse(
      "expected_value_mismatch",
      "The member changed since you read it. Read it again and retry with the current values.",
      mismatches,
    );
  }

  const updates: MemberUpdate[] = changes.map((change, i) => {
    const before = current[i] as MemberFacts;
    return {
      githubUserId: change.githubUserId,
      before: { seat: before.seat, role: before.role },
      after: { seat: change.seat ?? before.seat, role: change.role ?? before.role },
    };
  });

  const botAdmin = updates.findIndex((u, i) => u.after.role === "admin" && u.before.role !== "admin" && current[i]?.isBot);
  if (botAdmin >= 0) {
    return refuse("bot_cannot_be_admin", "A bot account cannot be an admin.", [
      { path: path(botAdmin, "role"), message: "bot accounts cannot be admins" },
    ]);
  }

  const demoted = updates.findIndex((u) => u.before.role === "admin" && u.after.role !== "admin");
  const adminsAfter = facts.adminCount + updates.reduce((n, u) => n + admin(u.after) - admin(u.before), 0);
  if (demoted >= 0 && adminsAfter <= 0) {
    return refuse("last_admin", "The organization's last admin cannot lose the admin role. Make another member admin first.", [
      { path: path(demoted, "role"), message: "this member is the last admin" },
    ]);
  }

  const turnedOn = updates.findIndex((u) => u.after.seat && !u.before.seat);
  const seatsAfter = facts.seatsUsed + updates.reduce((n, u) => n + Number(u.after.seat) - Number(u.before.seat), 0);
  if (turnedOn >= 0 && seatsAfter > facts.purchasedSeats) {
    return refuse("no_seat_available", "No seat is available: every purchased seat is taken. This operation never buys seats.", [
      { path: path(turnedOn, "seat"), message: `all ${facts.purchasedSeats} purchased seats are in use` },
    ]);
  }
  return { ok: true, updates, availableSeats: Math.max(0, facts.purchasedSeats - seatsAfter) };
}

const admin = (s: MemberState): number => (s.role === "admin" ? 1 : 0);

export const isChange = (u: MemberUpdate): boolean => u.before.seat !== u.after.seat || u.before.role !== u.after.role;

/** The three capability flags of an organization entry (contract section 8, `GET /api/v1/organizations`). */
export interface Capabilities {
  canManageSeats: boolean;
  canManageRoles: boolean;
  canExportAnalytics: boolean;
}

/**
 * What a member may do in an organization: seats and roles need an admin of an unblocked
 * organization with an active Team or Pro subscription billed through the service (what PATCH
 * needs); the analytics export needs any member of an unblocked Pro organization (what the export
 * needs). A blocked installation gets all three false.
 */
export function capabilities(installation: InstallationFacts, member: MemberState): Capabilities {
  const manage = member.role === "admin" && canManageMembers(installation);
  return {
    canManageSeats: manage,
    canManageRoles: manage,
    canExportAnalytics: !installation.blocked && installation.plan === "pro",
  };
}
