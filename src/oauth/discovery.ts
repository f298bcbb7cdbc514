import { z } from "zod";
import { authorizationServer, mcpResource, PUBLIC_CLIENT_METHOD, serviceOrigin } from "../auth/oauth-server";
import { SCOPES } from "../auth/scopes";
import { codedErrorEnvelope, json } from "../http/envelopes";
import { type ApiInterface, defineRoute, type RequestContext } from "../http/route";

/**
 * Discovery for MCP clients (contract section 19): the RFC 9728 metadata of `/mcp` (at the
 * well-known path, and with `/mcp` appended as RFC 9728 places it) and the RFC 8414 metadata of
 * the authorization server, which the library writes from its own configuration.
 */

const ProtectedResourceMetadata = z
  .object({
    resource: z.string().max(2000),
    authorization_servers: z.array(z.string().max(2000)).max(1),
    scopes_supported: z.array(z.enum(SCOPES)).max(3),
    bearer_methods_supported: z.array(z.literal("header")).max(1),
    resource_name: z.string().max(200),
  })
  .meta({ id: "ProtectedResourceMetadata", description: "RFC 9728 metadata of the MCP endpoint." });

const AuthorizationServerMetadata = z
  .looseObject({
    issuer: z.string().max(2000),
    authorization_endpoint: z.string().max(2000),
    token_endpoint: z.string().max(2000),
    registration_endpoint: z.string().max(2000),
    revocation_endpoint: z.string().max(2000),
    code_challenge_methods_supported: z.array(z.string().max(20)).max(5),
    grant_types_supported: z.array(z.string().max(100)).max(10),
    scopes_supported: z.array(z.string().max(100)).max(10),
  })
  .meta({ id: "AuthorizationServerMetadata", description: "RFC 8414 metadata of the authorization server." });

function protectedResource(rc: RequestContext) {
  const origin = serviceOrigin(rc.env, rc.url);
  return {
    resource: mcpResource(origin),
    authorization_servers: [origin],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header" as const],
    resource_name: "PR review MCP endpoint",
  };
}

const resourceRoute = (path: string, operationId: string) =>
  defineRoute({
    method: "GET",
    path,
    operationId,
    summary: "Protected resource metadata of /mcp (RFC 9728)",
    responses: {
      200: {
        description: "Where to get a token for /mcp, and the scopes it can carry.",
        body: ProtectedResourceMetadata,
        example: {
          resource: "https://pr-review.example.com/mcp",
          authorization_servers: ["https://pr-review.example.com"],
          scopes_supported: ["analytics:read", "members:read", "members:write"],
          bearer_methods_supported: ["header"],
          resource_name: "PR review MCP endpoint",
        },
      },
    },
    errors: [],
    handler: async (_args, rc) => protectedResource(rc),
  });

const authorizationServerMetadata = defineRoute({
  method: "GET",
  path: "/.well-known/oauth-authorization-server",
  operationId: "oauthAuthorizationServerMetadata",
  summary: "Authorization server metadata (RFC 8414)",
  responses: {
    200: {
      description: "The endpoints, grant types, PKCE method and scopes of the authorization server.",
      body: AuthorizationServerMetadata,
      example: {
        issuer: "https://pr-review.example.com",
        authorization_endpoint: "https://pr-review.example.com/oauth/authorize",
        token_endpoint: "https://pr-review.example.com/oauth/token",
        registration_endpoint: "https://pr-review.example.com/oauth/register",
        revocation_endpoint: "https://pr-review.example.com/oauth/token",
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported: ["none"],
        scopes_supported: ["analytics:read", "members:read", "members:write"],
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
      },
    },
  },
  errors: [],
  handler: async (_args, rc) => {
    const origin = serviceOrigin(rc.env, rc.url);
    const answer = await (await authorizationServer(origin)).fetch(
      new Request(`${origin}/.well-known/oauth-authorization-server`),
      rc.env,
      rc.ctx,
    );
    // The library advertises the methods of confidential clients too (it has no option against
    // them); this server registers public clients only (auth/oauth-server.ts PUBLIC_CLIENT_RULE).
    const { token_endpoint_auth_signing_alg_values_supported: _signedAssertions, ...metadata } = (await answer.json()) as Record<
      string,
      unknown
    >;
    return json({ ...metadata, token_endpoint_auth_methods_supported: [PUBLIC_CLIENT_METHOD] }, answer.status);
  },
});

/** `/.well-known/...`: what an MCP client reads after its first 401. */
export const discoveryInterface: ApiInterface = {
  name: "oauth-discovery",
  description: "OAuth discovery for MCP clients (RFC 9728, RFC 8414). No credential.",
  basePath: "/.well-known",
  document: "public",
  envelope: codedErrorEnvelope,
  auth: { kind: "none" },
  errors: [],
  routes: [
    resourceRoute("/.well-known/oauth-protected-resource", "oauthProtectedResourceMetadata"),
    resourceRoute("/.well-known/oauth-protected-resource/mcp", "oauthProtectedResourceMetadataMcp"),
    authorizationServerMetadata,
  ],
};
