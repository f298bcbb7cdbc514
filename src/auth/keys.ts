import { callDurable, type DurableResult, unwrap } from "../lib/durable-call";
import type { KeyKind } from "../schemas/key-kind";
import type { ApiKey, ApiKeyCreated } from "./key-schemas";
import { defaultScopes } from "./key-scopes";
import type { Scope } from "./scopes";
import type { KeySpec } from "./user-object";
import { userStub } from "./user-stub";

/**
 * A user's keys, managed the same way whoever asks: the control plane (for any user, with the
 * admin token) and the web app (for the signed-in user) both come through here to the user's
 * object, the key authority.
 */

/** A key's settings as sent: scopes default to every scope of the kind, networks to any address. */
export interface KeyRequest {
  kind: KeyKind;
  name: string;
  scopes?: Scope[] | undefined;
  expiresAt: number | null;
  allowedNetworks: string[];
}

const specOf = (request: KeyRequest): KeySpec => ({
  name: request.name,
  scopes: request.scopes ?? defaultScopes(request.kind),
  expiresAt: request.expiresAt,
  allowedNetworks: request.allowedNetworks,
});

/**
 * Creates the user's key of that kind and name, or regenerates it when the name is taken (its
 * previous value stops working at once). Not retried: a retry after a lost answer would mint a
 * second value and revoke the first. 404 `not_found` for a user the service does not know; 409
 * `key_limit_reached` past 10 keys of a kind.
 */
export async function createUserKey(env: Env, userId: string, request: KeyRequest, now: number): Promise<ApiKeyCreated> {
  return unwrap(
    await callDurable<DurableResult<ApiKeyCreated>>(() => userStub(env, userId).createKey(request.kind, specOf(request), now), {
      idempotent: false,
    }),
  );
}

/** Revokes every key of `kind` the user holds (idempotent, so retried on a transient failure). */
export async function revokeUserKeys(env: Env, userId: string, kind: KeyKind): Promise<void> {
  await callDurable(() => userStub(env, userId).revokeKind(kind), { idempotent: true });
}

/** Revokes one of the user's keys (of `kind` when given; idempotent). */
export async function revokeUserKey(env: Env, userId: string, keyId: string, kind: KeyKind | null = null): Promise<void> {
  await callDurable(() => userStub(env, userId).revokeKey(keyId, kind), { idempotent: true });
}

/** The user's keys without their secrets: name, hint, scopes, networks, created, expires, last used (to the hour). */
export function listUserKeys(env: Env, userId: string): Promise<ApiKey[]> {
  return callDurable(() => userStub(env, userId).listKeys(), { idempotent: true });
}
