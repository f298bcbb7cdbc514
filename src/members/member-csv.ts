import { z } from "zod";
import { csvCell } from "../analytics/csv";
import type { Member } from "../schemas/member";

/**
 * The member list as CSV (contract section 21, with section 10's rules: RFC 4180, CRLF, a header
 * row, an unknown `workEmail` as an empty field, text neutralised against spreadsheet formulas).
 * Every field of `Member` must say how it is written: a field added there fails to compile here
 * until someone decides.
 */
const COLUMNS = {
  githubUserId: "number",
  githubLogin: "text",
  workEmail: "text",
  role: "text",
  seat: "text",
  isBot: "text",
  lastActivityAt: "instant",
} as const satisfies Record<keyof Member, "text" | "number" | "instant">;

const NAMES = Object.keys(COLUMNS) as (keyof Member)[];

export const MEMBER_CSV_HEADER = NAMES.join(",");

/** A page of members as CSV: the header row, then one record per member, each ending with CRLF. */
export function toMemberCsv(members: readonly Member[]): string {
  const lines = [MEMBER_CSV_HEADER];
  for (const member of members) lines.push(NAMES.map((name) => csvCell(COLUMNS[name], member[name] ?? null)).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

export const MemberCsv = z
  .string()
  .max(200_000)
  .regex(new RegExp(`^${MEMBER_CSV_HEADER}\\r\\n(?:[\\s\\S]*\\r\\n)?$`))
  .meta({
    description:
      "RFC 4180 CSV with CRLF line ends: a header row of Member's fields in order, then one record per member of the page. " +
      "An unknown workEmail and a null lastActivityAt are empty fields; seat and isBot are true or false. Text fields that a spreadsheet would run as a " +
      "formula get a leading single quote (the analytics export's rule). The seats summary is JSON only.",
  });
