import { callDurable } from "../lib/durable-call";
import { AppError, unauthenticated } from "../lib/errors";
import { orgKeyPrincipal } from "../lib/principal";
import { type QuotaPolicy, type QuotaVerdict, quotaPolicy } from "../rules/quota";
import type { User } from "../schemas/user";
import { hashApiKey, KEY_PREFIX, type KeyKind, parseApiKey, parseBearer } from "./api-key";
import { KeyRecord, keyRecordKey } from "./key-record";
import type { Scope } from "./scopes";
import type { KeyHolder, KeyVerdict } from "./user-object";
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
  hash: string;
}

/** Whether this isolate holds the key record of a hash (for tests of the cache rule). */
export const isKeyRecordCached = (hash: string): boolean => recordCache.has(hash);

/**
 * First half of authentication: header, shape and checksum (no I/O), the interface's prefix,
 * then the KV lookup. Unknown and malformed keys end here with 401, so nothing further (no
 * Durable Object) is ever touched for a forged key. `kind` null takes a key of either kind (the
 * MCP endpoint, where the key's kind picks the tools): its record says which.
 */
export async function lookupApiKey(request: Request, env: Env, wanted: KeyKind | null): Promise<KnownKey> {
  const bearer = parseBearer(request.headers.get("Authorization"));
  if (bearer.kind === "missing") throw unauthenticated("Missing bearer token: send Authorization: Bearer <key>.");
  if (bearer.kind === "malformed") throw unauthenticated("The Authorization header must use the Bearer scheme.");

  const key = parseApiKey(bearer.token);
  if (key.kind === "malformed") throw unauthenticated(INVALID_KEY);
  const kind = wanted ?? key.keyKind;
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
  if (record.expiresAt !== null && record.expiresAt <= Date.now()) {
    recordCache.delete(hash);
    throw unauthenticated(INVALID_KEY);
  }
  return { record, hash };
}

/**
 * Who the request acts as (`lib/principal.ts`): a person's key, its owner's id; an organization's
 * key, the key in its organization. Known from the key record, before the verdict.
 */
export const principalOf = (record: KeyRecord): string =>
  record.v === 1 ? record.userId : orgKeyPrincipal(record.orgKey, record.keyId);

/** An organization key's verdict from its organization's object, as a caller the routes take. */
async function organizationKeyVerdict(
  env: Env,
  home: string,
  kind: KeyKind,
  hash: string,
  address: string | null,
  now: number,
  policy: QuotaPolicy | null,
): Promise<KeyVerdict> {
  const verdict = await env.ORGANIZATIONS.getByName(home).verifyKey(kind, hash, address, now, policy);
  if (!verdict.valid) return { valid: false };
  // The key is nobody: its caller id is the principal the organization's object recognises.
  const user = { githubUserId: orgKeyPrincipal(verdict.home, verdict.key.id), githubLogin: verdict.key.name, blocked: false };
  const key = { ...verdict.key, scopes: verdict.key.scopes as Scope[] };
  return { valid: true, user, key, ipAllowed: verdict.ipAllowed, quota: verdict.quota };
}

/** A key's verified owner, the key itself (for scopes and audit entries) and the quota's verdict. */
export interface VerifiedKey {
  user: User;
  key: KeyHolder;
  quota: QuotaVerdict | null;
}

/** The caller's address as the platform reports it (contract section 18). */
export const clientAddress = (request: Request): string | null => request.headers.get("CF-Connecting-IP");

/**
 * Second half: the owner's Durable Object says whether this is still one of the owner's keys,
 * unexpired, and the owner is not blocked (same 401 for every "no"); then whether the caller's
 * address lies in the key's allowed networks (403 `ip_not_allowed`, not counted). The request is
 * counted against the owner's quota in the same call unless `count` is false (MCP requests other
 * than a tool call: contract section 15).
 */
export async function verifyApiKey(
  env: Env,
  known: KnownKey,
  address: string | null,
  now: number,
  count = true,
): Promise<VerifiedKey> {
  const record = known.record;
  const policy = count ? quotaPolicy(env, record.kind) : null;
  // Retried once on a transient failure: at worst one request is counted twice.
  const verdict = await callDurable<KeyVerdict>(
    () =>
      record.v === 1
        ? userStub(env, record.userId).verifyKey(record.kind, known.hash, address, now, policy)
        : organizationKeyVerdict(env, record.orgKey, record.kind, known.hash, address, now, policy),
    { idempotent: true },
  );
  if (!verdict.valid) {
    // A key that was refused stays refused (a new key has a new hash): forget its record, so a
    // revoked key costs what an unknown one does (a KV miss) instead of a Durable Object call.
    recordCache.delete(known.hash);
    throw unauthenticated(INVALID_KEY);
  }
  if (!verdict.ipAllowed) {
    throw new AppError("ip_not_allowed", "This key does not work from this address: it is outside the key's allowed networks.");
  }
  return { user: verdict.user, key: verdict.key, quota: verdict.quota };
}
