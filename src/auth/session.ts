import { callDurable, type DurableResult, unwrap } from "../lib/durable-call";
import { AppError } from "../lib/errors";
import { type QuotaVerdict, quotaPolicy } from "../rules/quota";
import { SESSION_ABSOLUTE_MS } from "../rules/sessions";
import type { KeyKind } from "../schemas/key-kind";
import type { User } from "../schemas/user";
import type { SessionVerdict } from "./user-object";
import { userStub } from "./user-stub";

/**
 * Browser sessions of the web app (contract section 13). The cookie holds the user's id (which
 * names the Durable Object to ask, so no lookup store is needed) and a random 256-bit token; the
 * object keeps only the token's SHA-256 and is the authority on every request, so sign-out and
 * blocking apply on the next one. The id is no secret: it is the holder's own.
 */

/** `__Host-`: the browser only accepts it Secure, from this host, with `Path=/` (no subdomain can set it). */
export const SESSION_COOKIE = "__Host-session";

export type SessionCookie = { kind: "missing" } | { kind: "malformed" } | { kind: "session"; userId: string; token: string };

const COOKIE_VALUE = /^(\d{1,20})\.([A-Za-z0-9_-]{43})$/;

/** The session cookie among a `Cookie` header's pairs. */
export function parseSessionCookie(header: string | null): SessionCookie {
  if (header === null) return { kind: "missing" };
  const pair = header
    .split(";")
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${SESSION_COOKIE}=`));
  if (pair === undefined) return { kind: "missing" };
  const match = COOKIE_VALUE.exec(pair.slice(SESSION_COOKIE.length + 1));
  if (!match) return { kind: "malformed" };
  return { kind: "session", userId: match[1] as string, token: match[2] as string };
}

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** 32 bytes from the CSPRNG, base64url (43 characters). */
const randomToken = (): string => base64url(crypto.getRandomValues(new Uint8Array(32)));

export async function hashSessionToken(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The `Set-Cookie` value of a new session; the browser drops it when the session's absolute life ends. */
const cookieHeader = (value: string, maxAgeSeconds: number): string =>
  `${SESSION_COOKIE}=${value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;

/** The `Set-Cookie` that removes the session cookie (sign-out, or a cookie the object refused). */
export const clearedSessionCookie = (): string => cookieHeader("", 0);

/**
 * Starts a session for a registered, unblocked user: its token hash goes to the user's object;
 * answers the `Set-Cookie` value. 404 for a user the service does not know, 401 for a blocked one.
 */
export async function startSession(env: Env, userId: string, now: number): Promise<{ user: User; setCookie: string }> {
  const token = randomToken();
  const tokenHash = await hashSessionToken(token);
  // Not retried: a second start after a lost answer would only leave an unused session, but the
  // caller cannot tell which token is the stored one either way.
  const user = unwrap(
    await callDurable<DurableResult<User>>(() => userStub(env, userId).startSession(tokenHash, randomToken(), now), {
      idempotent: false,
    }),
  );
  return { user, setCookie: cookieHeader(`${userId}.${token}`, SESSION_ABSOLUTE_MS / 1000) };
}

/**
 * GitHub sign-in: records the user GitHub reported (as the control plane's user PUT would, but
 * `blocked` untouched), then starts a session as local sign-in does (401 for a blocked user).
 */
export async function startGithubSession(
  env: Env,
  githubUser: { githubUserId: string; githubLogin: string },
  now: number,
): Promise<{ user: User; setCookie: string }> {
  await callDurable(
    () => userStub(env, githubUser.githubUserId).recordGithubUser(githubUser.githubUserId, githubUser.githubLogin),
    {
      idempotent: true,
    },
  );
  return startSession(env, githubUser.githubUserId, now);
}

export interface SessionCaller {
  user: User;
  csrfToken: string;
  quota: QuotaVerdict | null;
}

const SIGN_IN = "Sign in first: no valid session.";

/** The cookie of a request, else 401 (no storage touched). */
export function requireSessionCookie(request: Request): { userId: string; token: string } {
  const cookie = parseSessionCookie(request.headers.get("Cookie"));
  if (cookie.kind !== "session") throw new AppError("unauthenticated", SIGN_IN);
  return cookie;
}

/**
 * The user's object judges the session (401 when it ended, expired, or its user is blocked) and,
 * when `quotaKind` is set, counts the request against that quota, in one call.
 */
export async function verifySession(
  env: Env,
  cookie: { userId: string; token: string },
  now: number,
  quotaKind: KeyKind | null,
): Promise<SessionCaller> {
  const tokenHash = await hashSessionToken(cookie.token);
  const policy = quotaKind === null ? null : quotaPolicy(env, quotaKind);
  const verdict = await callDurable<SessionVerdict>(
    () => userStub(env, cookie.userId).verifySession(tokenHash, now, quotaKind, policy),
    { idempotent: true },
  );
  if (!verdict.valid) throw new AppError("unauthenticated", SIGN_IN, { headers: { "Set-Cookie": clearedSessionCookie() } });
  return { user: verdict.user, csrfToken: verdict.csrfToken, quota: verdict.quota };
}

/** Sign-out: the object forgets the session; the cookie is cleared by the caller's answer. */
export async function endSession(env: Env, cookie: { userId: string; token: string }): Promise<void> {
  const tokenHash = await hashSessionToken(cookie.token);
  await callDurable(() => userStub(env, cookie.userId).endSession(tokenHash), { idempotent: true });
}

/** "Sign out everywhere": the object forgets every session of the user, this one included. */
export async function endEverySession(env: Env, userId: string): Promise<void> {
  await callDurable(() => userStub(env, userId).endEverySession(), { idempotent: true });
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
export const changesState = (request: Request): boolean => !SAFE_METHODS.has(request.method);

const csrfFailed = (why: string) => new AppError("csrf_failed", why);

/** A state-changing request must come from a page of this origin (the browser sets `Origin`; a form elsewhere cannot fake it). */
export function requireSameOrigin(request: Request, url: URL): void {
  if (request.headers.get("Origin") !== url.origin) {
    throw csrfFailed("Refused: a state-changing request needs an Origin header of this site.");
  }
}

/** The session's CSRF token in `X-CSRF-Token`, compared in constant time. */
export function requireCsrfToken(request: Request, expected: string): void {
  const sent = new TextEncoder().encode(request.headers.get("X-CSRF-Token") ?? "");
  const wanted = new TextEncoder().encode(expected);
  if (sent.byteLength !== wanted.byteLength || !crypto.subtle.timingSafeEqual(sent, wanted)) {
    throw csrfFailed("Refused: the X-CSRF-Token header must carry this session's CSRF token.");
  }
}
