import { checkAdminToken, configuredAdminToken } from "../auth/admin-token";
import { parseBearer } from "../auth/api-key";
import { clientAddress, type KnownKey, lookupApiKey, principalOf, type VerifiedKey, verifyApiKey } from "../auth/authenticate";
import { countFailedAuthentication, refuseThrottledClient } from "../auth/flood";
import { requireScope } from "../auth/key-scopes";
import { changesState, requireCsrfToken, requireSameOrigin, requireSessionCookie, verifySession } from "../auth/session";
import type { KeyHolder } from "../auth/user-object";
import { parseSignatureHeader, SignatureVerifier } from "../auth/webhook-signature";
import { AppError, type ErrorCode, notFound } from "../lib/errors";
import { type QuotaVerdict, quotaHeaders } from "../rules/quota";
import type { KeyKind } from "../schemas/key-kind";
import type { User } from "../schemas/user";
import { parseJsonObject, readJsonBytes } from "./body";
import { requireMcpOrigin } from "./mcp-origin";
import { countOAuthCall, isOAuthToken, verifyOAuthToken, withResourceChallenge } from "./oauth-bearer";
import type { CallerKey, InterfaceAuth, RequestContext, Route } from "./route";

/**
 * The authentication stage, for every interface and every kind of credential: the one place that
 * knows how each kind is checked, and where failures are counted per client address
 * (`auth/flood.ts`: an address over the limit gets 429 before its credential is looked at).
 * Order inside the stage: the credential's configuration (404 when the interface does not exist
 * without it), the flood throttle (429), then the credential (401, counted).
 */

/** A session's verified user with the session's CSRF token. */
export interface SessionCaller {
  user: User;
  csrfToken: string;
}

/** What the stage established, for the rest of the route's stages. */
export type Authenticated =
  | { kind: "none" }
  /**
   * The key exists (or the session cookie is well formed), so the caller's id is known; the verdict
   * (still current, owner not blocked, quota) is settled alongside the parameters.
   */
  | { kind: "apiKey"; callerId: string; verdict: Promise<KeyCaller> }
  | { kind: "session"; callerId: string; verdict: Promise<SessionCaller> }
  /** A key of either kind, judged (401 here), not counted: the route counts what it runs. */
  | { kind: "anyApiKey"; user: User; key: CallerKey; body: Record<string, unknown> | unknown[] }
  | { kind: "adminToken" }
  /** The body, exactly as sent and verified. */
  | { kind: "webhookSignature"; body: Uint8Array };

/** What the documents say about an interface's authentication. */
export interface AuthDocumentation {
  /** The security scheme's name in the OpenAPI components, or null. */
  securityScheme: string | null;
  /** Error codes the stage itself can answer. */
  errors: readonly ErrorCode[];
  /** Whether its 401 carries `WWW-Authenticate: Bearer`. */
  bearer: boolean;
  /** Whether the stage runs for every path under the base path, routed or not. */
  everyPath: boolean;
}

/** The documentation of each kind of authentication. */
export function authDocumentation(auth: InterfaceAuth): AuthDocumentation {
  switch (auth.kind) {
    case "none":
      return { securityScheme: null, errors: [], bearer: false, everyPath: false };
    case "apiKey":
      return {
        securityScheme: auth.keyKind === "analytics" ? "analyticsKey" : "membersKey",
        errors: ["unauthenticated", "ip_not_allowed", "rate_limited"],
        bearer: true,
        everyPath: false,
      };
    case "anyApiKey":
      return {
        securityScheme: null,
        errors: ["unauthenticated", "ip_not_allowed", "rate_limited"],
        bearer: true,
        everyPath: false,
      };
    case "adminToken":
      return {
        securityScheme: "adminToken",
        errors: ["unauthenticated", "not_found", "rate_limited"],
        bearer: true,
        everyPath: true,
      };
    case "webhookSignature":
      return {
        securityScheme: "githubSignature",
        errors: ["unauthenticated", "not_found", "rate_limited"],
        bearer: false,
        // Without a secret the path does not exist for any method (contract section 9): no 405.
        everyPath: true,
      };
    case "session":
      // csrf_failed only where the method changes state (openapi/documents.ts leaves it off GET).
      return {
        securityScheme: "sessionCookie",
        errors: ["unauthenticated", "csrf_failed", "rate_limited"],
        bearer: false,
        everyPath: false,
      };
    case "sameOrigin":
      return { securityScheme: null, errors: ["csrf_failed"], bearer: false, everyPath: false };
  }
}

/**
 * Runs the interface's authentication for a request (`route` null: a path no route matches, for
 * interfaces whose authentication covers every path).
 */
export async function authenticate(
  auth: InterfaceAuth,
  route: Route | null,
  rc: RequestContext,
  now: number,
): Promise<Authenticated> {
  switch (auth.kind) {
    case "none":
      return { kind: "none" };
    case "apiKey": {
      const known = await counted(rc, now, () => lookupApiKey(rc.request, rc.env, auth.keyKind));
      return { kind: "apiKey", callerId: principalOf(known.record), verdict: verifiedCaller(rc, known, route, now) };
    }
    case "session": {
      const cookie = await counted(rc, now, async () => requireSessionCookie(rc.request));
      // The Origin first: it needs no storage, and a cross-site request learns nothing more.
      if (changesState(rc.request)) requireSameOrigin(rc.request, rc.url);
      return { kind: "session", callerId: cookie.userId, verdict: verifiedSession(rc, cookie, route?.quota ?? null, now) };
    }
    case "sameOrigin":
      if (changesState(rc.request)) requireSameOrigin(rc.request, rc.url);
      return { kind: "none" };
    case "anyApiKey":
      // Contract section 19: a 401 of /mcp names the protected resource's metadata.
      return mcpCaller(route, rc, now).catch((error: unknown) => {
        throw withResourceChallenge(error, rc);
      });
    case "adminToken": {
      const expected = configuredAdminToken(rc.env);
      await counted(rc, now, () => checkAdminToken(rc.request, expected));
      return { kind: "adminToken" };
    }
    case "webhookSignature": {
      const secrets = webhookSecrets(rc.env);
      // An unrouted method: only whether the path exists (the 404 above) is this stage's to say.
      if (route === null) return { kind: "none" };
      const maxBytes = route?.request?.body?.maxBytes;
      if (maxBytes === undefined) throw new Error("a webhook-signature route must declare its raw body");
      const body = await counted(rc, now, () => signedBody(rc.request, secrets, maxBytes));
      return { kind: "webhookSignature", body };
    }
  }
}

/**
 * `/mcp`'s caller: a key of either kind, or an OAuth access token (contract sections 15 and 19),
 * judged without counting; the route counts through `CallerKey.count` what it runs. The Origin
 * rule first (403, no credential looked at). The body is read alongside the verdict; a body that
 * fails still waits for it, so a refused credential is a 401 first.
 */
async function mcpCaller(route: Route | null, rc: RequestContext, now: number): Promise<Authenticated> {
  requireMcpOrigin(rc);
  const maxBytes = route?.request?.body?.maxBytes;
  if (maxBytes === undefined) throw new Error("an anyApiKey route must declare its body");
  const readBody = () =>
    readJsonBytes(rc.request, maxBytes).then(
      (bytes) => ({ ok: true as const, value: parseJsonObject(bytes, { arrays: true }) }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  const bearer = parseBearer(rc.request.headers.get("Authorization"));
  if (bearer.kind === "token" && isOAuthToken(bearer.token)) {
    refuseThrottledClient(rc.request, now);
    const body = readBody();
    const token = await verifyOAuthToken(rc, bearer.token, now).catch((error) =>
      countFailedAuthentication(rc.request, rc.env, error, now),
    );
    const read = await body;
    if (!read.ok) throw read.error;
    // Counting judges the grant again in the same call: a grant revoked meanwhile is refused then.
    const count = (kind: KeyKind) =>
      countOAuthCall(rc, token, kind).then((quota) => {
        setQuotaHeaders(rc, quota, now);
        return quota;
      });
    // A token is no key: no holder (its changes' audit entries name no key), the scopes the person approved.
    const key = { kind: null, userId: token.userId, holder: null, scopes: token.scopes, count };
    return { kind: "anyApiKey", user: token.user, key, body: read.value };
  }
  const known = await counted(rc, now, () => lookupApiKey(rc.request, rc.env, null));
  const body = readBody();
  const { user, key: holder } = await judgedKey(rc, known, now, false);
  const read = await body;
  if (!read.ok) throw read.error;
  // Counting judges the key again in the same call (one round trip): a key revoked meanwhile is refused then.
  const count = () => judgedKey(rc, known, now, true).then((verdict) => verdict.quota);
  const key = { kind: known.record.kind, userId: principalOf(known.record), holder, scopes: holder.scopes, count };
  return { kind: "anyApiKey", user, key, body: read.value };
}

/** Throttled addresses are refused first; a refused credential is counted against its address. */
async function counted<T>(rc: RequestContext, now: number, check: () => Promise<T>): Promise<T> {
  refuseThrottledClient(rc.request, now);
  return check().catch((error) => countFailedAuthentication(rc.request, rc.env, error, now));
}

/** A key's verified owner and the key itself. */
export interface KeyCaller {
  user: User;
  key: KeyHolder;
}

/**
 * The second half of an API key: the owner's Durable Object judges the key (401, counted), the
 * caller's address (403 `ip_not_allowed`, not counted) and counts the request against the owner's
 * quota (429), in one call; then the route's scope (403 `insufficient_scope`, counted). Resolves to
 * the caller; the quota headers go on whatever the request answers.
 */
async function verifiedCaller(rc: RequestContext, known: KnownKey, route: Route | null, now: number): Promise<KeyCaller> {
  const { user, key, quota } = await judgedKey(rc, known, now, true);
  if (quota !== null && !quota.allowed) throw quotaExceeded(quota);
  if (route?.scope) requireScope(key.scopes, route.scope);
  return { user, key };
}

/** The 429 of an exhausted quota (contract section 7). */
export const quotaExceeded = (quota: QuotaVerdict): AppError =>
  new AppError(
    "rate_limited",
    `Rate limit exceeded: ${quota.limit} requests per ${quota.windowMs / 1000} seconds. Retry after the Retry-After seconds.`,
  );

/** The owner's verdict on the key (401, counted per address), counting the request when `count`; the quota headers go on the answer. */
async function judgedKey(rc: RequestContext, known: KnownKey, now: number, count: boolean): Promise<VerifiedKey> {
  const verdict = await verifyApiKey(rc.env, known, clientAddress(rc.request), now, count).catch((error) =>
    countFailedAuthentication(rc.request, rc.env, error, now),
  );
  setQuotaHeaders(rc, verdict.quota, now);
  return verdict;
}

/**
 * A session's user's object judges the session (401, counted) and counts the request against the
 * route's quota, as a key of that kind would (429); then, for a state-changing request, the
 * session's CSRF token must be in `X-CSRF-Token` (403).
 */
async function verifiedSession(
  rc: RequestContext,
  cookie: { userId: string; token: string },
  quotaKind: KeyKind | null,
  now: number,
): Promise<SessionCaller> {
  const session = await verifySession(rc.env, cookie, now, quotaKind).catch((error) =>
    countFailedAuthentication(rc.request, rc.env, error, now),
  );
  setQuotaHeaders(rc, session.quota, now);
  if (session.quota !== null && !session.quota.allowed) throw quotaExceeded(session.quota);
  if (changesState(rc.request)) requireCsrfToken(rc.request, session.csrfToken);
  return { user: session.user, csrfToken: session.csrfToken };
}

/** The quota headers go on whatever the request answers. */
function setQuotaHeaders(rc: RequestContext, quota: QuotaVerdict | null, now: number): void {
  if (quota === null) return;
  for (const [name, value] of Object.entries(quotaHeaders(quota, now))) rc.responseHeaders.set(name, value);
}

/** The current secret and, during a rotation, the previous one; without a current one the path does not exist. */
function webhookSecrets(env: Env): string[] {
  if (!env.GITHUB_WEBHOOK_SECRET) throw notFound();
  return [env.GITHUB_WEBHOOK_SECRET, env.GITHUB_WEBHOOK_SECRET_PREVIOUS].filter(
    (s): s is string => typeof s === "string" && s !== "",
  );
}

/**
 * The signature header (401) before any byte is read, then the body (415, 413) with the HMAC of
 * every secret computed chunk by chunk, then the comparison (401).
 */
async function signedBody(request: Request, secrets: readonly string[], maxBytes: number): Promise<Uint8Array> {
  const header = parseSignatureHeader(request.headers.get("X-Hub-Signature-256"));
  if (header.kind !== "signature") throw unsigned(header.kind === "missing" ? "is required" : "must be sha256=<64 hex digits>");
  const verifier = new SignatureVerifier(secrets);
  const body = await readJsonBytes(request, maxBytes, { onChunk: (chunk) => verifier.update(chunk) });
  if (!verifier.matches(header.bytes)) throw unsigned("does not match the body");
  return body;
}

// Not `unauthenticated()`: a webhook's 401 has no bearer scheme to name.
const unsigned = (what: string) =>
  new AppError("unauthenticated", `X-Hub-Signature-256 ${what}: sign the raw body with the webhook secret.`);
