import {
  auth,
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { checkPage, launch } from "./browser";

/**
 * Contract section 19 with the MCP SDK's own OAuth client (`auth` of @modelcontextprotocol/client)
 * against `wrangler dev`: the first 401, discovery, dynamic registration, the consent page in
 * Chromium after the local sign-in, the token, tools, a refresh, and revocation on /app/keys.
 */

const url = inject("appUrl");
const serverUrl = new URL(`${url}/mcp`);
/** A loopback callback no server listens on: Chromium's navigation to it is caught by the test. */
const CALLBACK = "http://127.0.0.1:9899/callback";
let browser: Browser;

beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** What a desktop MCP client keeps between runs, in memory. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | null = null;

  get redirectUrl() {
    return CALLBACK;
  }
  /** The service requires `state` (contract section 19), as Claude and Cursor send it. */
  state() {
    return crypto.randomUUID();
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Browser test agent",
      redirect_uris: [CALLBACK],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(authorizationUrl: URL) {
    this.authorizationUrl = authorizationUrl;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

async function connected(provider: MemoryProvider): Promise<Client> {
  const client = new Client({ name: "oauth-browser-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  return client;
}

/** Chromium follows the authorization URL; the test signs in locally and answers the consent page. */
async function consent(page: Page, authorizationUrl: URL, decide: (page: Page) => Promise<void>): Promise<URL> {
  let callback: URL | null = null;
  await page.route(/^http:\/\/127\.0\.0\.1:9899\//, (route) => {
    callback = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: "text/plain", body: "You can close this window." });
  });
  await page.goto(authorizationUrl.href);
  // No session yet: the landing page, which comes back to the request after the local sign-in.
  await page.getByRole("button", { name: "Sign in as ada-admin" }).click();
  await page.getByRole("heading", { name: /Allow Browser test agent/ }).waitFor();
  await decide(page);
  await page.waitForURL((u) => u.href.startsWith(CALLBACK));
  if (callback === null) throw new Error("the browser never reached the callback");
  return callback;
}

describe("an MCP client connects by URL alone", () => {
  it("401 → discovery → registration → consent → token → tools → refresh → revocation", async () => {
    const provider = new MemoryProvider();
    // The first request has no token: the SDK reads the 401's resource_metadata, discovers, registers.
    await expect(connected(provider)).rejects.toThrow(/Unauthorized/i);
    expect(provider.client?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl;
    if (authorizationUrl === null) throw new Error("the SDK asked for no authorization");
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(serverUrl.href);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const callback = await consent(page, authorizationUrl, async (p) => {
      await p.getByText("127.0.0.1").first().waitFor();
      await checkPage(p, "oauth-consent");
      await p.getByRole("button", { name: "Approve" }).click();
    });
    expect(callback.searchParams.get("iss")).toBe(url);
    const code = callback.searchParams.get("code") ?? "";
    expect(await auth(provider, { serverUrl, authorizationCode: code, iss: url })).toBe("AUTHORIZED");

    const client = await connected(provider);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("update_member");
    expect(tools).toContain("list_pull_request_analytics");
    const orgs = await client.callTool({ name: "list_organizations", arguments: {} });
    expect(orgs.isError).toBeFalsy();
    expect(JSON.stringify(orgs.structuredContent)).toContain("acme");
    await client.close();

    // A refresh: the SDK trades the refresh token for new tokens, which work.
    const before = provider.saved;
    if (!before?.refresh_token) throw new Error("no refresh token");
    provider.saved = { ...before, access_token: "expired" };
    expect(await auth(provider, { serverUrl })).toBe("AUTHORIZED");
    expect(provider.saved?.refresh_token).not.toBe(before.refresh_token);
    const refreshed = await connected(provider);
    expect((await refreshed.listTools()).tools.length).toBeGreaterThan(0);

    // Connected apps on /app/keys: listed, then disconnected; the next call is refused.
    await page.goto(`${url}/app/keys`);
    await page.getByRole("heading", { name: "Browser test agent" }).waitFor();
    await checkPage(page, "keys-connected-apps");
    await page.getByRole("button", { name: "Disconnect Browser test agent" }).click();
    await page.getByText("Browser test agent is disconnected").waitFor();
    const token = provider.saved?.access_token ?? "";
    const after = await fetch(serverUrl, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(after.status).toBe(401);
    expect(after.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    await refreshed.close();
    await context.close();
  });

  it("a scope the person unticks is not granted: its tools are not listed", async () => {
    const provider = new MemoryProvider();
    await expect(connected(provider)).rejects.toThrow(/Unauthorized/i);
    const authorizationUrl = provider.authorizationUrl;
    if (authorizationUrl === null) throw new Error("the SDK asked for no authorization");
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    const callback = await consent(page, authorizationUrl, async (p) => {
      await p.getByRole("checkbox", { name: /members:write/ }).uncheck();
      await p.getByRole("button", { name: "Approve" }).click();
    });
    await auth(provider, { serverUrl, authorizationCode: callback.searchParams.get("code") ?? "", iss: url });
    expect(provider.saved?.scope?.split(" ").sort()).toEqual(["analytics:read", "members:read"]);
    const client = await connected(provider);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("list_members");
    expect(tools).not.toContain("update_member");
    await client.close();
    await context.close();
  });

  it("deny sends the browser back with error=access_denied", async () => {
    const provider = new MemoryProvider();
    await expect(connected(provider)).rejects.toThrow(/Unauthorized/i);
    const authorizationUrl = provider.authorizationUrl;
    if (authorizationUrl === null) throw new Error("the SDK asked for no authorization");
    const context = await browser.newContext();
    const page = await context.newPage();
    const callback = await consent(page, authorizationUrl, (p) => p.getByRole("button", { name: "Deny" }).click());
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expect(callback.searchParams.get("iss")).toBe(url);
    await context.close();
  });
});
