import { z } from "zod";
import type { MemberCursor } from "../organization/store/members";
import { GithubUserId, LIST_CURSOR, PageSize, Role } from "../schemas/common";

/**
 * Query parameters of the section 8 lists. The registry has already trimmed them, dropped blank
 * ones and refused repeated ones; these schemas decide the rest. Cursors are opaque to callers:
 * base64url of what the keyset needs, decoded and checked here, so a cursor this API did not
 * issue is a 400 "Invalid cursor." and never reaches storage.
 */

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/** Organization and audit-log cursors (contract section 8: at most 255 characters). */
export const MAX_CURSOR = 255;
/**
 * Member cursors carry the last member's lower-cased login, and the control plane accepts logins
 * of up to 255 characters of any script, so their cursor may be longer (GitHub's own 39-character
 * logins give cursors under 80).
 */
export const MAX_MEMBER_CURSOR = 2048;

export const Limit = PageSize(MAX_LIMIT, DEFAULT_LIMIT);

/** `inactiveDays` of the member list (contract section 20): 1 to 3650. */
export const MAX_INACTIVE_DAYS = 3650;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const toBase64Url = (text: string): string => {
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

const fromBase64Url = (value: string): string | null => {
  if (!/^[A-Za-z0-9_-]+$/.test(value) || value.length % 4 === 1) return null;
  try {
    const binary = atob(value.replace(/-/g, "+").replace(/_/g, "/"));
    const text = decoder.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
    // Only the canonical form: one cursor, one spelling.
    return toBase64Url(text) === value ? text : null;
  } catch {
    return null;
  }
};

/** A cursor parameter: at most `max` characters that `decode` accepts, else "is not a cursor this API issued". */
const cursorParam = <T>(max: number, decode: (value: string) => T | null, description: string) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .transform((value, ctx) => {
      const cursor = decode(value);
      if (cursor !== null) return cursor;
      ctx.addIssue({ code: "custom", message: "is not a cursor this API issued" });
      return z.NEVER;
    })
    .optional()
    .meta({ override: { type: "string", maxLength: max, pattern: LIST_CURSOR.source, description } });

/**
 * Organizations: after this lower-cased login and home key (`directory/resolve.ts`). Both are the
 * same for an organization never renamed, and then the cursor holds one (the form cursors had
 * before renames).
 */
export interface OrgCursor {
  loginKey: string;
  orgKey: string;
}
export const encodeOrgCursor = (c: OrgCursor): string =>
  toBase64Url(c.loginKey === c.orgKey ? `o:${c.orgKey}` : `o:${c.loginKey} ${c.orgKey}`);
const decodeOrgCursor = (value: string): OrgCursor | null => {
  const text = fromBase64Url(value);
  if (!text?.startsWith("o:") || text.length <= 2) return null;
  const [loginKey = "", orgKey = loginKey] = text.slice(2).split(" ", 2);
  return loginKey === "" || orgKey === "" ? null : { loginKey, orgKey };
};

export const encodeMemberCursor = (c: MemberCursor): string => toBase64Url(`m:${c.githubUserId}:${c.loginKey}`);
const decodeMemberCursor = (value: string): MemberCursor | null => {
  const match = /^m:(\d{1,20}):([\s\S]+)$/.exec(fromBase64Url(value) ?? "");
  return match ? { githubUserId: match[1] as string, loginKey: match[2] as string } : null;
};

/** Audit log: entries older (smaller id) than this one. */
export const encodeAuditCursor = (id: number): string => toBase64Url(`a:${id}`);
const decodeAuditCursor = (value: string): number | null => {
  const match = /^a:([1-9]\d{0,15})$/.exec(fromBase64Url(value) ?? "");
  return match && Number.isSafeInteger(Number(match[1])) ? Number(match[1]) : null;
};

const CURSOR_HELP = "The nextCursor of the previous page, unchanged (URL-encoded).";

/** `GET /api/v1/organizations`. */
export const OrganizationListQuery = z.object({
  limit: Limit,
  cursor: cursorParam(MAX_CURSOR, decodeOrgCursor, CURSOR_HELP),
});
export type OrganizationListQuery = z.output<typeof OrganizationListQuery>;

/** `GET /api/v1/organizations/{org}/members`. */
export const MemberListQuery = z.object({
  role: Role.optional().meta({ description: "Only members with this role." }),
  seat: z
    .string()
    .transform((value, ctx) => {
      if (value === "true" || value === "false") return value === "true";
      ctx.addIssue({ code: "custom", message: "must be true or false" });
      return z.NEVER;
    })
    .optional()
    .meta({ override: { type: "boolean", description: "Only members holding (true) or not holding (false) a seat." } }),
  search: z.string().max(100, "must be 1 to 100 characters").optional().meta({
    description: "Case-insensitive substring of githubLogin or workEmail, 1 to 100 characters after trimming.",
    example: "max",
  }),
  inactiveDays: z
    .string()
    .max(255, "must be at most 255 characters")
    .transform((value, ctx) => {
      const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (n >= 1 && n <= MAX_INACTIVE_DAYS) return n;
      ctx.addIssue({ code: "custom", message: `must be an integer from 1 to ${MAX_INACTIVE_DAYS}` });
      return z.NEVER;
    })
    .optional()
    .meta({
      override: {
        type: "integer",
        minimum: 1,
        maximum: MAX_INACTIVE_DAYS,
        description:
          "Only members whose lastActivityAt is null or older than this many days (decimal digits). Ask again with the " +
          "same value to walk the pages: the boundary is now minus the days at each page.",
        example: 90,
      },
    }),
  limit: Limit,
  cursor: cursorParam(MAX_MEMBER_CURSOR, decodeMemberCursor, `${CURSOR_HELP} Keep the same filters.`),
});
export type MemberListQuery = z.output<typeof MemberListQuery>;

/** `GET /api/v1/organizations/{org}/audit-log`. */
export const AuditLogQuery = z.object({
  githubUserId: GithubUserId.optional().meta({ description: "Only entries about this member." }),
  limit: Limit,
  cursor: cursorParam(MAX_CURSOR, decodeAuditCursor, `${CURSOR_HELP} Keep the same filter.`),
});
export type AuditLogQuery = z.output<typeof AuditLogQuery>;

/** The sentence of a 400: "Invalid cursor." when that is the only problem. */
export function invalidListQueryMessage(details: readonly { path: string }[]): string {
  return details.length === 1 && details[0]?.path === "cursor" ? "Invalid cursor." : "Invalid query parameters.";
}
