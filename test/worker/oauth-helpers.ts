import { expect } from "vitest";
import { appCall, type Session, signIn } from "./app-helpers";
import { call } from "./helpers";

/**
 * An MCP client's OAuth flow against the Worker (contract section 19), step by step, as raw HTTP:
 * registration, the authorization request with PKCE, the consent page and its decision (as the
 * page's script sends it), the token endpoint. The SDK's own client drives the same flow in the
 * browser test (test/browser/oauth.test.ts).
 */

export const ORIGIN = "https://service.test";
export const RESOURCE = `${ORIGIN}/mcp`;
export const REDIRECT = "http://127.0.0.1:33418/callback";
export const ALL_SCOPES = ["analytics:read", "members:read", "members:write"];

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge: base64url(digest) };
}

export async function registerClient(redirectUri = REDIRECT, name = "Test agent"): Promise<string> {
  const res = await call("/oauth/register", {
    method: "POST",
    json: { client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: "none" },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

export interface AuthorizeOptions {
  clientId: string;
  challenge: string;
  state?: string | null;
  method?: string;
  scope?: string;
  resource?: string | null;
  redirectUri?: string;
}

export function authorizeUrl(o: AuthorizeOptions): string {
  const q = new URLSearchParams({
    response_type: "code",
    client_id: o.clientId,
    redirect_uri: o.redirectUri ?? REDIRECT,
    code_challenge: o.challenge,
    code_challenge_method: o.method ?? "S256",
    scope: o.scope ?? ALL_SCOPES.join(" "),
  });
  if (o.state !== null) q.set("state", o.state ?? "state-123");
  if (o.resource !== null) q.set("resource", o.resource ?? RESOURCE);
  return `/oauth/authorize?${q}`;
}

export interface ConsentData {
  handle: string;
  clientName: string;
  clientDomain: string | null;
  redirectHost: string;
  redirectIsLoopback: boolean;
  scopes: string[];
}

/** The consent page for a signed-in person: its data block and the browser-binding cookie it set. */
export async function openConsent(session: Session, path: string): Promise<{ data: ConsentData; cookie: string }> {
  const res = await call(path, { headers: { Cookie: session.cookie } });
  expect(res.status, await res.clone().text()).toBe(200);
  const html = await res.text();
  const json = /<script type="application\/json" id="consent-data">(.*?)<\/script>/s.exec(html)?.[1];
  if (!json) throw new Error(`no consent data in ${html}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return { data: JSON.parse(json) as ConsentData, cookie };
}

/** The page's decision, as `web/pages/consent.tsx` posts it. */
export async function decide(session: Session, consentCookie: string, handle: string, approve: boolean, scopes: string[]) {
  const withBinding = { ...session, cookie: `${session.cookie}; ${consentCookie}` };
  return appCall("/app/api/oauth/consent", withBinding, { method: "POST", json: { handle, approve, scopes } });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

export const tokenRequest = (form: Record<string, string>) =>
  call("/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });

/** The whole flow for a person: registered client, consent with `scopes` left ticked, tokens. */
export async function connect(userId: string, scopes: string[] = ALL_SCOPES) {
  const session = await signIn(userId);
  const clientId = await registerClient();
  const { verifier, challenge } = await pkce();
  const { data, cookie } = await openConsent(session, authorizeUrl({ clientId, challenge }));
  const decided = await decide(session, cookie, data.handle, true, scopes);
  expect(decided.status).toBe(200);
  const redirect = new URL(((await decided.json()) as { redirectTo: string }).redirectTo);
  const code = redirect.searchParams.get("code") ?? "";
  const res = await tokenRequest({
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    client_id: clientId,
    resource: RESOURCE,
  });
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as Tokens;
  return { session, clientId, tokens, redirect, code, verifier };
}
