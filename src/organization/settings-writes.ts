import type { DurableResult } from "../lib/durable-call";
import { ok } from "../lib/durable-call";
import { formatInstant } from "../lib/time";
import { memberAccess } from "../rules/members";
import { decideSettingsChange, type SeatAssignment } from "../rules/seats";
import type { AuditActor } from "../schemas/audit";
import type { OrganizationSettings, SeatRequestList, SettingsChangeResult } from "../schemas/settings";
import type { ChangeRequest } from "./answers";
import type { InstallationRow, MemberRow } from "./schema";
import { appendAudit } from "./store/audit-log";
import type { Db } from "./store/db";
import { operationApplied, rememberOperation } from "./store/ledgers";
import { seatRequestPage } from "./store/seat-requests";
import { putSeatAssignment, seatAssignment } from "./store/settings";

/** Who calls: a member, or one of the organization's own keys acting as an admin (`org-keys.ts` `callerOf`). */
interface Caller {
  member: MemberRow | undefined;
  isKey: boolean;
}

/**
 * The organization's settings and waiting list (contract section 20), inside the caller's
 * transaction: the access rule of the member routes, the guard, the write and its audit entry.
 */

/** `GET .../settings`: any member. */
export function readSettings(
  db: Db,
  installation: InstallationRow | undefined,
  caller: Caller,
): DurableResult<OrganizationSettings> {
  const refused = memberAccess(installation, caller.member, "read");
  return refused ?? ok({ seatAssignment: seatAssignment(db) });
}

/** `GET .../seat-requests`: admins. */
export function readSeatRequests(
  db: Db,
  installation: InstallationRow | undefined,
  caller: Caller,
): DurableResult<SeatRequestList> {
  const refused = memberAccess(installation, caller.member, "admin");
  if (refused) return refused;
  const data = seatRequestPage(db).map((r) => ({ ...r, since: formatInstant(r.since) }));
  return ok({ data });
}

/**
 * `PATCH .../settings`: the PATCH preconditions of section 4 (admin, active subscription), the
 * guard, then the write with its `settings.updated` entry; a retried operation answers unchanged.
 */
export function updateSettings(
  db: Db,
  installation: InstallationRow | undefined,
  { member: caller, isKey }: Caller,
  change: { seatAssignment: SeatAssignment; expectedSeatAssignment: SeatAssignment },
  request: { operationId: string } & ChangeRequest,
  now: number,
): DurableResult<SettingsChangeResult> {
  const refused = memberAccess(installation, caller, "write");
  if (refused || !caller) return refused ?? { ok: false, code: "internal_error", message: "An unexpected error occurred." };
  const current = seatAssignment(db);
  if (operationApplied(db, request.operationId)) {
    return ok({ before: { seatAssignment: current }, after: { seatAssignment: current }, changed: false });
  }
  const decision = decideSettingsChange(current, change);
  if (!decision.ok) return decision;
  const answer = {
    before: { seatAssignment: decision.before },
    after: { seatAssignment: decision.after },
    changed: decision.changed,
  };
  if (!decision.changed) return ok(answer);
  putSeatAssignment(db, decision.after);
  rememberOperation(db, request.operationId, now);
  // An organization key is nobody: its change carries actor null and the key (contract section 18).
  const actor: AuditActor | null = isKey ? null : { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin };
  const { correlationId, key, ip } = request;
  appendAudit(db, now, { source: "api", correlationId, actor, key, ip }, [
    {
      action: "settings.updated",
      githubUserId: "",
      before: null,
      after: null,
      setting: { before: decision.before, after: decision.after },
    },
  ]);
  return ok(answer);
}
