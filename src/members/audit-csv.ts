import { z } from "zod";
import { csvCell } from "../analytics/csv";
import type { AuditEntry } from "../schemas/audit";

/**
 * The audit log as CSV (contract section 21, with section 10's rules: RFC 4180, CRLF, a header
 * row, null as an empty field, text fields neutralised against spreadsheet formulas). The nested
 * `actor`, `before` and `after` become flat columns. Every field of the entry must say how it is
 * written: a field added to `AuditEntry` fails to compile here until someone decides.
 */
type Column = [name: string, kind: "text" | "number" | "instant", value: (e: AuditEntry) => string | number | boolean | null];

const FIELDS = {
  id: [["id", "number", (e) => e.id]],
  at: [["at", "instant", (e) => e.at]],
  action: [["action", "text", (e) => e.action]],
  source: [["source", "text", (e) => e.source]],
  actor: [
    ["actorGithubUserId", "number", (e) => e.actor?.githubUserId ?? null],
    ["actorGithubLogin", "text", (e) => e.actor?.githubLogin ?? null],
  ],
  githubUserId: [["githubUserId", "number", (e) => e.githubUserId]],
  githubLogin: [["githubLogin", "text", (e) => e.githubLogin]],
  before: [
    ["beforeSeat", "text", (e) => (e.before && "seat" in e.before ? e.before.seat : null)],
    ["beforeRole", "text", (e) => (e.before && "role" in e.before ? e.before.role : null)],
    ["beforeSeatAssignment", "text", (e) => (e.before && "seatAssignment" in e.before ? e.before.seatAssignment : null)],
  ],
  after: [
    ["afterSeat", "text", (e) => (e.after && "seat" in e.after ? e.after.seat : null)],
    ["afterRole", "text", (e) => (e.after && "role" in e.after ? e.after.role : null)],
    ["afterSeatAssignment", "text", (e) => (e.after && "seatAssignment" in e.after ? e.after.seatAssignment : null)],
  ],
  correlationId: [["correlationId", "text", (e) => e.correlationId]],
  key: [
    ["keyId", "text", (e) => e.key?.id ?? null],
    ["keyName", "text", (e) => e.key?.name ?? null],
  ],
  ip: [["ip", "text", (e) => e.ip]],
} satisfies Record<keyof AuditEntry, Column[]>;

const COLUMNS: Column[] = Object.values(FIELDS).flat();

export const AUDIT_CSV_HEADER = COLUMNS.map(([name]) => name).join(",");

/** A page of entries as CSV: the header row, then one record per entry, each ending with CRLF. */
export function toAuditCsv(entries: readonly AuditEntry[]): string {
  const lines = [AUDIT_CSV_HEADER];
  for (const entry of entries) lines.push(COLUMNS.map(([, kind, value]) => csvCell(kind, value(entry))).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

export const AuditCsv = z
  .string()
  .max(200_000)
  .regex(new RegExp(`^${AUDIT_CSV_HEADER}\\r\\n(?:[\\s\\S]*\\r\\n)?$`))
  .meta({
    description:
      "RFC 4180 CSV with CRLF line ends: a header row, then one record per entry of the page. actor, before, after and key are " +
      "flattened (actorGithubUserId, actorGithubLogin, beforeSeat, beforeRole, beforeSeatAssignment, afterSeat, afterRole, " +
      "afterSeatAssignment, keyId, keyName); null is an empty field; seats are true or " +
      "false. Text fields that a spreadsheet would run as a formula get a leading single quote (the analytics export's rule).",
  });
