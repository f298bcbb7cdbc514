import { parseBearer } from "../auth/api-key";
import { type GrantProps, isGrantProps, judgeGrant, type TokenCaller } from "../auth/grants";
import { authorizationServer, mcpResource, resourceMetadataUrl, serviceOrigin } from "../auth/oauth-server";
import { SCOPES } from "../auth/scopes";
import { AppError } from "../lib/errors";
import type { QuotaVerdict } from "../rules/quota";
import type { KeyKind } from "../schemas/key-kind";
import type { RequestContext } from "./route";

/**
 * OAuth access tokens on `/mcp` (contract section 19), beside the service's own keys: the library
 * says what the token is (its KV record: audience, expiry, props), then the person's UserObject
 * says whether the grant still works and counts the request, in one call, as for a key.
 */

/** The service's keys have these prefixes; any other bearer token on `/mcp` is taken for an OAuth token. */
export const isOAuthToken = (token: string): boolean => !/^c[ab]k_/.test(token);

const INVALID_TOKEN = "Invalid, expired or revoked access token.";

/** An OAuth token the library and the person's object both accept, not counted yet. */
export interface VerifiedToken extends TokenCaller {
  props: GrantProps;
}

/** What the library's record says of a token: whose grant, which scopes, until when (epoch seconds). */
interface TokenRecord {
  props: GrantProps;
  scope: string[];
  expiresAt: number;
}

/**
 * The library's answers by the token's SHA-256, per isolate, for at most 30 s (and never past the
 * token's expiry): a tool call then costs no KV read and no decryption. Whether the grant still
 * works is never cached: the person's object is asked on every request, so revoking a grant or
 * blocking the person is refused on the next one. What this can delay is the library's own
 * revocation of one access token (RFC 7009), by no more than KV's own propagation already may.
 */
const records = new Map<string, { record: TokenRecord; until: number }>();
const RECORD_CACHE_MS = 30_000;
const RECORD_CACHE_LIMIT = 10_000;

const sha256 = async (text: string): Promise<string> =>
  btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))));

async function tokenRecord(rc: RequestContext, token: string, now: number): Promise<TokenRecord | null> {
  const hash = await sha256(token);
  const cached = records.get(hash);
  if (cached && cached.until > now) return cached.record;
  records.delete(hash);
  const origin = serviceOrigin(rc.env, rc.url);
  const validated = await (await authorizationServer(origin)).validateToken(mcpResource(origin), token, rc.env);
  if (validated === null || !isGrantProps(validated.props) || validated.props.userId !== validated.userId) return null;
  const record = { props: validated.props, scope: validated.scope, expiresAt: validated.expiresAt };
  if (records.size >= RECORD_CACHE_LIMIT) records.clear();
  records.set(hash, { record, until: Math.min(now + RECORD_CACHE_MS, record.expiresAt * 1000) });
  return record;
}

/** The verdict on an OAuth token (401 for every "no", with the same message), counted against nothing. */
export async function verifyOAuthToken(rc: RequestContext, token: string, now: number): Promise<VerifiedToken> {
  const validated = await tokenRecord(rc, token, now);
  if (validated === null || validated.expiresAt * 1000 <= now) throw new AppError("unauthenticated", INVALID_TOKEN);
  // The token carries at most the scopes approved; the grant (stored in the person's object) is the ceiling.
  const tokenScopes = SCOPES.filter((scope) => validated.scope.includes(scope));
  const caller = await judgeGrant(rc.env, validated.props, now, null);
  if (caller === null) throw new AppError("unauthenticated", INVALID_TOKEN);
  const scopes = caller.scopes.filter((scope) => tokenScopes.includes(scope));
  return { ...caller, scopes, props: validated.props };
}

/**
 * Counts a call the route runs against the person's quota of `kind` (the tool's: analytics or
 * members), judging the grant again in the same call: one revoked meanwhile is refused then.
 */
export async function countOAuthCall(rc: RequestContext, token: VerifiedToken, kind: KeyKind): Promise<QuotaVerdict | null> {
  const caller = await judgeGrant(rc.env, token.props, Date.now(), kind);
  if (caller === null) throw new AppError("unauthenticated", INVALID_TOKEN);
  return caller.quota;
}

/**
 * A 401 of `/mcp` names where to get a token (RFC 9728 section 5.1; RFC 6750 section 3.1 adds
 * `invalid_token` when one was sent), so an OAuth client finds the authorization server from it.
 */
export function withResourceChallenge(error: unknown, rc: RequestContext): unknown {
  if (!(error instanceof AppError) || error.code !== "unauthenticated") return error;
  const metadata = resourceMetadataUrl(serviceOrigin(rc.env, rc.url));
  const sent = parseBearer(rc.request.headers.get("Authorization")).kind === "token";
  error.headers["WWW-Authenticate"] = `Bearer resource_metadata="${metadata}"${sent ? ', error="invalid_token"' : ""}`;
  return error;
}
