import { errorField, log } from "../lib/log";
import { type KeyRecord, keyRecordKey, kvExpiry } from "./key-record";
import type { ApiKeyRow } from "./user-store/api-keys";

/**
 * The KV side of a user's keys: the lookup from a key's hash to its record (`key-record.ts`).
 * The user object writes one before a key becomes current and deletes it once the key is replaced
 * or revoked.
 */

export async function writeLookup(kv: KVNamespace, userId: string, key: ApiKeyRow, now: number): Promise<void> {
  const record: KeyRecord = {
    v: 1,
    keyId: key.keyId,
    userId,
    kind: key.kind,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
  };
  await kv.put(keyRecordKey(key.keyHash), JSON.stringify(record), kvExpiry(key.expiresAt, now));
}

/** KV cleanup is housekeeping: the object's verdict already refuses the old key. */
export async function forgetLookup(kv: KVNamespace, keyHash: string): Promise<void> {
  try {
    await kv.delete(keyRecordKey(keyHash));
  } catch (error) {
    log.warn("stale API key lookup not deleted", { error: errorField(error) });
  }
}
