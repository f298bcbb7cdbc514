import { z } from "zod";
import { countSignInStart } from "../auth/flood";
import { startGithubSession } from "../auth/session";
import { beginSignInAttempt, consumeSignInAttempt, SIGN_IN_ATTEMPT_MS } from "../auth/sign-in-attempt";
import { authorizationRequest, completeAuthorization, githubOAuth, type OAuthSetting } from "../github/oauth";
import { type HeaderSpec, type RequestContext, routesFor } from "../http/route";
import { AppError, isAppError } from "../lib/errors";
import { logger } from "../lib/log";
import { CONTENT_SECURITY_POLICY } from "./csp";
import { type Message, messagePage } from "./message-page";

/**
 * Sign in with GitHub (contract section 13): the GitHub App's user authorization, OAuth web flow
 * with `state` and PKCE S256 (`github/oauth.ts`). Between the redirect and the callback the attempt
 * lives twice: its PKCE verifier in a Durable Object named by the state (`auth/sign-in-attempt-object.ts`,
 * used at most once, 10 minutes), and the state in a `__Host-` cookie of the browser that started
 * it, so a callback link made for another browser (login CSRF) is refused. Every outcome that does
 * not sign in is an HTML page with a way back, never a 5xx.
 */

const signInRoute = routesFor("sameOrigin");

/** The browser's half of an attempt: its `state`. HttpOnly, Secure, SameSite=Lax (sent on GitHub's redirect back). */
export const ATTEMPT_COOKIE = "__Host-github-sign-in";

const attemptCookie = (value: string, maxAgeSeconds: number) =>
  `${ATTEMPT_COOKIE}=${value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;

const STATE = /^[A-Za-z0-9_-]{20,128}$/;

function cookieState(request: Request): string | null {
  const pair = (request.headers.get("Cookie") ?? "")
    .split(";")
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${ATTEMPT_COOKIE}=`));
  const value = pair?.slice(ATTEMPT_COOKIE.length + 1) ?? "";
  return STATE.test(value) ? value : null;
}

const BACK = { href: "/", label: "Back to sign-in" };
const AGAIN = { href: "/auth/github", label: "Sign in with GitHub again" };

/** What to set before GitHub sign-in works here, in words (the page below and the landing page's button); null when it works. */
export function githubSetupNeeded(setting: OAuthSetting): string | null {
  if (setting.kind === "on") return null;
  const what =
    setting.kind === "off"
      ? `set ${setting.missing.join(" and ")} (see the README: the GitHub App's client id and a client secret, and APP_URL, this service's public origin)`
      : `fix its configuration: ${setting.reason}`;
  return `To sign in with GitHub here, ${what}.`;
}

function notConfigured(setting: Exclude<OAuthSetting, { kind: "on" }>, rc: RequestContext): Response {
  if (setting.kind === "misconfigured") {
    logger({ correlationId: rc.correlationId }).error("GitHub sign-in is misconfigured", { reason: setting.reason });
  }
  return messagePage({
    status: 404,
    title: "GitHub sign-in is not configured",
    text: githubSetupNeeded(setting) ?? "",
    link: BACK,
  });
}

const HTML = z.string().max(4000).meta({ description: "A page that says what happened, with a link back." });
const PAGE_HEADERS: Record<string, HeaderSpec & { required: boolean }> = {
  "Content-Security-Policy": {
    description: "No script, nothing from another origin, never framed.",
    schema: { type: "string", const: CONTENT_SECURITY_POLICY },
    required: true,
  },
};
const page = (description: string, extra: Record<string, HeaderSpec & { required: boolean }> = {}) => ({
  description,
  headers: { ...PAGE_HEADERS, ...extra },
  media: { "text/html": { schema: HTML, example: "<!doctype html>…" } },
});
const SET_COOKIE = (description: string, required: boolean) => ({
  "Set-Cookie": { description, schema: { type: "string" as const, maxLength: 400 }, required },
});

const startGithubSignIn = signInRoute({
  method: "GET",
  path: "/auth/github",
  operationId: "appGithubSignIn",
  summary: "Sign in with GitHub: redirects to GitHub's authorize page",
  description:
    "Starts an attempt (state and PKCE S256; the verifier stays on the server, usable once, for 10 minutes) and " +
    "redirects to `GITHUB_OAUTH_URL/login/oauth/authorize`. Without GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET, a page " +
    "that says what to configure.",
  responses: {
    302: {
      description:
        "To GitHub's authorize page, with client_id, redirect_uri, state, code_challenge and code_challenge_method=S256.",
      headers: {
        Location: {
          description: "GitHub's authorize URL.",
          schema: { type: "string", format: "uri", maxLength: 2000 },
          required: true,
        },
        ...SET_COOKIE(`${ATTEMPT_COOKIE}: the attempt's state, Secure, HttpOnly, SameSite=Lax, Path=/, Max-Age=600.`, true),
      },
    },
    404: page("GitHub sign-in is not configured here: the page names what to set."),
    429: page(
      "Too many sign-ins started from this client address: each start counts against the per-address limit on failed " +
        "authentications, so past it valid ones too are refused for a minute (no quota headers: nobody is known yet). A page; try again later.",
      {
        "Retry-After": {
          description: "Whole seconds to wait.",
          schema: { type: "string", pattern: "^[0-9]+$", maxLength: 10 },
          required: true,
        },
      },
    ),
    // Not 500: nothing failed here. 502: the upstream (GitHub) did not answer as it should, so
    // monitoring sees the outage while the person sees a page with a way back.
    502: page("GitHub did not answer (or not as GitHub does): nothing changed; try again later."),
  },
  errors: [],
  handler: async (_args, rc) => {
    const setting = githubOAuth(rc.env);
    if (setting.kind !== "on") return notConfigured(setting, rc);
    const now = Date.now();
    try {
      // Each start stores an attempt: throttled per address like a failed authentication.
      await countSignInStart(rc.request, rc.env, now);
    } catch (error) {
      if (!isAppError(error) || error.code !== "rate_limited") throw error;
      return messagePage(
        { status: 429, title: "Too many sign-ins", text: `${error.message} Wait a minute, then sign in again.`, link: AGAIN },
        { "Retry-After": error.headers["Retry-After"] ?? "60" },
      );
    }
    const { state, verifier, url } = await authorizationRequest(setting.config, setting.config.callbackUrl);
    await beginSignInAttempt(rc.env, state, verifier, now);
    return new Response(null, {
      status: 302,
      headers: { Location: url.href, "Set-Cookie": attemptCookie(state, SIGN_IN_ATTEMPT_MS / 1000) },
    });
  },
});

const githubCallback = signInRoute({
  method: "GET",
  path: "/auth/github/callback",
  operationId: "appGithubCallback",
  summary: "GitHub's redirect back: checks state, exchanges the code, signs in",
  description:
    "Query parameters as GitHub sends them: `code` and `state`, or `error` (e.g. access_denied) and `state`. The state " +
    "must be this browser's (its cookie) and unused; the code is exchanged with the PKCE verifier, the user read from " +
    "GitHub's `/user` (id and login) and recorded (its blocked flag untouched), and a session started. Every other " +
    "outcome is a page with a way back.",
  responses: {
    303: {
      description: "Signed in: to /app/keys with the session cookie; the attempt's cookie is cleared.",
      headers: {
        Location: { description: "/app/keys", schema: { type: "string", const: "/app/keys" }, required: true },
        ...SET_COOKIE("__Host-session (as local sign-in sets it), and the attempt's cookie cleared.", true),
      },
    },
    400: page(
      "The sign-in link is not this browser's, has expired, or was used already (state), or GitHub refused the code.",
      SET_COOKIE("Clears the attempt's cookie.", false),
    ),
    403: page(
      "Access was declined at GitHub, or this account is blocked here.",
      SET_COOKIE("Clears the attempt's cookie.", false),
    ),
    404: page("GitHub sign-in is not configured here: the page names what to set."),
    // Not 500: nothing failed here. 502: the upstream (GitHub) did not answer as it should, so
    // monitoring sees the outage while the person sees a page with a way back.
    502: page("GitHub did not answer (or not as GitHub does): nothing changed; try again later."),
  },
  errors: [],
  handler: async (_args, rc) => {
    const setting = githubOAuth(rc.env);
    if (setting.kind !== "on") return notConfigured(setting, rc);
    const clear = { "Set-Cookie": attemptCookie("", 0) };
    const answer = (message: Message) => messagePage(message, clear);

    const state = rc.url.searchParams.get("state");
    const expected = cookieState(rc.request);
    if (state === null || expected === null || state !== expected) {
      return answer({
        status: 400,
        title: "This sign-in link is not for this browser",
        text: "The link back from GitHub does not match a sign-in started in this browser, or it is more than 10 minutes old. Start again.",
        link: AGAIN,
      });
    }
    const now = Date.now();
    const verifier = await consumeSignInAttempt(rc.env, state, now);
    if (verifier === null) {
      return answer({
        status: 400,
        title: "This sign-in link was used already",
        text: "Each link back from GitHub works once and for 10 minutes. Start again.",
        link: AGAIN,
      });
    }

    const outcome = await completeAuthorization(setting.config, rc.url, setting.config.callbackUrl, state, verifier);
    switch (outcome.kind) {
      case "denied":
        return answer({
          status: 403,
          title: "Sign-in declined",
          text:
            outcome.error === "access_denied"
              ? "You did not authorize this service at GitHub, so you are not signed in."
              : `GitHub did not sign you in (${outcome.error}).`,
          link: BACK,
        });
      case "refused":
        return answer({
          status: 400,
          title: "GitHub refused this sign-in",
          text: "GitHub did not accept the sign-in code: it was used already or has expired. Start again.",
          link: AGAIN,
        });
      case "unavailable":
        logger({ correlationId: rc.correlationId }).warn("GitHub sign-in: GitHub unavailable", { detail: outcome.detail });
        return answer({
          status: 502,
          title: "GitHub is not answering",
          text: "GitHub did not answer the sign-in just now, so you are not signed in. Try again in a few minutes.",
          link: AGAIN,
        });
      case "user":
        break;
    }
    try {
      const { setCookie } = await startGithubSession(rc.env, outcome, now);
      const headers = new Headers({ Location: "/app/keys" });
      headers.append("Set-Cookie", setCookie);
      headers.append("Set-Cookie", clear["Set-Cookie"]);
      return new Response(null, { status: 303, headers });
    } catch (error) {
      if (!(error instanceof AppError && error.code === "unauthenticated")) throw error;
      return answer({
        status: 403,
        title: "This account is blocked",
        text: `GitHub signed you in as ${outcome.githubLogin}, but this account is blocked here. Ask an administrator.`,
        link: BACK,
      });
    }
  },
});

export const githubSignInRoutes = [startGithubSignIn, githubCallback];
