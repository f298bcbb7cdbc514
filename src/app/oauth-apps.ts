import { z } from "zod";
import { listGrants, newGrantId, recordGrant, revokeGrant } from "../auth/grants";
import { authorizationServer, oauthLibrary, serviceOrigin } from "../auth/oauth-server";
import { SCOPES } from "../auth/scopes";
import { json } from "../http/envelopes";
import { type RequestContext, routesFor } from "../http/route";
import { AppError } from "../lib/errors";
import { errorField, log } from "../lib/log";
import { formatInstant } from "../lib/time";

/**
 * The web app's side of OAuth for agents (contract section 19): the consent page's decision, and
 * "Connected apps" on /app/keys (list, revoke). Session routes: state changes need the same-origin
 * `Origin` and the session's CSRF token, like every other change the app makes.
 */

const sessionRoute = routesFor("session");

const Scope = z.enum(SCOPES);

const ConsentDecision = z
  .object({
    handle: z.string().min(1).max(200).meta({ description: "The consent page's handle (works once, in this browser)." }),
    approve: z.boolean(),
    scopes: z.array(Scope).max(3).meta({ description: "The scopes the person left ticked (approve only)." }),
  })
  .meta({ id: "OAuthConsentDecision" });

const ConsentOutcome = z
  .object({ redirectTo: z.string().max(4000).meta({ description: "Back to the client: a code, or error=access_denied." }) })
  .meta({ id: "OAuthConsentOutcome" });

const ConnectedApp = z
  .object({
    grantId: z.string().max(100),
    clientName: z.string().max(500),
    clientId: z.string().max(2000),
    scopes: z.array(Scope).max(3),
    approvedAt: z.string().max(40),
    lastUsedAt: z.string().max(40).nullable(),
  })
  .meta({ id: "ConnectedApp" });

const ConnectedApps = z.object({ apps: z.array(ConnectedApp).max(1000) }).meta({ id: "ConnectedApps" });

const GrantPath = z.object({
  grantId: z
    .string()
    .max(36)
    .regex(/^grt_[A-Za-z0-9_-]{32}$/),
});

/** The consent page expired, was used, or was opened in another browser: 400, start again from the app. */
const staleConsent = async (error: unknown): Promise<never> => {
  if (error instanceof (await oauthLibrary()).AuthorizationError) {
    throw new AppError(
      "invalid_request",
      "This consent page has expired or was already used. Start connecting again from the app.",
    );
  }
  throw error;
};

/** A response with the library's cookie changes (the consent binding cleared). */
function withCookies(body: unknown, headers: Headers): Response {
  const response = json(body);
  for (const cookie of headers.getSetCookie()) response.headers.append("Set-Cookie", cookie);
  return response;
}

async function decide(rc: RequestContext, userId: string, decision: z.output<typeof ConsentDecision>): Promise<Response> {
  const oauth = (await authorizationServer(serviceOrigin(rc.env, rc.url))).getOAuthApi(rc.env);
  if (!decision.approve) {
    const denied = await oauth.denyConsent(rc.request, decision.handle).catch(staleConsent);
    return withCookies({ redirectTo: denied.redirectTo }, denied.headers);
  }
  if (decision.scopes.length === 0) throw new AppError("invalid_request", "Leave at least one scope ticked, or deny.");
  const approved = await oauth.approveConsent(rc.request, decision.handle, { scope: decision.scopes }).catch(staleConsent);
  const request = approved.request;
  const description = await oauth.describeConsent(request);
  const grantId = newGrantId();
  const scopes = SCOPES.filter((scope) => request.scope.includes(scope));
  // The person's object first: a token is only ever issued for a grant it knows.
  await recordGrant(
    rc.env,
    userId,
    { grantId, clientId: request.clientId, clientName: description.clientName, redirectUri: request.redirectUri, scopes },
    description.clientDomain !== undefined,
    Date.now(),
  );
  const { redirectTo } = await oauth.completeAuthorization({
    request,
    userId,
    metadata: { grantId },
    scope: scopes,
    props: { grantId, userId },
  });
  return withCookies({ redirectTo }, approved.headers);
}

export const decideConsent = sessionRoute({
  method: "POST",
  path: "/app/api/oauth/consent",
  operationId: "appDecideOAuthConsent",
  summary: "Approve (with the ticked scopes) or deny an app's request to use /mcp for you",
  request: {
    body: { schema: ConsentDecision, maxBytes: 1024, example: { handle: "…", approve: true, scopes: ["members:read"] } },
  },
  responses: {
    200: {
      description: "Where to send the browser.",
      body: ConsentOutcome,
      example: { redirectTo: "http://127.0.0.1:33418/callback?code=…&state=…&iss=https%3A%2F%2Fpr-review.example.com" },
    },
  },
  errors: [],
  handler: async ({ body, caller }, rc) => decide(rc, caller.githubUserId, body),
});

export const listConnectedApps = sessionRoute({
  method: "GET",
  path: "/app/api/oauth/apps",
  operationId: "appListConnectedApps",
  summary: "Your connected apps: the OAuth grants you approved",
  responses: {
    200: {
      description: "Newest first.",
      body: ConnectedApps,
      example: {
        apps: [
          {
            grantId: "grt_3q2-7wEvVQhR0b5YxJm9pL1kNc8sTa4u",
            clientName: "Claude Code",
            clientId: "uDjl3siJ6BrECs-6",
            scopes: ["members:read"],
            approvedAt: "2026-11-27T11:24:03.000Z",
            lastUsedAt: "2026-11-27T11:00:00.000Z",
          },
        ],
      },
    },
  },
  errors: [],
  handler: async ({ caller }, { env }) => {
    const grants = await listGrants(env, caller.githubUserId);
    return {
      apps: grants.map((grant) => ({
        ...grant,
        approvedAt: formatInstant(grant.approvedAt),
        lastUsedAt: grant.lastUsedAt === null ? null : formatInstant(grant.lastUsedAt),
      })),
    };
  },
});

export const revokeConnectedApp = sessionRoute({
  method: "DELETE",
  path: "/app/api/oauth/apps/{grantId}",
  operationId: "appRevokeConnectedApp",
  summary: "Disconnect an app: its tokens are refused from the next request on",
  request: { params: GrantPath },
  responses: { 204: { description: "Revoked." } },
  errors: ["not_found"],
  handler: async ({ params, caller }, rc) => {
    const userId = caller.githubUserId;
    await revokeGrant(rc.env, userId, params.grantId);
    // Housekeeping: the library's records of the grant (the verdict above already refuses them).
    rc.ctx.waitUntil(forgetLibraryGrant(rc, userId, params.grantId));
    return null;
  },
});

/** Deletes the library's KV records of one of our grants (found by the id stored in its metadata). */
async function forgetLibraryGrant(rc: RequestContext, userId: string, grantId: string): Promise<void> {
  try {
    const oauth = (await authorizationServer(serviceOrigin(rc.env, rc.url))).getOAuthApi(rc.env);
    let cursor: string | undefined;
    do {
      const page = await oauth.listUserGrants(userId, cursor === undefined ? {} : { cursor });
      for (const grant of page.items) {
        if ((grant.metadata as { grantId?: unknown } | null)?.grantId === grantId) await oauth.revokeGrant(grant.id, userId);
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
  } catch (error) {
    log.warn("revoked grant's KV records not deleted", { error: errorField(error) });
  }
}
