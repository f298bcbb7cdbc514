import type { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";
import { log } from "../lib/log";
import { isGrantProps, judgeGrant } from "./grants";
import { SCOPES } from "./scopes";

/**
 * The OAuth 2.1 authorization server of `/mcp` (contract section 19), Cloudflare's
 * `@cloudflare/workers-oauth-provider` in its authorization-server role: it serves the RFC 8414
 * metadata, dynamic client registration, the token endpoint (codes, refresh, revocation) and
 * validates access tokens; this Worker's own routes own `/oauth/authorize` (sign-in and consent)
 * and the RFC 9728 metadata. Its records live in `OAUTH_KV` (hashed tokens, encrypted props); KV
 * is eventually consistent, so every token is also checked against its grant in the person's
 * UserObject (`auth/grants.ts`).
 */

export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
export const MCP_PATH = "/mcp";

const ACCESS_TOKEN_SECONDS = 60 * 60;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 60 * 60;

/**
 * The service's public origin: `APP_URL` when configured (what GitHub sign-in uses too), else the
 * request's own origin (local `wrangler dev`, where the URL is the machine's).
 */
export function serviceOrigin(env: Env, url: URL): string {
  const configured = env.APP_URL?.trim();
  return configured ? new URL(configured).origin : url.origin;
}

/** The protected resource: this service's `/mcp` URL (`/mcp/readonly` lies under it). */
export const mcpResource = (origin: string): string => `${origin}${MCP_PATH}`;

/** Where the RFC 9728 metadata of `/mcp` is: the well-known path with the resource's path appended. */
export const resourceMetadataUrl = (origin: string): string => `${origin}/.well-known/oauth-protected-resource${MCP_PATH}`;

/**
 * Redirect URIs a client may register (contract section 19): `https://...`, or `http://` on
 * 127.0.0.1 or localhost with a port (a native client's loopback listener). Nothing else, so a
 * code never travels in the clear to another machine or to a custom scheme.
 */
export function allowedRedirectUri(value: unknown): boolean {
  if (typeof value !== "string") return false;
  let uri: URL;
  try {
    uri = new URL(value);
  } catch {
    return false;
  }
  if (uri.username !== "" || uri.password !== "" || uri.hash !== "" || value.includes("#")) return false;
  if (uri.protocol === "https:") return uri.hostname !== "";
  if (uri.protocol !== "http:") return false;
  const explicitPort = /^http:\/\/[^/]+:\d+(\/|$)/i.test(value);
  return (uri.hostname === "127.0.0.1" || uri.hostname === "localhost") && explicitPort;
}

export const REDIRECT_RULE =
  "Every redirect URI must be https://..., or http://127.0.0.1:<port>/... or http://localhost:<port>/...";

/**
 * Clients are public (contract section 19): PKCE and no secret. The library registers confidential
 * clients too and has no option against them (its `disallowPublicClientRegistration` is the
 * opposite), so `/oauth/register` refuses any other method before the library sees the request.
 */
export const PUBLIC_CLIENT_METHOD = "none";
export const PUBLIC_CLIENT_RULE =
  'token_endpoint_auth_method must be "none": this server registers public clients only (PKCE, no secret).';

/**
 * The library, loaded on first use: the Worker's modules are also loaded on Node to build the
 * OpenAPI documents (the node tests, `npm run openapi`), where its `cloudflare:workers` import
 * cannot resolve; only the handlers need it.
 */
export const oauthLibrary = () => import("@cloudflare/workers-oauth-provider");

const servers = new Map<string, OAuthAuthorizationServer<Env>>();

/** The authorization server for this origin (one per isolate; the origin is configuration). */
export async function authorizationServer(origin: string): Promise<OAuthAuthorizationServer<Env>> {
  let server = servers.get(origin);
  if (!server) {
    const { OAuthAuthorizationServer, OAuthError } = await oauthLibrary();
    server = new OAuthAuthorizationServer<Env>({
      issuer: origin,
      resources: [mcpResource(origin)],
      authorizeEndpoint: AUTHORIZE_PATH,
      tokenEndpoint: TOKEN_PATH,
      clientRegistrationEndpoint: REGISTER_PATH,
      scopesSupported: [...SCOPES],
      accessTokenTTL: ACCESS_TOKEN_SECONDS,
      refreshTokenTTL: REFRESH_TOKEN_SECONDS,
      clientIdMetadataDocumentEnabled: true,
      // The person's object decides at each code exchange and refresh too: a revoked grant, or a
      // blocked person, gets no new token even where KV still serves the grant.
      tokenExchangeCallback: async ({ props, env }) => {
        if (!isGrantProps(props) || (await judgeGrant(env, props, Date.now(), null)) === null) {
          throw new OAuthError("invalid_grant", { description: "This app's access was revoked." });
        }
      },
      onError: ({ status, internal }) => {
        if (status >= 500) log.error("oauth provider error", { internal });
      },
    });
    servers.set(origin, server);
  }
  return server;
}
