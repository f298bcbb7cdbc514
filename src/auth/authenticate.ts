import { attempt } from "../lib/attempt";
import { callDurable } from "../lib/durable-call";
import { unauthenticated } from "../lib/errors";
import type { User } from "../schemas/user";
import { hashApiKey, KEY_PREFIX, type KeyKind, parseApiKey, parseBearer } from "./api-key";
import { KeyRecord, keyRecordKey } from "./key-record";
import type { KeyVerdict } from "./user-object";
import { userStub } from "./user-stub";

const INVALID_KEY = "Invalid, expired or revoked API key.";

/**
 * Key records by hash, per isolate. A hash's record never changes (a new key has a new hash), so
 * caching it is safe; whether the key still works is never cached: the owner's Durable Object
 * decides that on every request. Only found records are cached.
 */
const recordCache = new Map<string, KeyRecord>();
const RECORD_CACHE_LIMIT = 10_000;

/** A real key (found in KV, not expired); whether it is still current is not decided yet. */
export interface KnownKey {
  record: KeyRecord;
}

/**
 * First half of authentication: header, shape and checksum (no I/O), the interface's prefix,
 * then the KV lookup. Unknown and malformed keys end here with 401, so nothing further (no
 * Durable Object) is ever touched for a forged key.
 */
export async function lookupApiKey(request: Request, env: Env, kind: KeyKind): Promise<KnownKey> {
  const bearer = parseBearer(request.headers.get("Authorization"));
  if (bearer.kind === "missing") throw unauthenticated("Missing bearer token: send Authorization: Bearer <key>.");
  if (bearer.kind === "malformed") throw unauthenticated("The Authorization header must use the Bearer scheme.");

  const key = parseApiKey(bearer.token);
  if (key.kind === "malformed") throw unauthenticated(INVALID_KEY);
  if (key.keyKind !== kind) {
    throw unauthenticated(
      `This endpoint needs ${kind === "analytics" ? "an Analytics" : "a Members"} API key (${KEY_PREFIX[kind]}...).`,
    );
  }

  const hash = await hashApiKey(key.value);
  let record = recordCache.get(hash);
  if (!record) {
    const parsed = KeyRecord.safeParse(await env.API_KEYS.get(keyRecordKey(hash), "json"));
    if (!parsed.success) throw unauthenticated(INVALID_KEY);
    record = parsed.data;
    if (recordCache.size >= RECORD_CACHE_LIMIT) recordCache.clear();
    recordCache.set(hash, record);
  }
  if (record.kind !== kind) throw unauthenticated(INVALID_KEY);
  if (record.expiresAt !== null && record.expiresAt <= Date.now()) throw unauthenticated(INVALID_KEY);
  return { record };
}

/**
 * Second half: the owner's Durable Object says whether this is still the owner's current,
 * unexpired key and the owner is not blocked. Same 401 for every "no".
 */
export async function verifyApiKey(env: Env, known: KnownKey): Promise<User> {
  const { userId, keyId, kind } = known.record;
  const now = Date.now();
  const verdict = await callDurable<KeyVerdict>(() => userStub(env, userId).verifyKey(kind, keyId, now), { idempotent: true });
  if (!verdict.valid) throw unauthenticated(INVALID_KEY);
  return verdict.user;
}

/** The whole authentication step for an interface: `cak_` for analytics, `cbk_` for members. */
export async function authenticate(request: Request, env: Env, kind: KeyKind): Promise<User> {
  return verifyApiKey(env, await lookupApiKey(request, env, kind));
}

/**
 * The read path of both public interfaces, once KV has shown the key is real: `parse` checks the
 * request (no I/O), then `read` runs side by side with the key verdict. Answers are judged in the
 * contract's order: a failing key is a 401 whatever else happened, then a `parse` failure (400),
 * then the read's own outcome, so nothing of the read leaks to a caller whose key fails.
 * Only for reads: a write must wait for `verifyApiKey`.
 */
export async function readAlongsideVerdict<I, T>(
  env: Env,
  known: KnownKey,
  parse: () => I,
  read: (input: I) => Promise<T>,
): Promise<{ user: User; input: I; value: T }> {
  const input = attempt(parse);
  const [verdict, outcome] = await Promise.allSettled([
    verifyApiKey(env, known),
    input.ok ? read(input.value) : Promise.resolve(null),
  ]);
  if (verdict.status === "rejected") throw verdict.reason;
  if (!input.ok) throw input.error;
  if (outcome.status === "rejected") throw outcome.reason;
  return { user: verdict.value, input: input.value, value: outcome.value as T };
}
