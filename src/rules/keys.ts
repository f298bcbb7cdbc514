import { addressAllowed } from "../lib/networks";
import { toHour } from "./sessions";

/**
 * Whether a key still works (contract section 2), as a plain function: the owner's Durable Object
 * loads the account and the key the KV record names, asks `judgeKey`, and writes what it says, in
 * one transaction.
 */

export interface KeyFacts {
  expiresAt: number | null;
  /** Canonical CIDR ranges; empty: any address. */
  allowedNetworks: readonly string[];
}

export type KeyDecision =
  | { valid: false; reason: "no_account" | "blocked" | "unknown" | "expired" }
  /**
   * `lastUsed`: the hour to record as the key's last use, or null when that hour is recorded
   * already (also when the address is refused: such a request did not use the key).
   * `ipAllowed` false: 403 `ip_not_allowed`, counted against nothing (section 18).
   */
  | { valid: true; ipAllowed: boolean; lastUsed: number | null };

/**
 * The verdict on a key at `now` (contract sections 2 and 18): the owner must exist and not be
 * blocked (organization keys pass `{ blocked: false }` for their live installation), and the key
 * must be stored (a replaced or revoked key is "unknown", answered like a key never issued) and
 * not expired; then the caller's address must lie in the key's allowed networks. `lastUsedAt` is
 * the last use known so far (to the hour), so a key's "last used" moves at most once an hour.
 */
export function judgeKey(
  owner: { blocked: boolean } | undefined,
  key: KeyFacts | undefined,
  lastUsedAt: number | null,
  address: string | null,
  now: number,
): KeyDecision {
  if (!owner) return { valid: false, reason: "no_account" };
  if (owner.blocked) return { valid: false, reason: "blocked" };
  if (!key) return { valid: false, reason: "unknown" };
  if (key.expiresAt !== null && key.expiresAt <= now) return { valid: false, reason: "expired" };
  if (!addressAllowed(address, key.allowedNetworks)) return { valid: true, ipAllowed: false, lastUsed: null };
  const hour = toHour(now);
  return { valid: true, ipAllowed: true, lastUsed: lastUsedAt === hour ? null : hour };
}

export type KeyCreation<R> = { kind: "create" } | { kind: "regenerate"; existing: R } | { kind: "limit_reached" };

/**
 * Creating a key named `nameKey` (lower-cased) among the owner's keys of its kind: a name taken
 * regenerates that key (same id, new value); a new name needs room under `limit`.
 */
export function decideKeyCreation<R extends { nameKey: string }>(
  keys: readonly R[],
  nameKey: string,
  limit: number,
): KeyCreation<R> {
  const existing = keys.find((k) => k.nameKey === nameKey);
  if (existing) return { kind: "regenerate", existing };
  return keys.length >= limit ? { kind: "limit_reached" } : { kind: "create" };
}

/** A key name as compared for uniqueness (case-insensitively). */
export const nameKeyOf = (name: string): string => name.toLowerCase();

/** Whether a key may still be given a KV lookup at `now` (expired keys never are). */
export const keyLive = (key: { expiresAt: number | null }, now: number): boolean => key.expiresAt === null || key.expiresAt > now;
