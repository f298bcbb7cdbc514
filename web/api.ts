/**
 * The page's only way to the service: same-origin JSON calls to /app/api and /auth. State changes
 * carry the session's CSRF token (read once from /app/api/session); the browser adds the cookie
 * and the Origin itself.
 *
 * Typed by the internal OpenAPI document: `api-schema.d.ts` is generated from it by
 * `npm run openapi` (committed; `npm run openapi -- --check` fails when stale), so a path, a
 * method, a request body or a field of an answer the API no longer has fails `tsc -p web`.
 */
import type { components, paths } from "./api-schema";

/** A schema of the internal document by name (`Schema<"MemberPage">`). */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/** The methods the document has for `P`. */
type MethodOf<P extends keyof paths> = {
  [M in Method]: paths[P][Lowercase<M> & keyof paths[P]] extends undefined ? never : M;
}[Method];
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][Lowercase<M> & keyof paths[P]]>;
type Json<R> = R extends { content: { "application/json": infer B } } ? B : undefined;
type Success<O> = O extends { responses: infer R } ? Json<R[Extract<keyof R, 200 | 201 | 204>]> : never;
type Body<O> = O extends { requestBody: { content: { "application/json": infer B } } } ? B : undefined;
type PathParams<O> = O extends { parameters: { path: infer A } } ? A : undefined;
type Options<O> = (PathParams<O> extends undefined ? { path?: undefined } : { path: PathParams<O> }) &
  (Body<O> extends undefined ? { body?: undefined } : { body: Body<O> }) & { query?: URLSearchParams };
type Args<O> = object extends Options<O> ? [options?: Options<O>] : [options: Options<O>];

/** The JSON answer of `method path` (undefined for a 204), as the document describes it. */
export type Answer<P extends keyof paths, M extends MethodOf<P>> = Success<Operation<P, M>>;

/** The JSON request body of `method path`, as the document describes it. */
export type RequestBody<P extends keyof paths, M extends MethodOf<P>> = Body<Operation<P, M>>;

export type SessionInfo = Answer<"/app/api/session", "GET">;

/** An error answer of the service, with its stable code (the members envelope). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

let csrfToken = "";

/**
 * `method path` of the document, `{name}` in the path filled from `options.path`, `options.query`
 * appended, `options.body` sent as JSON: the answer as the document types it, or an ApiError.
 */
export async function api<P extends keyof paths, M extends MethodOf<P>>(
  method: M,
  path: P,
  ...[options]: Args<Operation<P, M>>
): Promise<Answer<P, M>> {
  const {
    path: params,
    query,
    body,
  } = (options ?? {}) as { path?: Record<string, string | number>; query?: URLSearchParams; body?: unknown };
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params?.[name] ?? "")));
  const search = query && query.size > 0 ? `?${query}` : "";
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRF-Token"] = csrfToken;
  const res = await fetch(filled + search, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
  if (res.status === 204) return undefined as Answer<P, M>;
  const json = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) {
    const error = (json as { error?: { code?: string; message?: string; details?: [] } } | null)?.error;
    throw new ApiError(
      res.status,
      error?.code ?? "unknown",
      error?.message ?? `The service answered ${res.status}.`,
      error?.details,
    );
  }
  return json as Answer<P, M>;
}

/** The signed-in user, or null (no session, or it ended). */
export async function loadSession(): Promise<SessionInfo | null> {
  try {
    const info = await api("GET", "/app/api/session");
    csrfToken = info.csrfToken;
    return info;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export const signOut = () => api("POST", "/auth/sign-out");

/** Sends a signed-out visitor of an app page to the landing page. */
export function toLanding(): void {
  window.location.assign("/");
}

/** The app's answers to a refused request, in words a person acts on. */
export function explain(error: unknown): string {
  if (!(error instanceof ApiError)) return "The service could not be reached. Check your connection and try again.";
  switch (error.code) {
    case "unauthenticated":
      return "Your session has ended. Sign in again.";
    case "csrf_failed":
      return "The request was refused as possibly forged. Reload the page and try again.";
    case "expected_value_mismatch":
      return "Someone changed this member meanwhile. The row now shows the current values; make your change again if you still want it.";
    case "no_seat_available":
      return "No seat is free: every purchased seat is taken. Turn another member's seat off first, or buy more seats.";
    case "last_admin":
      return "This is the organization's last admin. Make someone else an admin first.";
    case "bot_cannot_be_admin":
      return "A bot account cannot be an admin.";
    case "not_org_admin":
      return "Only admins of this organization can do this.";
    case "subscription_required":
      return "Seats and roles can be changed only with an active Team or Pro subscription billed through the service.";
    case "installation_blocked":
      return "This organization's installation is blocked.";
    case "org_access_denied":
      return "You are not a member of this organization.";
    case "org_not_found":
      return "This organization is not installed.";
    case "member_not_found":
      return "This member has left the organization.";
    case "rate_limited":
      return "Too many requests: wait a moment and try again.";
    default:
      return error.message;
  }
}

/** "2026-11-02 09:30 UTC": dates are shown in UTC, as the API gives them. */
export function formatDate(iso: string | null, { hour = false } = {}): string {
  if (iso === null) return "never";
  const d = iso.slice(0, 10);
  const t = iso.slice(11, hour ? 13 : 16);
  return hour ? `${d} ${t}:00 UTC` : `${d} ${t} UTC`;
}
