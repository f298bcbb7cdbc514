import { z } from "zod";
import {
  AUTHORIZE_PATH,
  allowedRedirectUri,
  authorizationServer,
  oauthLibrary,
  PUBLIC_CLIENT_METHOD,
  PUBLIC_CLIENT_RULE,
  REDIRECT_RULE,
  REGISTER_PATH,
  serviceOrigin,
  TOKEN_PATH,
} from "../auth/oauth-server";
import { parseSessionCookie, verifySession } from "../auth/session";
import { codedErrorEnvelope, json } from "../http/envelopes";
import { type ApiInterface, defineRoute, type RequestContext } from "../http/route";
import { AppError } from "../lib/errors";
import { consentPage, oauthMessage } from "./consent-page";

/**
 * `/oauth/...` (contract section 19): the authorization endpoint is this Worker's (it signs the
 * person in and shows the consent page); the token endpoint (codes, refresh, RFC 7009 revocation)
 * and dynamic client registration are the library's, passed the request as it came.
 */

const OAuthErrorBody = z
  .object({ error: z.string().max(100), error_description: z.string().max(1000).optional() })
  .meta({ id: "OAuthError", description: "An OAuth error (RFC 6749 section 5.2, RFC 7591 section 3.2.2)." });

const Tokens = z
  .looseObject({
    access_token: z.string().max(1000),
    token_type: z.string().max(20),
    expires_in: z.number().int().min(1),
    refresh_token: z.string().max(1000).optional(),
    scope: z.string().max(200).optional(),
  })
  .meta({ id: "OAuthTokens", description: "Access token (1 hour) and refresh token (30 days, rotating)." });

const ClientInformation = z
  .looseObject({ client_id: z.string().max(2000), redirect_uris: z.array(z.string().max(2000)).max(20) })
  .meta({ id: "OAuthClientInformation", description: "The registered client (RFC 7591)." });

/** The library's own endpoints, answered by it. */
const delegated = async (rc: RequestContext) =>
  (await authorizationServer(serviceOrigin(rc.env, rc.url))).fetch(rc.request, rc.env, rc.ctx);

const token = defineRoute({
  method: "POST",
  path: TOKEN_PATH,
  operationId: "oauthToken",
  summary: "Token endpoint: authorization code (PKCE S256), refresh token, and revocation (RFC 7009)",
  description:
    "application/x-www-form-urlencoded, as OAuth 2.1 has it. grant_type=authorization_code (code, redirect_uri, " +
    "code_verifier, client_id, resource) or refresh_token (refresh_token, client_id): a code works once, a refresh token " +
    "is replaced by the one answered. token=... without grant_type revokes (RFC 7009).",
  responses: {
    200: {
      description: "Tokens, or an empty answer to a revocation.",
      body: Tokens,
      example: {
        access_token: "1001:grant-id:secret",
        token_type: "bearer",
        expires_in: 3600,
        refresh_token: "1001:grant-id:refresh-secret",
        scope: "analytics:read members:read",
      },
    },
    400: {
      description: "invalid_request, invalid_grant (wrong verifier, used or expired code), invalid_target.",
      body: OAuthErrorBody,
    },
    401: { description: "invalid_client.", body: OAuthErrorBody, example: { error: "invalid_client" } },
  },
  errors: [],
  handler: async (_args, rc) => delegated(rc),
});

const register = defineRoute({
  method: "POST",
  path: REGISTER_PATH,
  operationId: "oauthRegisterClient",
  summary: "Dynamic client registration (RFC 7591) for public clients",
  description:
    "JSON client metadata. Every redirect URI must be https://..., or http://127.0.0.1:<port>/... or " +
    "http://localhost:<port>/...; anything else is 400 invalid_redirect_uri. token_endpoint_auth_method must be none " +
    "(public clients: PKCE, no secret); any other is 400 invalid_client_metadata, and a client that names none is " +
    "registered as public. Clients that can should use a client ID metadata document instead (an https URL as " +
    "client_id), which needs no registration.",
  responses: {
    201: {
      description: "The client, registered.",
      body: ClientInformation,
      example: {
        client_id: "uDjl3siJ6BrECs-6",
        client_name: "Claude Code",
        redirect_uris: ["http://localhost:33418/callback"],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    },
    400: {
      description: "invalid_redirect_uri, invalid_client_metadata (a method other than none, among others).",
      body: OAuthErrorBody,
      example: { error: "invalid_redirect_uri", error_description: REDIRECT_RULE },
    },
  },
  errors: [],
  handler: async (_args, rc) => {
    const metadata = (await rc.request
      .clone()
      .json()
      .catch(() => null)) as { redirect_uris?: unknown; token_endpoint_auth_method?: unknown } | null;
    const uris = metadata?.redirect_uris;
    // The library refuses some of these itself, as invalid_client_metadata; the contract names one code for all.
    if (Array.isArray(uris) && !uris.every(allowedRedirectUri)) {
      return json({ error: "invalid_redirect_uri", error_description: REDIRECT_RULE }, 400);
    }
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return delegated(rc);
    if (!("token_endpoint_auth_method" in metadata)) {
      // RFC 7591's default would be client_secret_basic; the server may substitute a value (section
      // 3.2.1), and the answer tells the client: registered as public.
      const headers = new Headers(rc.request.headers);
      headers.delete("Content-Length");
      const body = JSON.stringify({ ...metadata, token_endpoint_auth_method: PUBLIC_CLIENT_METHOD });
      return delegated({ ...rc, request: new Request(rc.request.url, { method: "POST", headers, body }) });
    }
    if (metadata.token_endpoint_auth_method !== PUBLIC_CLIENT_METHOD) {
      return json({ error: "invalid_client_metadata", error_description: PUBLIC_CLIENT_RULE }, 400);
    }
    return delegated(rc);
  },
});

/** Errors before the client and its redirect URI are trusted are shown here, never redirected. */
async function refusedHere(error: unknown): Promise<Response> {
  const { AuthorizationError, CimdFetchError } = await oauthLibrary();
  if (error instanceof AuthorizationError && error.redirectTo) return Response.redirect(error.redirectTo, 302);
  if (error instanceof AuthorizationError) return oauthMessage(400, error.description);
  if (error instanceof CimdFetchError) return oauthMessage(400, "This app's client metadata document could not be read.");
  throw error;
}

/**
 * The person's session, or null (no cookie, or one that no longer signs anyone in). Same rules as
 * the app's pages: the user's object judges it on every request.
 */
async function sessionUser(rc: RequestContext, now: number): Promise<{ githubUserId: string } | null> {
  const cookie = parseSessionCookie(rc.request.headers.get("Cookie"));
  if (cookie.kind !== "session") return null;
  try {
    return (await verifySession(rc.env, cookie, now, null)).user;
  } catch (error) {
    if (error instanceof AppError && error.code === "unauthenticated") return null;
    throw error;
  }
}

const authorize = defineRoute({
  method: "GET",
  path: AUTHORIZE_PATH,
  operationId: "oauthAuthorize",
  summary: "Authorization endpoint: sign in, then the consent page",
  description:
    "response_type=code, client_id (a registered id or a client ID metadata document URL), redirect_uri, state, " +
    "code_challenge with code_challenge_method=S256 (plain is refused), scope, resource (this service's /mcp URL). " +
    "Without a session: a redirect to the sign-in page, which comes back here. With one: the consent page.",
  responses: {
    200: {
      description: "The consent page.",
      media: { "text/html": { schema: z.string().max(20_000), example: "<!doctype html>…" } },
    },
    302: { description: "To sign in first; or back to the client with an error (state and iss included)." },
    400: {
      description: "The client or its redirect URI could not be trusted: a page that says so.",
      media: { "text/html": { schema: z.string().max(20_000) } },
    },
  },
  errors: [],
  handler: async (_args, rc) => {
    const { authorizationErrorRedirect } = await oauthLibrary();
    const oauth = (await authorizationServer(serviceOrigin(rc.env, rc.url))).getOAuthApi(rc.env);
    try {
      const request = await oauth.parseAuthRequest(rc.request);
      if (request.codeChallengeMethod !== "S256" || !request.codeChallenge) {
        return Response.redirect(authorizationErrorRedirect(request, "invalid_request", "PKCE with S256 is required."), 302);
      }
      if (!request.state) {
        return Response.redirect(authorizationErrorRedirect(request, "invalid_request", "state is required."), 302);
      }
      const user = await sessionUser(rc, Date.now());
      if (user === null) {
        const next = `${rc.url.pathname}${rc.url.search}`;
        return new Response(null, { status: 302, headers: { Location: `/?next=${encodeURIComponent(next)}` } });
      }
      const description = await oauth.describeConsent(request);
      const consent = await oauth.beginConsent(request);
      return consentPage(description, consent.handle, consent.headers);
    } catch (error) {
      return await refusedHere(error);
    }
  },
});

/** `/oauth/...`: the authorization server's endpoints. */
export const oauthInterface: ApiInterface = {
  name: "oauth",
  description: "OAuth 2.1 authorization server of /mcp (contract section 19): authorize, token, registration.",
  basePath: "/oauth",
  document: "internal",
  envelope: codedErrorEnvelope,
  auth: { kind: "none" },
  errors: [],
  routes: [authorize, token, register],
};
