import type { DurableResult } from "../lib/durable-call";
import { formatInstant } from "../lib/time";
import { capabilities, isChange, type MemberState, type MemberUpdate } from "../rules/members";
import type { SeatAssignment } from "../rules/seats";
import type { AuditEntry } from "../schemas/audit";
import type { Role } from "../schemas/common";
import type { Member, MemberUpdateResult } from "../schemas/member";
import type { Organization, OrganizationEntry } from "../schemas/organization";
import type { AuditRows, DirectoryIdentity, MemberRows } from "./answers";
import type { AuditRow, InstallationRow, MemberRow } from "./schema";

type KeyScopes = NonNullable<NonNullable<AuditEntry["key"]>["scopes"]>;

/** Stored rows as the wire (and the directory in D1) sees them, and the object's own refusals. */

export const orgNotFound = <T>(): DurableResult<T> => ({
  ok: false,
  code: "org_not_found",
  message: "The organization cannot be resolved to an installation.",
});

/** Unreachable: memberAccess refuses a missing installation. */
export const unreachable = (): DurableResult<never> => ({
  ok: false,
  code: "internal_error",
  message: "An unexpected error occurred.",
});

export const toOrganization = (row: InstallationRow): Organization => ({
  login: row.login,
  installationId: row.installationId,
  installedAt: formatInstant(row.installedAt),
  blocked: row.blocked,
  plan: row.plan,
  subscription: {
    status: row.subscriptionStatus,
    billedThroughService: row.billedThroughService,
    purchasedSeats: row.purchasedSeats,
  },
});

const stateOrNull = (seat: boolean | null, role: Role | null): MemberState | null =>
  seat === null || role === null ? null : { seat, role };

const settingOrNull = (seatAssignment: SeatAssignment | null) => (seatAssignment === null ? null : { seatAssignment });

export const toAuditEntry = (row: AuditRow): AuditEntry => {
  const setting = row.action === "settings.updated";
  return {
    id: String(row.id),
    at: formatInstant(row.at),
    action: row.action,
    actor: row.actorUserId === null ? null : { githubUserId: row.actorUserId, githubLogin: row.actorLogin ?? "" },
    source: row.source,
    githubUserId: setting || row.action.startsWith("key.") ? null : row.githubUserId,
    before: setting ? settingOrNull(row.beforeSeatAssignment) : stateOrNull(row.beforeSeat, row.beforeRole),
    after: setting ? settingOrNull(row.afterSeatAssignment) : stateOrNull(row.afterSeat, row.afterRole),
    correlationId: row.correlationId,
    key:
      row.keyId === null
        ? null
        : {
            id: row.keyId,
            name: row.keyName ?? "",
            ...(row.keyKind === null ? {} : { kind: row.keyKind }),
            ...(row.keyScopes === null ? {} : { scopes: row.keyScopes as KeyScopes }),
          },
    ip: row.ip,
  };
};

/**
 * `workEmail` is omitted while unknown (a member GitHub announced, before a sync provides it);
 * `lastActivityAt` is the author activity read with the row (contract section 20).
 */
export const toMember = (row: MemberRow & { lastActivityAt: number | null }): Member => ({
  githubUserId: row.githubUserId,
  githubLogin: row.githubLogin,
  ...(row.workEmail === null ? {} : { workEmail: row.workEmail }),
  role: row.role,
  seat: row.seat,
  isBot: row.isBot,
  lastActivityAt: row.lastActivityAt === null ? null : formatInstant(row.lastActivityAt),
});

/** One member's entry in `GET /api/v1/organizations`, under the installation's current login. */
export const toOrganizationEntry = (installation: InstallationRow, member: MemberRow): OrganizationEntry => ({
  org: installation.login,
  plan: installation.plan,
  role: member.role,
  seat: member.seat,
  ...capabilities(installation, member),
});

/** One change's answer; `availableSeats` is the organization's after the whole list. */
export const toResult = (u: MemberUpdate, availableSeats: number): MemberUpdateResult => ({
  ...u,
  changed: isChange(u),
  availableSeats,
  // This operation never buys seats.
  purchasedQuantityChanged: false,
});

/** What the directory in D1 learns of this object; `version` is the membership clock. */
export const toDirectoryIdentity = (row: InstallationRow, version: number): DirectoryIdentity => {
  const { homeKey: home, login, accountId, installationId } = row;
  return { home, login, accountId, installationId, version };
};

/** A member page from the rows read (one past `limit` when a next page exists) and the seats. */
export function toMemberRows(
  rows: readonly (MemberRow & { loginKey: string; lastActivityAt: number | null })[],
  limit: number,
  seats: { purchased: number; used: number },
): MemberRows {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(toMember),
    next: rows.length > limit && last ? { loginKey: last.loginKey, githubUserId: last.githubUserId } : null,
    seats: { ...seats, available: Math.max(0, seats.purchased - seats.used) },
  };
}

/** An audit page from the rows read (one past `limit` when a next page exists). */
export function toAuditRows(rows: readonly AuditRow[], limit: number): AuditRows {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { data: page.map(toAuditEntry), next: rows.length > limit && last ? last.id : null };
}

/** A retry of an applied operation: each member as it is, unchanged ("desired equals current"). */
export const toReplayedResults = (rows: readonly MemberRow[], availableSeats: number): MemberUpdateResult[] =>
  rows.map(({ githubUserId, seat, role }) =>
    toResult({ githubUserId, before: { seat, role }, after: { seat, role } }, availableSeats),
  );
