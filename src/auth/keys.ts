import { callDurable, type DurableResult, unwrap } from "../lib/durable-call";
import type { KeyKind } from "../schemas/key-kind";
import type { ApiKeyCreated, ApiKeySummary } from "../schemas/user";
import { userStub } from "./user-stub";

/**
 * A user's keys, managed the same way whoever asks: the control plane (for any user, with the
 * admin token) and the web app (for the signed-in user) both come through here to the user's
 * object, the key authority.
 */

/**
 * Creates (or regenerates) the user's key of `kind`; the previous one stops working at once.
 * Not retried: a retry after a lost answer would mint a second key and revoke the first.
 * 404 `not_found` for a user the service does not know. `now`: the one clock read the caller also
 * derived `expiresAt` from, so a key made to last 90 days lasts exactly that.
 */
export async function createUserKey(
  env: Env,
  userId: string,
  kind: KeyKind,
  expiresAt: number | null,
  now: number,
): Promise<ApiKeyCreated> {
  return unwrap(
    await callDurable<DurableResult<ApiKeyCreated>>(() => userStub(env, userId).createKey(kind, expiresAt, now), {
      idempotent: false,
    }),
  );
}

/** Revokes the user's key of `kind` (idempotent, so retried on a transient failure). */
export async function revokeUserKey(env: Env, userId: string, kind: KeyKind): Promise<void> {
  await callDurable(() => userStub(env, userId).revokeKey(kind), { idempotent: true });
}

/** Each kind's current key without its secret: created, expires, last used (to the hour). */
export function listUserKeys(env: Env, userId: string): Promise<Record<KeyKind, ApiKeySummary | null>> {
  return callDurable(() => userStub(env, userId).listKeys(), { idempotent: true });
}
