import type { ChangeOrigin } from "./answers";
import { auditAction } from "./github-changes";
import { tickMembershipClock } from "./member-index";
import type { MemberRow } from "./schema";
import { appendAudit } from "./store/audit-log";
import type { Db } from "./store/db";
import { deleteMember, getMember, putMember } from "./store/members";

/**
 * The one write and the one removal of a member's synchronised state (control plane and GitHub),
 * inside the caller's transaction: the member, its audit entry (`auditAction`) and the membership
 * clock the member's index is then told.
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
