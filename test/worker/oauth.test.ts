import { describe, expect, it } from "vitest";
import { call, createKey, createUser } from "./helpers";
import { callTool } from "./mcp-helpers";

const ORIGIN = "https://service.test";

describe("discovery (RFC 9728, RFC 8414)", () => {
  it("publishes the protected resource metadata of /mcp, at the root and under /mcp's path", async () => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: `${ORIGIN}/mcp`,
        authorization_servers: [ORIGIN],
        scopes_supported: ["analytics:read", "members:read", "members:write"],
        bearer_methods_supported: ["header"],
        resource_name: "PR review MCP endpoint",
      });
    }
  });

  it("publishes the authorization server metadata", async () => {
    const res = await call("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      revocation_endpoint: `${ORIGIN}/oauth/token`,
      code_challenge_methods_supported: ["S256"],
      scopes_supported: ["analytics:read", "members:read", "members:write"],
      authorization_response_iss_parameter_supported: true,
      // Client ID metadata documents: the option and the global_fetch_strictly_public flag are both on.
      client_id_metadata_document_supported: true,
    });
    expect(body.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    // Public clients only (contract section 19): no client secret, no signed client assertion.
    expect(body.token_endpoint_auth_methods_supported).toEqual(["none"]);
    expect(body).not.toHaveProperty("token_endpoint_auth_signing_alg_values_supported");
  });
});

describe("dynamic client registration (RFC 7591)", () => {
  const register = (redirectUris: string[]) =>
    call("/oauth/register", {
      method: "POST",
      json: { client_name: "Test agent", redirect_uris: redirectUris, token_endpoint_auth_method: "none" },
    });

  it("registers a public client with a loopback or https redirect URI", async () => {
    for (const uri of ["http://127.0.0.1:33418/callback", "http://localhost:6274/oauth/callback", "https://agent.example/cb"]) {
      const res = await register([uri]);
      expect(res.status, uri).toBe(201);
      const body = (await res.json()) as { client_id: string; redirect_uris: string[]; token_endpoint_auth_method: string };
      expect(body.redirect_uris).toEqual([uri]);
      expect(body.token_endpoint_auth_method).toBe("none");
    }
  });

  it("refuses a confidential client (any method but none) with 400 invalid_client_metadata, and stores no client", async () => {
    for (const method of ["client_secret_basic", "client_secret_post", "private_key_jwt", "", null]) {
      const res = await call("/oauth/register", {
        method: "POST",
        json: { client_name: "Server app", redirect_uris: ["https://agent.example/cb"], token_endpoint_auth_method: method },
      });
      expect(res.status, String(method)).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body, String(method)).toEqual({
        error: "invalid_client_metadata",
        error_description:
          'token_endpoint_auth_method must be "none": this server registers public clients only (PKCE, no secret).',
      });
    }
  });

  it("registers a client that names no method as a public one (RFC 7591 lets the server substitute the default)", async () => {
    const res = await call("/oauth/register", {
      method: "POST",
      json: { client_name: "Terse agent", redirect_uris: ["http://127.0.0.1:33418/callback"] },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.token_endpoint_auth_method).toBe("none");
    expect(body).not.toHaveProperty("client_secret");
  });

  it("refuses any other redirect URI with 400 invalid_redirect_uri", async () => {
    for (const uri of ["http://agent.example/cb", "http://localhost/cb", "cursor://anysphere/cb", "javascript:alert(1)"]) {
      const res = await register(["https://agent.example/cb", uri]);
      expect(res.status, uri).toBe(400);
      expect(((await res.json()) as { error: string }).error, uri).toBe("invalid_redirect_uri");
    }
  });
});

describe("origins of /mcp (DNS rebinding)", () => {
  const list = (key: string, origin: string | null, vars?: Record<string, string>) =>
    callTool(key, "list_organizations", {}, { headers: origin === null ? {} : { Origin: origin }, vars });

  it("no Origin, the service's own, a loopback one, or one listed in MCP_ALLOWED_ORIGINS pass", async () => {
    const userId = await createUser();
    const { key } = await createKey(userId, "members");
    for (const origin of [null, "https://service.test", "http://localhost:6274", "http://127.0.0.1:3000"]) {
      const { response } = await list(key, origin);
      expect(response.status, String(origin)).toBe(200);
    }
    const listed = await list(key, "https://inspector.example", {
      MCP_ALLOWED_ORIGINS: "https://other.example, https://inspector.example",
    });
    expect(listed.response.status).toBe(200);
  });

  it("any other Origin: 403, before the key, counted against nothing", async () => {
    const userId = await createUser();
    const { key } = await createKey(userId, "members");
    for (const origin of ["https://evil.example", "null", "http://service.test"]) {
      const { response, body } = await list(key, origin);
      expect(response.status, origin).toBe(403);
      expect(body).toMatchObject({ error: { code: "origin_not_allowed" } });
      expect(response.headers.get("X-RateLimit-Used")).toBeNull();
    }
    expect((await list(key, null)).response.headers.get("X-RateLimit-Used")).toBe("1");
  });
});
