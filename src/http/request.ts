import type { z } from "zod";
import { badRequest, type ErrorDetail, notFound } from "./errors";
import { issuesToDetails } from "./validation";

/** What every handler receives besides the request. */
export interface RequestContext {
  env: Env;
  ctx: ExecutionContext;
  correlationId: string;
  url: URL;
}

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

/** Decodes and validates path parameters; a segment that is not valid percent-encoding is a 404. */
export function pathParams<S extends z.ZodType>(schema: S, params: Record<string, string>): z.output<S> {
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
    const details: ErrorDetail[] = issuesToDetails(result.error.issues);
    throw badRequest("Invalid path parameters.", details);
  }
  return result.data;
}
