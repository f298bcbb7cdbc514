import { z } from "zod";
import { badRequest, type ErrorDetail } from "../lib/errors";
import { foldName } from "../lib/names";
import { parseDateOnly, parseTimestamp } from "../lib/time";
import { PageSize } from "../schemas/common";
import { decodeCursor } from "./cursor";

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 100;
const MAX_LENGTH = 255;
const tooLong = `must be at most ${MAX_LENGTH} characters`;

/** Section 3's grammar of a date bound, for the documents; the parser below also checks the calendar and the range. */
const DATE_BOUND_PATTERN = "^\\d{4}-\\d{2}-\\d{2}(?:[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2}))?$";
const DATE_RANGE = " Not before 1970-01-01T00:00:00Z; a date that does not exist (2026-02-30) or a time without a zone is 400.";

/**
 * The cursor grammar, for the documents: a timestamp, `|`, a positive id. The export issues the
 * response form (`ANALYTICS_CURSOR_OUT`); the parser takes any timestamp section 3 takes.
 */
const CURSOR_PATTERN =
  "^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2})\\|[1-9]\\d{0,15}$";

/**
 * A date bound: `YYYY-MM-DD` (the first or last millisecond of that UTC day) or a timestamp with a
 * zone. Also the audit log's `since` and `until` (contract section 21), so every date-time
 * parameter of the service reads alike.
 */
export const DateBound = (edge: "start" | "end", description: string, example: string) =>
  z
    .string()
    .max(MAX_LENGTH, tooLong)
    .transform((value, ctx) => {
      const parsed = parseDateOnly(value, edge) ?? parseTimestamp(value, "timestamp or date");
      if (parsed.kind === "ok") return parsed.ms;
      ctx.addIssue({ code: "custom", message: parsed.reason });
      return z.NEVER;
    })
    .meta({
      override: {
        type: "string",
        maxLength: MAX_LENGTH,
        pattern: DATE_BOUND_PATTERN,
        description: `${description}${DATE_RANGE}`,
        examples: [example],
      },
    });

/** `format` (contract section 10): json or csv, Accept deciding when absent (`format.ts`); also the audit and member lists' (section 21). */
export const FormatParam = z
  .enum(["json", "csv"], { error: "must be json or csv" })
  .optional()
  .meta({
    override: {
      type: "string",
      enum: ["json", "csv"],
      default: "json",
      description:
        "json (default) or csv (text/csv; charset=utf-8, RFC 4180). Without format, an Accept header that names text/csv " +
        "with a higher q-value than it gives JSON (application/json, application/* or */*) answers CSV; anything else answers JSON. " +
        "Errors are JSON either way.",
      examples: ["csv"],
    },
  });

/** Names in one list parameter: `repo` and `author` (contract section 21). */
export const MAX_LIST_NAMES = 20;
/** The list grammar, for the documents: 1 to 20 names, none empty or blank; or a blank value, ignored as section 3 says. */
const NAME_LIST_PATTERN = `^(?:\\s*|\\s*[^,\\s][^,]*(?:,\\s*[^,\\s][^,]*){0,${MAX_LIST_NAMES - 1}})$`;

/**
 * A comma-separated list of names (contract section 21: `repo`, `author`): the whole value at most
 * 255 characters after trimming, at most 20 names, each trimmed and none empty (`a,,b` and a
 * trailing comma are 400). A name given twice in any case counts once (the first spelling is kept).
 * One name means what the single-name parameter always meant.
 */
export const NameList = (what: string, description: string, example: string) =>
  z
    .string()
    .max(MAX_LENGTH, tooLong)
    .transform((value, ctx) => {
      const names = value.split(",").map((name) => name.trim());
      if (names.some((name) => name === "")) {
        ctx.addIssue({ code: "custom", message: "must not have an empty name (two commas in a row, or one at either end)" });
        return z.NEVER;
      }
      if (names.length > MAX_LIST_NAMES) {
        ctx.addIssue({ code: "custom", message: `must list at most ${MAX_LIST_NAMES} ${what}` });
        return z.NEVER;
      }
      const folded = new Map<string, string>();
      for (const name of names) if (!folded.has(foldName(name))) folded.set(foldName(name), name);
      return [...folded.values()];
    })
    .meta({
      override: {
        type: "string",
        maxLength: MAX_LENGTH,
        pattern: NAME_LIST_PATTERN,
        description: `${description} Names are trimmed; an empty name (a,,b or a trailing comma) is 400; a name listed twice counts once.`,
        examples: [example],
      },
    });

/**
 * Query parameters of `GET /api/analytics/v1/prs` (contract section 3). The registry has already
 * trimmed them, dropped blank ones and refused repeated ones; this schema decides the rest.
 */
export const AnalyticsQuery = z.object({
  org: z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : undefined) })
    .min(1, "is required")
    .max(MAX_LENGTH, tooLong)
    .meta({
      description: "GitHub organization or owner, 1 to 255 characters after trimming; case-insensitive. Rows echo it as sent.",
      example: "acme",
    }),
  repo: NameList(
    "repositories",
    "Only these repositories: one name, or a comma-separated list of at most 20 (case-insensitive). Blank is ignored.",
    "api,web",
  ).optional(),
  author: NameList(
    "authors",
    "Only pull requests by these authors: one GitHub login, or a comma-separated list of at most 20 (case-insensitive). " +
      "An unknown login matches nothing. Blank is ignored.",
    "ada-admin,grace",
  ).optional(),
  startDate: DateBound(
    "start",
    "Start of the review window, inclusive: YYYY-MM-DD (00:00:00.000Z UTC) or an ISO 8601 timestamp with Z or ±HH:MM.",
    "2026-09-01",
  ).optional(),
  endDate: DateBound(
    "end",
    "End of the review window, inclusive: YYYY-MM-DD (through 23:59:59.999Z UTC) or an ISO 8601 timestamp with Z or ±HH:MM.",
    "2026-11-30T23:59:59Z",
  ).optional(),
  perPage: PageSize(MAX_PER_PAGE, DEFAULT_PER_PAGE),
  cursor: z
    .string()
    .max(MAX_LENGTH, tooLong)
    .transform((value, ctx) => {
      const cursor = decodeCursor(value);
      if (cursor) return cursor;
      ctx.addIssue({ code: "custom", message: "is not a cursor this API issued" });
      return z.NEVER;
    })
    .optional()
    .meta({
      override: {
        type: "string",
        maxLength: MAX_LENGTH,
        pattern: CURSOR_PATTERN,
        description:
          "The nextCursor of the previous page, unchanged (URL-encoded). Keep org, repo, author and the window the same.",
        examples: ["2026-11-20T16:44:17.054Z|137"],
      },
    }),
  format: FormatParam,
});
export type AnalyticsQuery = z.output<typeof AnalyticsQuery>;

/** With only startDate the window ends now, so a future startDate is an invalid range too. */
export function checkDateRange(q: AnalyticsQuery, now: number): void {
  if (q.startDate === undefined || q.startDate <= (q.endDate ?? now)) return;
  const message = q.endDate === undefined ? "must not be in the future when endDate is not given" : "must not be after endDate";
  throw badRequest("Invalid date range: startDate is after endDate.", [{ path: "startDate", message }]);
}

/** The sentence of a 400: the kind of failure when there is only one. */
export function invalidQueryMessage(details: readonly ErrorDetail[]): string {
  const [only] = details;
  if (details.length === 1 && only?.path === "cursor") return "Invalid cursor.";
  if (details.length === 1 && only?.path === "org" && only.message === "is required") return "The org parameter is required.";
  return "Invalid query parameters.";
}
