import * as oauth from "oauth4webapi";
import { z } from "zod";
import { DEFAULT_API_URL } from "./config";

/**
 * GitHub's OAuth web flow for a GitHub App's user authorization (contract section 13), with
 * `state` and PKCE S256, through oauth4webapi (standards-checked request building and response
 * parsing: the callback's parameters, the token answer). GitHub's web origin and API root are
 * configuration, so tests run the flow against a fake GitHub on loopback.
 */

export interface OAuthEnv {
  GITHUB_CLIENT_ID?: string;
  GITHUB_CLIENT_SECRET?: string;
  GITHUB_OAUTH_URL?: string;
  GITHUB_API_URL?: string;
  /** The service's public origin, where GitHub sends the person back (never the request's `Host`). */
  APP_URL?: string;
}

export const DEFAULT_OAUTH_URL = "https://github.com";

export interface OAuthConfig {
  clientId: string;
  clientSecret: string;
  /** Without a trailing slash: `https://github.com` or a GitHub Enterprise Server's `https://HOST`. */
  oauthUrl: string;
  apiUrl: string;
  /** The OAuth `redirect_uri`: `APP_URL` + `/auth/github/callback`. */
  callbackUrl: string;
}

export type OAuthSetting =
  | { kind: "on"; config: OAuthConfig }
  | { kind: "off"; missing: ("GITHUB_CLIENT_ID" | "GITHUB_CLIENT_SECRET" | "APP_URL")[] }
  | { kind: "misconfigured"; reason: string };

const baseUrl = (raw: string, name: string): string | { reason: string } => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: `${name} is not a URL` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { reason: `${name} must be http(s)` };
  if (url.search || url.hash) return { reason: `${name} must carry no query or fragment` };
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
};

/** `APP_URL` is an origin: scheme, host and port, nothing after (a trailing slash is forgiven). */
const publicOrigin = (raw: string): string | { reason: string } => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: "APP_URL is not a URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { reason: "APP_URL must be http(s)" };
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    return { reason: "APP_URL must be an origin (https://HOST[:PORT]), nothing after it" };
  }
  return url.origin;
};

/** Whether GitHub sign-in is configured, and how. */
export function githubOAuth(env: OAuthEnv): OAuthSetting {
  const clientId = env.GITHUB_CLIENT_ID?.trim() ?? "";
  const clientSecret = env.GITHUB_CLIENT_SECRET?.trim() ?? "";
  const appUrl = env.APP_URL?.trim() ?? "";
  const missing: ("GITHUB_CLIENT_ID" | "GITHUB_CLIENT_SECRET" | "APP_URL")[] = [];
  if (clientId === "") missing.push("GITHUB_CLIENT_ID");
  if (clientSecret === "") missing.push("GITHUB_CLIENT_SECRET");
  if (appUrl === "") missing.push("APP_URL");
  if (missing.length > 0) return { kind: "off", missing };
  const origin = publicOrigin(appUrl);
  if (typeof origin !== "string") return { kind: "misconfigured", reason: origin.reason };
  const oauthUrl = baseUrl(env.GITHUB_OAUTH_URL?.trim() || DEFAULT_OAUTH_URL, "GITHUB_OAUTH_URL");
  if (typeof oauthUrl !== "string") return { kind: "misconfigured", reason: oauthUrl.reason };
  const apiUrl = baseUrl(env.GITHUB_API_URL?.trim() || DEFAULT_API_URL, "GITHUB_API_URL");
  if (typeof apiUrl !== "string") return { kind: "misconfigured", reason: apiUrl.reason };
  return { kind: "on", config: { clientId, clientSecret, oauthUrl, apiUrl, callbackUrl: `${origin}/auth/github/callback` } };
}

const server = (config: OAuthConfig): oauth.AuthorizationServer => ({
  issuer: config.oauthUrl,
  authorization_endpoint: `${config.oauthUrl}/login/oauth/authorize`,
  token_endpoint: `${config.oauthUrl}/login/oauth/access_token`,
});

/** oauth4webapi refuses plain http; only a loopback GitHub (the tests' fake) may use it. */
const options = (config: OAuthConfig) => {
  const host = new URL(config.oauthUrl).hostname;
  const loopback = host === "127.0.0.1" || host === "localhost" || host === "[::1]";
  return { [oauth.allowInsecureRequests]: loopback, signal: AbortSignal.timeout(10_000) };
};

/** A new attempt: the `state` and the PKCE verifier to keep, and GitHub's authorize URL to send the person to. */
export async function authorizationRequest(
  config: OAuthConfig,
  redirectUri: string,
): Promise<{ state: string; verifier: string; url: URL }> {
  const state = oauth.generateRandomState();
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(server(config).authorization_endpoint as string);
  url.searchParams.set("client_id", config.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  return { state, verifier, url };
}

/** Only what the service keeps of `GET /user`. */
const GithubUser = z.object({ id: z.number().int().positive(), login: z.string().min(1).max(39) });

export type CallbackOutcome =
  | { kind: "user"; githubUserId: string; githubLogin: string }
  /** The person declined at GitHub (`error=access_denied`), or GitHub reported another error. */
  | { kind: "denied"; error: string }
  /** GitHub refused the code: used already, expired, or not for this verifier. */
  | { kind: "refused"; detail: string }
  /** GitHub did not answer usefully (network, 5xx, a body that is not GitHub's). */
  | { kind: "unavailable"; detail: string };

/**
 * The callback's second half, once `state` is known to be this browser's unused attempt: GitHub's
 * error if it sent one, else the code exchanged (with the verifier) and the user read from `/user`.
 * Never throws for anything GitHub does.
 */
export async function completeAuthorization(
  config: OAuthConfig,
  callbackUrl: URL,
  redirectUri: string,
  state: string,
  verifier: string,
): Promise<CallbackOutcome> {
  const as = server(config);
  const client: oauth.Client = { client_id: config.clientId };
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, callbackUrl, state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) return { kind: "denied", error: error.error };
    return { kind: "refused", detail: String(error) };
  }

  let token: string;
  try {
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(config.clientSecret),
      params,
      redirectUri,
      verifier,
      options(config),
    );
    if (response.status >= 500) return { kind: "unavailable", detail: `token endpoint answered ${response.status}` };
    // GitHub answers a bad code with 200 and an OAuth error body, which oauth4webapi would only
    // report as a missing access_token.
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as { error?: unknown } | null;
    if (response.status === 200 && typeof body?.error === "string") return { kind: "refused", detail: body.error };
    token = (await oauth.processAuthorizationCodeResponse(as, client, response)).access_token;
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { kind: "refused", detail: error.error };
    return { kind: "unavailable", detail: String(error) };
  }

  try {
    const response = await fetch(`${config.apiUrl}/user`, {
      headers: {
        Accept: "application/vnd.github+json",
        Authorization: `Bearer ${token}`,
        "User-Agent": "pr-review-service",
        "X-GitHub-Api-Version": "2022-11-28",
      },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return { kind: "unavailable", detail: `GET /user answered ${response.status}` };
    }
    const user = GithubUser.safeParse(await response.json());
    if (!user.success) return { kind: "unavailable", detail: "GET /user answered no id and login" };
    return { kind: "user", githubUserId: String(user.data.id), githubLogin: user.data.login };
  } catch (error) {
    return { kind: "unavailable", detail: String(error) };
  }
}
