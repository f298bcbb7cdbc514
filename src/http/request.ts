import { z } from "zod";
import { badRequest, type ErrorDetail, notFound } from "../lib/errors";
import { issuesToDetails } from "./validation";

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A client's `X-Correlation-Id` when well-formed, else a new UUID. */
export function correlationIdFor(request: Request): string {
  const sent = request.headers.get("X-Correlation-Id");
  return sent !== null && CORRELATION_ID.test(sent) ? sent : crypto.randomUUID();
}

/**
 * Non-canonical paths never reach a handler: empty segments (`//`), a trailing slash, encoded
 * slashes or backslashes (`%2F`, `%5C`), encoded dots and `.`/`..` segments. (The URL parser
 * resolves literal and `%2E` dot segments before the Worker sees them; this rejects whatever
 * survives.)
 */
export function isCanonicalPath(pathname: string): boolean {
  if (!pathname.startsWith("/")) return false;
  if (pathname.length > 1 && pathname.endsWith("/")) return false;
  if (pathname.includes("//") || pathname.includes("\\")) return false;
  if (/%(2f|5c|2e|00)/i.test(pathname)) return false;
  return !pathname.split("/").some((segment) => segment === "." || segment === "..");
}

type Message = (details: readonly ErrorDetail[]) => string;

/** Decodes and validates path parameters; a segment that is not valid percent-encoding is a 404. */
export function readPathParams<S extends z.ZodType>(schema: S, params: Record<string, string>, message: Message): z.output<S> {
  const decoded: Record<string, string> = {};
  for (const [name, raw] of Object.entries(params)) {
    try {
      decoded[name] = decodeURIComponent(raw);
    } catch {
      throw notFound();
    }
  }
  const result = schema.safeParse(decoded);
  if (!result.success) {
    const details = issuesToDetails(result.error.issues);
    throw badRequest(message(details), details);
  }
  return result.data;
}

/**
 * Query parameters as every route reads them (contract section 3): each known parameter at most
 * once, values trimmed before any check, blank values ignored, unknown parameters ignored. The
 * schema then sees an object of the remaining strings.
 */
export function readQuery<S extends z.ZodType>(schema: S, query: URLSearchParams, message: Message): z.output<S> {
  const names = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const details: ErrorDetail[] = [];
  const values: Record<string, string> = {};
  for (const name of names) {
    const all = query.getAll(name);
    if (all.length > 1) {
      details.push({ path: name, message: "must be given at most once" });
      continue;
    }
    const trimmed = all[0]?.trim();
    if (trimmed !== undefined && trimmed !== "") values[name] = trimmed;
  }
  const result = schema.safeParse(values);
  if (!result.success) {
    const repeated = new Set(details.map((d) => d.path));
    details.push(...issuesToDetails(result.error.issues).filter((d) => !repeated.has(d.path)));
  }
  if (details.length > 0 || !result.success) throw badRequest(message(details), details);
  return result.data;
}
