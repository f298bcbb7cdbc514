import { DAY_MS } from "../lib/time";
import type { KeyExpiryDays } from "../schemas/app";

/**
 * Browser sessions (contract section 13) as plain functions: the user's Durable Object loads the
 * session and the account, asks `judgeSession`, and writes what it says, in one transaction.
 */

export const HOUR_MS = 3_600_000;
/** A session not used for this long ends. */
export const SESSION_IDLE_MS = 7 * DAY_MS;
/** A session ends this long after sign-in, however active. */
export const SESSION_ABSOLUTE_MS = 30 * DAY_MS;

/** The start of the hour `ms` lies in: what "last used" and "last seen" are kept to. */
export const toHour = (ms: number): number => ms - (ms % HOUR_MS);

export interface SessionFacts {
  createdAt: number;
  /** To the hour, except right after sign-in (the exact instant). */
  lastSeenAt: number;
}

export type SessionDecision =
  | { valid: false; reason: "unknown" | "no_account" | "blocked" | "expired" | "idle" }
  /** `touch`: the new `lastSeenAt` to write, or null when the stored one is this hour's already. */
  | { valid: true; touch: number | null };

/**
 * Whether a session still signs its user in at `now`. Idle time counts from the hour of the last
 * request (so a session may end up to an hour early, never late), which lets `lastSeenAt` move
 * once an hour instead of on every request.
 */
export function judgeSession(
  session: SessionFacts | undefined,
  account: { blocked: boolean } | undefined,
  now: number,
): SessionDecision {
  if (!session) return { valid: false, reason: "unknown" };
  if (!account) return { valid: false, reason: "no_account" };
  if (account.blocked) return { valid: false, reason: "blocked" };
  if (now >= session.createdAt + SESSION_ABSOLUTE_MS) return { valid: false, reason: "expired" };
  if (now >= session.lastSeenAt + SESSION_IDLE_MS) return { valid: false, reason: "idle" };
  const hour = toHour(now);
  return { valid: true, touch: hour > session.lastSeenAt ? hour : null };
}

/** Whether a stored session may be deleted (it can never be valid again). */
export const sessionOver = (session: SessionFacts, now: number): boolean =>
  now >= session.createdAt + SESSION_ABSOLUTE_MS || now >= session.lastSeenAt + SESSION_IDLE_MS;

/** The expiry instant of a key created at `now` that lasts `days` (null: never expires). */
export const keyExpiresAt = (days: KeyExpiryDays | null, now: number): number | null =>
  days === null ? null : now + days * DAY_MS;
