import type { MemberUpdate } from "../rules/members";
import type { AuditActor, AuditKey } from "../schemas/audit";
import type { ChangeOrigin } from "./answers";
import { auditAction } from "./github-changes";
import { tickMembershipClock } from "./member-index";
import type { MemberRow } from "./schema";
import { appendAudit } from "./store/audit-log";
import type { Db } from "./store/db";
import { rememberOperation } from "./store/ledgers";
import { deleteMember, getMember, putMember, setMemberState } from "./store/members";

/**
 * The writes of members, inside the caller's transaction, each with its audit entries: the one
 * write and the one removal of a member's synchronised state (control plane and GitHub, also
 * raising the membership clock the member's index is then told), and the guarded changes of the
 * API that the rules allowed.
 */

const stateOf = (row: MemberRow) => ({ seat: row.seat, role: row.role });

const auditOrigin = (origin: ChangeOrigin) => ({ ...origin, actor: origin.actor ?? null });

/** Stores the member; returns the row and the clock. */
export function writeMember(
  db: Db,
  githubUserId: string,
  input: Omit<MemberRow, "githubUserId">,
  origin: ChangeOrigin,
): { row: MemberRow; version: number } {
  const before = getMember(db, githubUserId);
  const row: MemberRow = { githubUserId, ...input };
  putMember(db, row);
  const action = auditAction(before && stateOf(before), stateOf(row));
  if (action) {
    appendAudit(db, Date.now(), auditOrigin(origin), [
      { action, githubUserId, before: before ? stateOf(before) : null, after: stateOf(row) },
    ]);
  }
  return { row, version: tickMembershipClock(db) };
}

/** Removes the member, if there is one (idempotent); returns the clock. */
export function removeMember(db: Db, githubUserId: string, origin: ChangeOrigin): number {
  const before = getMember(db, githubUserId);
  const action = auditAction(before && stateOf(before), null);
  if (before && action) {
    deleteMember(db, githubUserId);
    appendAudit(db, Date.now(), auditOrigin(origin), [{ action, githubUserId, before: stateOf(before), after: null }]);
  }
  return tickMembershipClock(db);
}

/**
 * Writes the guarded changes that changed something (`isChange`), remembers the operation for its
 * retries and audits each change (`member.updated`, source `api`, the caller as actor); writes
 * nothing for an empty list.
 */
export function writeMemberChanges(
  db: Db,
  changed: readonly MemberUpdate[],
  request: { operationId: string; correlationId: string; actor: AuditActor | null; key: AuditKey | null; ip: string | null },
  now: number,
): void {
  for (const update of changed) setMemberState(db, update.githubUserId, update.after);
  if (changed.length === 0) return;
  rememberOperation(db, request.operationId, now);
  const entries = changed.map((u) => ({ action: "member.updated" as const, ...u }));
  const { correlationId, actor, key, ip } = request;
  appendAudit(db, now, { source: "api", correlationId, actor, key, ip }, entries);
}
