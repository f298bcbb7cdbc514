import { toHour } from "./sessions";

/**
 * Whether a key still works (contract section 2), as a plain function: the owner's Durable Object
 * loads the account and the key the KV record names, asks `judgeKey`, and writes what it says, in
 * one transaction.
 */

export interface KeyFacts {
  keyId: string;
  expiresAt: number | null;
}

export type KeyDecision =
  | { valid: false; reason: "no_account" | "blocked" | "unknown" | "expired" }
  /** `lastUsed`: the hour to record as the key's last use, or null when that hour is recorded already. */
  | { valid: true; lastUsed: number | null };

/**
 * The verdict on the key `keyId` at `now`: the owner must exist and not be blocked, and the key must
 * be the stored one (a replaced or revoked key is "unknown", answered like a key never issued) and
 * not expired. `lastUsedAt` is the last use known so far (to the hour), so a key's "last used" moves
 * at most once an hour.
 */
export function judgeKey(
  account: { blocked: boolean } | undefined,
  key: KeyFacts | undefined,
  keyId: string,
  lastUsedAt: number | null,
  now: number,
): KeyDecision {
  if (!account) return { valid: false, reason: "no_account" };
  if (account.blocked) return { valid: false, reason: "blocked" };
  if (!key || key.keyId !== keyId) return { valid: false, reason: "unknown" };
  if (key.expiresAt !== null && key.expiresAt <= now) return { valid: false, reason: "expired" };
  const hour = toHour(now);
  return { valid: true, lastUsed: lastUsedAt === hour ? null : hour };
}

/** Whether a key may still be given a KV lookup at `now` (expired keys never are). */
export const keyLive = (key: { expiresAt: number | null }, now: number): boolean => key.expiresAt === null || key.expiresAt > now;
