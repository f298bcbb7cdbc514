import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { MemberState } from "../../rules/members";
import type { SeatAssignment } from "../../rules/seats";
import type { AuditAction, AuditActor, AuditKey, AuditSource } from "../../schemas/audit";
import { type AuditRow, auditLog } from "../schema";
import type { Db } from "./db";

/** How long audit entries are kept: older ones are deleted by every write that adds an entry. */
export const AUDIT_RETENTION_MS = 400 * 24 * 3_600_000;

/** Who and why for every entry of one write. */
export interface AuditOrigin {
  source: AuditSource;
  correlationId: string;
  actor: AuditActor | null;
  /** The key that made an API change, and the caller's address for a change over HTTP (contract section 18). */
  key?: AuditKey | null;
  ip?: string | null;
}

/** One change of one member (or, `settings.updated`, of the organization: githubUserId ""), as the audit log records it. */
export interface AuditChange {
  action: AuditAction;
  githubUserId: string;
  before: MemberState | null;
  after: MemberState | null;
  setting?: { before: SeatAssignment; after: SeatAssignment };
}

/** Appends audit entries and drops those past the retention; callers are inside the transaction of the change. */
export function appendAudit(db: Db, now: number, origin: AuditOrigin, entries: readonly AuditChange[]): void {
  for (const e of entries) {
    db.insert(auditLog)
      .values({
        at: now,
        action: e.action,
        actorUserId: origin.actor?.githubUserId ?? null,
        actorLogin: origin.actor?.githubLogin ?? null,
        source: origin.source,
        githubUserId: e.githubUserId,
        beforeSeat: e.before?.seat ?? null,
        beforeRole: e.before?.role ?? null,
        afterSeat: e.after?.seat ?? null,
        afterRole: e.after?.role ?? null,
        beforeSeatAssignment: e.setting?.before ?? null,
        afterSeatAssignment: e.setting?.after ?? null,
        correlationId: origin.correlationId,
        keyId: origin.key?.id ?? null,
        keyName: origin.key?.name ?? null,
        ip: origin.ip ?? null,
      })
      .run();
  }
  db.delete(auditLog)
    .where(lt(auditLog.at, now - AUDIT_RETENTION_MS))
    .run();
}

/** What a key.* entry records of an organization key. */
export interface AuditedKey {
  id: string;
  name: string;
  kind: "analytics" | "members";
  scopes: string[];
}

/** One key.* entry (contract section 18), inside the transaction of the key's change. */
export function appendKeyAudit(
  db: Db,
  now: number,
  origin: Omit<AuditOrigin, "key" | "source">,
  action: "key.created" | "key.regenerated" | "key.revoked",
  key: AuditedKey,
): void {
  db.insert(auditLog)
    .values({
      at: now,
      action,
      actorUserId: origin.actor?.githubUserId ?? null,
      actorLogin: origin.actor?.githubLogin ?? null,
      source: origin.actor ? "api" : "sync",
      githubUserId: "",
      correlationId: origin.correlationId,
      keyId: key.id,
      keyName: key.name,
      keyKind: key.kind,
      keyScopes: key.scopes,
      ip: origin.ip ?? null,
    })
    .run();
}

/** Up to `limit + 1` entries, newest first, below the id `before`, within the retention at `now`. */
export function auditPage(db: Db, now: number, query: { githubUserId?: string; before?: number; limit: number }): AuditRow[] {
  const a = auditLog;
  return db
    .select()
    .from(a)
    .where(
      and(
        query.githubUserId === undefined ? undefined : eq(a.githubUserId, query.githubUserId),
        query.before === undefined ? undefined : lt(a.id, query.before),
        // Past the retention even before the next write prunes it.
        sql`${a.at} >= ${now - AUDIT_RETENTION_MS}`,
      ),
    )
    .orderBy(desc(a.id))
    .limit(query.limit + 1)
    .all();
}
