import { startSession } from "../auth/session";
import { githubOAuth } from "../github/oauth";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, routesFor } from "../http/route";
import { DevSignInInput, SignInOptions } from "../schemas/app";
import DEMO_USERS from "./demo-users.json";
import { githubSetupNeeded, githubSignInRoutes } from "./github-sign-in";

/**
 * Signing in to the web app (contract section 13). Local sign-in exists only when the variable
 * `DEV_SIGN_IN` is "true" (`npm start` and the browser tests pass it with `--var`; wrangler.toml
 * never sets it): anywhere else `/auth/dev/...` is 404.
 */

const signInRoute = routesFor("sameOrigin");

const devSignInOn = (env: Env): boolean => env.DEV_SIGN_IN === "true";
const githubConfigured = (env: Env): boolean => githubOAuth(env).kind === "on";

const SET_COOKIE = {
  "Set-Cookie": {
    description: "__Host-session: Secure, HttpOnly, SameSite=Lax, Path=/, Max-Age of the session's 30 days.",
    schema: { type: "string" as const, maxLength: 200 },
    required: true,
  },
};

const signInOptions = signInRoute({
  method: "GET",
  path: "/auth/options",
  operationId: "appSignInOptions",
  summary: "How one can sign in here",
  responses: {
    200: {
      description: "The sign-in methods that are configured.",
      body: SignInOptions,
      example: {
        devSignIn: true,
        devUsers: [{ githubUserId: "1001", githubLogin: "ada-admin" }],
        github: false,
        githubSetup: "To sign in with GitHub here, set APP_URL (see the README: …).",
      },
    },
  },
  errors: [],
  handler: async (_args, { env }) => ({
    devSignIn: devSignInOn(env),
    devUsers: devSignInOn(env) ? DEMO_USERS.map((u) => ({ githubUserId: u.id, githubLogin: u.login })) : [],
    github: githubConfigured(env),
    githubSetup: githubSetupNeeded(githubOAuth(env)),
  }),
});

const devSignIn = signInRoute({
  method: "POST",
  path: "/auth/dev/sign-in",
  operationId: "appDevSignIn",
  summary: "Local sign-in as a registered user (only with DEV_SIGN_IN=true)",
  description:
    "Starts a session for any registered, unblocked user, without GitHub: for `npm start` on a machine that cannot reach " +
    "GitHub, and for the browser tests. 404 unless DEV_SIGN_IN is true. Needs a same-origin Origin header.",
  request: { body: { schema: DevSignInInput, maxBytes: 1024, example: { githubUserId: "1001" } } },
  responses: { 204: { description: "Signed in.", headers: SET_COOKIE } },
  errors: ["not_found", "unauthenticated"],
  // Off, it is not there: 404 to every method, header and body, before any Origin or body check.
  exists: devSignInOn,
  handler: async ({ body }, { env }) => {
    const { setCookie } = await startSession(env, body.githubUserId, Date.now());
    return new Response(null, { status: 204, headers: { "Set-Cookie": setCookie } });
  },
});

/** `/auth/...` before a session exists. */
export const signInInterface: ApiInterface<"sameOrigin"> = {
  name: "sign-in",
  description: "Signing in to the web app (state changes need a same-origin Origin).",
  basePath: "/auth",
  document: "internal",
  envelope: codedErrorEnvelope,
  auth: { kind: "sameOrigin" },
  errors: ["internal_error", "unavailable"],
  routes: [signInOptions, devSignIn, ...githubSignInRoutes],
};
