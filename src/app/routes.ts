import { downloadPullRequestAnalyticsCsv, getPullRequestAnalyticsSummary, listPullRequestAnalytics } from "../analytics/routes";
import { getPullRequestAnalyticsSummaries } from "../analytics/summaries";
import { clearedSessionCookie, endEverySession, endSession, requireSessionCookie } from "../auth/session";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, type Route, routesFor } from "../http/route";
import { listOrganizationAuditLog } from "../members/audit-log";
import {
  getOrganizationMember,
  listCallerOrganizations,
  listOrganizationMembers,
  updateOrganizationMember,
  updateOrganizationMembers,
} from "../members/routes";
import { getOrganizationSettings, listSeatRequests, updateOrganizationSettings } from "../members/settings-routes";
import { SessionInfo } from "../schemas/app";
import type { KeyKind } from "../schemas/key-kind";
import { appKeyRoutes } from "./key-routes";
import { decideConsent, listConnectedApps, revokeConnectedApp } from "./oauth-apps";

/**
 * The web app's JSON routes (contract section 13), for its pages, with the session's user as the
 * caller. Organizations, members and the audit log are the public routes themselves under another
 * path (same rules, same code, the members quota), and so are the analytics export and summary
 * (the analytics quota; answered in this interface's envelope); keys go through the same
 * functions as the control plane's key routes (`auth/keys.ts`).
 */

const sessionRoute = routesFor("session");

/** A public route served to the app: same schemas, rules and handler; counted as a key of its kind would be. */
const forApp = (route: Route<"apiKey">, path: string, operationId: string, quota: KeyKind = "members"): Route<"session"> => ({
  ...route,
  auth: "session",
  path,
  operationId,
  description: `The web app's form of ${route.operationId} (same rules and answers; counted against the ${quota} quota).`,
  quota,
  // The public route's links name public operations.
  responses: Object.fromEntries(Object.entries(route.responses).map(([status, r]) => [status, { ...r, links: undefined }])),
});

const getSession = sessionRoute({
  method: "GET",
  path: "/app/api/session",
  operationId: "appGetSession",
  summary: "Who is signed in, and the session's CSRF token",
  responses: {
    200: {
      description: "The signed-in user.",
      body: SessionInfo,
      example: {
        user: { githubUserId: "1001", githubLogin: "ada-admin" },
        csrfToken: "yWJt3mXf3v2S9u0uYdJ8mQ0l1eQ7sZk4p6Rr2c5gH1w",
      },
    },
  },
  errors: [],
  handler: async ({ caller, csrfToken }) => {
    return { user: { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin }, csrfToken };
  },
});

const signOut = sessionRoute({
  method: "POST",
  path: "/auth/sign-out",
  operationId: "appSignOut",
  summary: "Sign out: the session ends at once",
  responses: {
    204: {
      description: "Signed out; the cookie is cleared.",
      headers: { "Set-Cookie": { description: "Clears __Host-session.", schema: { type: "string", maxLength: 200 } } },
    },
  },
  errors: [],
  handler: async (_args, { env, request }) => {
    await endSession(env, requireSessionCookie(request));
    return new Response(null, { status: 204, headers: { "Set-Cookie": clearedSessionCookie() } });
  },
});

const signOutEverywhere = sessionRoute({
  method: "POST",
  path: "/auth/sign-out-everywhere",
  operationId: "appSignOutEverywhere",
  summary: "Sign out everywhere: every session of yours ends at once",
  description:
    "Ends every session of the signed-in person (other browsers and devices too), this one included. Your API keys " +
    "keep working: revoke them on /app/keys.",
  responses: {
    204: {
      description: "Every session ended; this browser's cookie is cleared.",
      headers: { "Set-Cookie": { description: "Clears __Host-session.", schema: { type: "string", maxLength: 200 } } },
    },
  },
  errors: [],
  handler: async ({ caller }, { env }) => {
    await endEverySession(env, caller.githubUserId);
    return new Response(null, { status: 204, headers: { "Set-Cookie": clearedSessionCookie() } });
  },
});

/** `/app/api/...` and sign-out: the session cookie only (a key never authenticates here). */
export const appInterface: ApiInterface<"session"> = {
  name: "app",
  description: "The web app's JSON routes (session cookie; state changes need Origin and X-CSRF-Token).",
  basePath: "/app/api",
  document: "internal",
  envelope: codedErrorEnvelope,
  auth: { kind: "session" },
  errors: ["internal_error", "unavailable"],
  routes: [
    getSession,
    signOut,
    signOutEverywhere,
    ...appKeyRoutes,
    forApp(listCallerOrganizations, "/app/api/orgs", "appListOrganizations"),
    forApp(listOrganizationMembers, "/app/api/orgs/{org}/members", "appListOrganizationMembers"),
    forApp(getOrganizationMember, "/app/api/orgs/{org}/members/{githubUserId}", "appGetOrganizationMember"),
    forApp(updateOrganizationMember, "/app/api/orgs/{org}/members/{githubUserId}", "appUpdateOrganizationMember"),
    forApp(updateOrganizationMembers, "/app/api/orgs/{org}/members", "appUpdateOrganizationMembers"),
    forApp(listOrganizationAuditLog, "/app/api/orgs/{org}/audit-log", "appListOrganizationAuditLog"),
    forApp(getOrganizationSettings, "/app/api/orgs/{org}/settings", "appGetOrganizationSettings"),
    forApp(updateOrganizationSettings, "/app/api/orgs/{org}/settings", "appUpdateOrganizationSettings"),
    forApp(listSeatRequests, "/app/api/orgs/{org}/seat-requests", "appListSeatRequests"),
    forApp(listPullRequestAnalytics, "/app/api/analytics/prs", "appListPullRequestAnalytics", "analytics"),
    forApp(getPullRequestAnalyticsSummary, "/app/api/analytics/summary", "appGetPullRequestAnalyticsSummary", "analytics"),
    getPullRequestAnalyticsSummaries,
    downloadPullRequestAnalyticsCsv,
    // OAuth for agents (contract section 19): the consent decision and "Connected apps".
    decideConsent,
    listConnectedApps,
    revokeConnectedApp,
  ],
};
