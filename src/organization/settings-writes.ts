import type { DurableResult } from "../lib/durable-call";
import { ok } from "../lib/durable-call";
import { formatInstant } from "../lib/time";
import { memberAccess } from "../rules/members";
import { decideSettingsChange, type SeatAssignment } from "../rules/seats";
import type { AuditActor } from "../schemas/audit";
import type { OrganizationSettings, SeatRequestList, SettingsChangeResult } from "../schemas/settings";
import type { InstallationRow } from "./schema";
import { appendAudit } from "./store/audit-log";
import type { Db } from "./store/db";
import { operationApplied, rememberOperation } from "./store/ledgers";
import { getMember } from "./store/members";
import { seatRequestPage } from "./store/seat-requests";
import { putSeatAssignment, seatAssignment } from "./store/settings";

/**
 * The organization's settings and waiting list (contract section 20), inside the caller's
 * transaction: the access rule of the member routes, the guard, the write and its audit entry.
 */

/** `GET .../settings`: any member. */
export function readSettings(
  db: Db,
  installation: InstallationRow | undefined,
  callerUserId: string,
): DurableResult<OrganizationSettings> {
  const refused = memberAccess(installation, getMember(db, callerUserId), "read");
  return refused ?? ok({ seatAssignment: seatAssignment(db) });
}

/** `GET .../seat-requests`: admins. */
export function readSeatRequests(
  db: Db,
  installation: InstallationRow | undefined,
  callerUserId: string,
): DurableResult<SeatRequestList> {
  const refused = memberAccess(installation, getMember(db, callerUserId), "admin");
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
  callerUserId: string,
  change: { seatAssignment: SeatAssignment; expectedSeatAssignment: SeatAssignment },
  request: { operationId: string; correlationId: string },
  now: number,
): DurableResult<SettingsChangeResult> {
  const caller = getMember(db, callerUserId);
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
  const actor: AuditActor = { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin };
  appendAudit(db, now, { source: "api", correlationId: request.correlationId, actor }, [
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
