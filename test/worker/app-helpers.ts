import { call } from "./helpers";

/** The origin `call()` sends requests to: a same-origin `Origin` header names it. */
export const ORIGIN = "https://service.test";

export interface Session {
  /** The `Cookie` header that carries the session. */
  cookie: string;
  /** The session's CSRF token, as the page reads it from `GET /app/api/session`. */
  csrf: string;
  /** The cookie's token part (what the user's object stores the SHA-256 of). */
  token: string;
}

/** Signs a registered user in through local sign-in, as the landing page does. */
export async function signIn(userId: string): Promise<Session> {
  const res = await call("/auth/dev/sign-in", { method: "POST", json: { githubUserId: userId }, headers: { Origin: ORIGIN } });
  if (res.status !== 204) throw new Error(`sign-in → ${res.status}: ${await res.text()}`);
  const setCookie = res.headers.get("Set-Cookie") ?? "";
  const value = /^__Host-session=([^;]+)/.exec(setCookie)?.[1];
  if (!value) throw new Error(`no session cookie in ${setCookie}`);
  const cookie = `__Host-session=${value}`;
  const info = await call("/app/api/session", { headers: { Cookie: cookie } });
  const body = (await info.json()) as { csrfToken: string };
  return { cookie, csrf: body.csrfToken, token: value.split(".")[1] ?? "" };
}

/**
 * A request of the app's page: the session cookie, and for a state-changing method the same-origin
 * `Origin` and the session's CSRF token (each can be left out or replaced to test the refusals).
 */
export function appCall(
  path: string,
  session: Session,
  init: RequestInit & { json?: unknown; origin?: string | null; csrf?: string | null } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Cookie", session.cookie);
  const method = init.method ?? "GET";
  if (method !== "GET" && method !== "HEAD") {
    const origin = init.origin === undefined ? ORIGIN : init.origin;
    const csrf = init.csrf === undefined ? session.csrf : init.csrf;
    if (origin !== null) headers.set("Origin", origin);
    if (csrf !== null) headers.set("X-CSRF-Token", csrf);
  }
  const { origin: _origin, csrf: _csrf, ...rest } = init;
  return call(path, { ...rest, headers });
}
