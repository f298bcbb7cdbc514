import { callDurable, type DurableResult, unwrap } from "../lib/durable-call";
import { AppError } from "../lib/errors";
import { type QuotaVerdict, quotaPolicy } from "../rules/quota";
import type { KeyKind } from "../schemas/key-kind";
import type { User } from "../schemas/user";
import type { Scope } from "./scopes";
import type { GrantVerdict } from "./user-object";
import type { GrantSummary, NewGrant } from "./user-store/grants";
import { userStub } from "./user-stub";

/**
 * OAuth grants as the rest of the Worker sees them (contract section 19). A token is what the
 * library's KV records say it is; whether it still works is what the person's UserObject says,
 * on every request, as for keys (section 2): revoking or blocking is refused on the next request at
 * every location, whatever KV still serves elsewhere.
 */

/** What `completeAuthorization` stores with a grant and every token of it (encrypted by the library). */
export interface GrantProps {
  grantId: string;
  userId: string;
}

/** The verdict on a bearer token of `/mcp`: who, with which scopes, and the quota's verdict when counted. */
export interface TokenCaller {
  user: User;
  userId: string;
  scopes: Scope[];
  quota: QuotaVerdict | null;
}

const GRANT_ID = /^grt_[A-Za-z0-9_-]{32}$/;

/** A new grant id: `grt_` + 24 random bytes, base64url. */
export function newGrantId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `grt_${btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "")}`;
}

export const isGrantProps = (props: unknown): props is GrantProps =>
  typeof props === "object" &&
  props !== null &&
  typeof (props as GrantProps).grantId === "string" &&
  GRANT_ID.test((props as GrantProps).grantId) &&
  typeof (props as GrantProps).userId === "string";

/**
 * The person's object judges the grant behind a validated token and counts the request against
 * the quota of `kind` (null: not counted). Null when the grant no longer works.
 */
export async function judgeGrant(env: Env, props: GrantProps, now: number, kind: KeyKind | null): Promise<TokenCaller | null> {
  const policy = kind === null ? null : quotaPolicy(env, kind);
  const verdict = await callDurable<GrantVerdict>(
    () => userStub(env, props.userId).verifyGrant(props.grantId, now, kind, policy),
    { idempotent: true },
  );
  if (!verdict.valid) return null;
  return { user: verdict.user, userId: props.userId, scopes: verdict.scopes, quota: verdict.quota };
}

/** Records an approval in the person's object before the library issues its code. */
export async function recordGrant(
  env: Env,
  userId: string,
  grant: NewGrant,
  sharedClientId: boolean,
  now: number,
): Promise<void> {
  unwrap(
    await callDurable<DurableResult<string[]>>(() => userStub(env, userId).recordGrant(grant, sharedClientId, now), {
      idempotent: true,
    }),
  );
}

export const listGrants = (env: Env, userId: string): Promise<GrantSummary[]> =>
  callDurable(() => userStub(env, userId).listGrants(), { idempotent: true });

/** Ends a grant in the person's object (the authority); 404 when the person holds no such grant. */
export async function revokeGrant(env: Env, userId: string, grantId: string): Promise<void> {
  const existed = await callDurable(() => userStub(env, userId).revokeGrant(grantId), { idempotent: true });
  if (!existed) throw new AppError("not_found", "No such connected app.");
}
