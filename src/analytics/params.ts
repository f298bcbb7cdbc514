import { badRequest, type ErrorDetail } from "../http/errors";
import { type InstantParse, parseDateOnly, parseTimestamp } from "../lib/time";
import { type Cursor, decodeCursor } from "./cursor";

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 100;
const MAX_LENGTH = 255;
const PARAMETERS = ["org", "repo", "startDate", "endDate", "perPage", "cursor"] as const;

/** A validated analytics request; the window is resolved later, once the installation is known. */
export interface AnalyticsParams {
  /** Trimmed, as sent: echoed in every row. */
  org: string;
  repo: string | null;
  start: number | null;
  end: number | null;
  perPage: number;
  cursor: Cursor | null;
}

/**
 * Parses the query string as contract section 3 fixes it. Every offending parameter gets one
 * `details` entry; the message names the kind of failure when there is only one. Everything
 * that can be a 400 is decided here, before the organization is looked up.
 */
export function parseAnalyticsParams(query: URLSearchParams, now: number): AnalyticsParams {
  const details: ErrorDetail[] = [];
  const fail = (path: string, message: string) => {
    details.push({ path, message });
    return null;
  };
  const values = new Map<string, string>();
  for (const name of PARAMETERS) {
    const all = query.getAll(name);
    if (all.length > 1) {
      fail(name, "must be given at most once");
      continue;
    }
    const trimmed = all[0]?.trim();
    if (trimmed === undefined || trimmed === "") continue;
    if (trimmed.length > MAX_LENGTH) {
      fail(name, `must be at most ${MAX_LENGTH} characters`);
      continue;
    }
    values.set(name, trimmed);
  }
  const has = (name: string) => values.has(name) || details.some((d) => d.path === name);

  const org = values.get("org") ?? (has("org") ? null : fail("org", "is required"));

  const perPageText = values.get("perPage");
  let perPage = DEFAULT_PER_PAGE;
  if (perPageText !== undefined) {
    const n = /^\d+$/.test(perPageText) ? Number(perPageText) : Number.NaN;
    if (!(n >= 1 && n <= MAX_PER_PAGE)) fail("perPage", `must be an integer from 1 to ${MAX_PER_PAGE}`);
    else perPage = n;
  }

  const date = (name: "startDate" | "endDate", edge: "start" | "end"): number | null => {
    const text = values.get(name);
    if (text === undefined) return null;
    const parsed: InstantParse = parseDateOnly(text, edge) ?? parseTimestamp(text, "timestamp or date");
    return parsed.kind === "ok" ? parsed.ms : fail(name, parsed.reason);
  };
  const start = date("startDate", "start");
  const end = date("endDate", "end");

  const cursorText = values.get("cursor");
  const cursor =
    cursorText === undefined ? null : (decodeCursor(cursorText) ?? fail("cursor", "is not a cursor this API issued"));

  if (details.length > 0) throw badRequest(summary(details), details);
  // With only startDate the window ends now, so a future startDate is an invalid range too.
  if (start !== null && start > (end ?? now)) {
    const message = end === null ? "must not be in the future when endDate is not given" : "must not be after endDate";
    throw badRequest("Invalid date range: startDate is after endDate.", [{ path: "startDate", message }]);
  }
  return { org: org as string, repo: values.get("repo") ?? null, start, end, perPage, cursor };
}

function summary(details: ErrorDetail[]): string {
  if (details.length === 1 && details[0]?.path === "cursor") return "Invalid cursor.";
  if (details.length === 1 && details[0]?.path === "org" && details[0].message === "is required")
    return "The org parameter is required.";
  return "Invalid query parameters.";
}
