import type { KeyKind } from "../schemas/key-kind";

/**
 * Exact per-owner quotas (contract section 7), as plain functions. The owner's Durable Object
 * holds the counter and calls `countRequest` in the same transaction that judges the key, so the
 * count costs no extra round trip and is exact at every location.
 */

export interface QuotaPolicy {
  limit: number;
  windowMs: number;
  /**
   * How soon the owner's object writes counted requests to storage (`RATE_LIMIT_PERSIST_MS`):
   * the count is exact at once in its memory; 0 writes each count before answering.
   */
  persistDelayMs: number;
}

export interface QuotaState {
  windowStart: number;
  used: number;
}

export interface QuotaVerdict {
  allowed: boolean;
  limit: number;
  used: number;
  remaining: number;
  /** Epoch ms when the window ends. */
  resetAt: number;
  windowMs: number;
}

/**
 * Counts one request. A window starts with the first counted request after the previous one
 * ended. A request over the quota is refused and not counted, so `used` never passes `limit`.
 */
export function countRequest(
  state: QuotaState | undefined,
  policy: QuotaPolicy,
  now: number,
): { verdict: QuotaVerdict; next: QuotaState } {
  const current = state && now < state.windowStart + policy.windowMs ? state : { windowStart: now, used: 0 };
  const allowed = current.used < policy.limit;
  const next = allowed ? { windowStart: current.windowStart, used: current.used + 1 } : current;
  return {
    next,
    verdict: {
      allowed,
      limit: policy.limit,
      used: next.used,
      remaining: Math.max(0, policy.limit - next.used),
      resetAt: current.windowStart + policy.windowMs,
      windowMs: policy.windowMs,
    },
  };
}

const DEFAULTS = { analytics: 1000, members: 1000, windowSeconds: 900, persistMs: 1000 };

/** A var of decimal digits, else the default (a misconfigured var must not switch limiting off). */
const count = (value: unknown, fallback: number): number => {
  const n =
    typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
};

/**
 * The quota of a key kind from the Worker vars (`RATE_LIMIT_ANALYTICS`, `RATE_LIMIT_MEMBERS`,
 * `RATE_LIMIT_WINDOW_SECONDS`, `RATE_LIMIT_PERSIST_MS` at most a minute); null when the operator set the limit to 0 (no quota: nothing is
 * counted and no quota headers are sent).
 */
export function quotaPolicy(env: Env, kind: KeyKind): QuotaPolicy | null {
  const vars = env as unknown as Record<string, unknown>;
  const limit =
    kind === "analytics"
      ? count(vars.RATE_LIMIT_ANALYTICS, DEFAULTS.analytics)
      : count(vars.RATE_LIMIT_MEMBERS, DEFAULTS.members);
  const windowSeconds = count(vars.RATE_LIMIT_WINDOW_SECONDS, DEFAULTS.windowSeconds) || DEFAULTS.windowSeconds;
  const persistDelayMs = Math.min(60_000, count(vars.RATE_LIMIT_PERSIST_MS, DEFAULTS.persistMs));
  return limit === 0 ? null : { limit, windowMs: windowSeconds * 1000, persistDelayMs };
}

/** The headers of every counted response: GitHub's X-RateLimit-* and the IETF draft's RateLimit-Policy / RateLimit. */
export function quotaHeaders(q: QuotaVerdict, now: number): Record<string, string> {
  const secondsLeft = Math.max(0, Math.ceil((q.resetAt - now) / 1000));
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(q.limit),
    "X-RateLimit-Remaining": String(q.remaining),
    "X-RateLimit-Reset": String(Math.ceil(q.resetAt / 1000)),
    "X-RateLimit-Used": String(q.used),
    "RateLimit-Policy": `"default";q=${q.limit};w=${Math.round(q.windowMs / 1000)}`,
    RateLimit: `"default";r=${q.remaining};t=${secondsLeft}`,
  };
  if (!q.allowed) headers["Retry-After"] = String(Math.max(1, secondsLeft));
  return headers;
}
