import { describe, expect, it } from "vitest";
import { countRequest, type QuotaPolicy, type QuotaState, quotaHeaders, quotaPolicy } from "../../src/rules/quota";

/** Exact per-owner quotas (contract section 7, src/rules/quota.ts) as tables, without a clock or storage. */

const policy: QuotaPolicy = { limit: 3, windowMs: 900_000, persistDelayMs: 1000 };
const T0 = 1_800_000_000_000;

describe("countRequest: a window starts with the first request after the previous one ended; over the quota is refused and not counted", () => {
  it.each<
    [string, QuotaState | undefined, number, { allowed: boolean; used: number; remaining: number; resetAt: number }, QuotaState]
  >([
    [
      "the first request ever opens a window",
      undefined,
      T0,
      { allowed: true, used: 1, remaining: 2, resetAt: T0 + 900_000 },
      { windowStart: T0, used: 1 },
    ],
    [
      "inside the window: counted",
      { windowStart: T0, used: 1 },
      T0 + 5,
      { allowed: true, used: 2, remaining: 1, resetAt: T0 + 900_000 },
      { windowStart: T0, used: 2 },
    ],
    [
      "the request that exhausts the quota",
      { windowStart: T0, used: 2 },
      T0 + 10,
      { allowed: true, used: 3, remaining: 0, resetAt: T0 + 900_000 },
      { windowStart: T0, used: 3 },
    ],
    [
      "over the quota: refused, not counted",
      { windowStart: T0, used: 3 },
      T0 + 20,
      { allowed: false, used: 3, remaining: 0, resetAt: T0 + 900_000 },
      { windowStart: T0, used: 3 },
    ],
    [
      "the last millisecond of the window is still in it",
      { windowStart: T0, used: 3 },
      T0 + 899_999,
      { allowed: false, used: 3, remaining: 0, resetAt: T0 + 900_000 },
      { windowStart: T0, used: 3 },
    ],
    [
      "the window's end opens a new one",
      { windowStart: T0, used: 3 },
      T0 + 900_000,
      { allowed: true, used: 1, remaining: 2, resetAt: T0 + 1_800_000 },
      { windowStart: T0 + 900_000, used: 1 },
    ],
    [
      "long after: the new window starts now, not on a grid",
      { windowStart: T0, used: 1 },
      T0 + 2_000_123,
      { allowed: true, used: 1, remaining: 2, resetAt: T0 + 2_900_123 },
      { windowStart: T0 + 2_000_123, used: 1 },
    ],
  ])("%s", (_name, state, now, verdict, next) => {
    const counted = countRequest(state, policy, now);
    expect(counted.verdict).toEqual({ ...verdict, limit: 3, windowMs: 900_000 });
    expect(counted.next).toEqual(next);
  });

  it("a limit of 1: one request, then refusals until the window ends", () => {
    const one = { ...policy, limit: 1 };
    let state: QuotaState | undefined;
    const allowed: boolean[] = [];
    for (const now of [T0, T0 + 1, T0 + 899_999, T0 + 900_000]) {
      const counted = countRequest(state, one, now);
      allowed.push(counted.verdict.allowed);
      state = counted.next;
    }
    expect(allowed).toEqual([true, false, false, true]);
  });
});

describe("quotaPolicy: the vars, with defaults for anything that is not decimal digits", () => {
  const env = (vars: Record<string, unknown>) => vars as unknown as Env;
  it.each([
    ["defaults", {}, "analytics", { limit: 1000, windowMs: 900_000, persistDelayMs: 1000 }],
    [
      "set",
      { RATE_LIMIT_MEMBERS: "10", RATE_LIMIT_WINDOW_SECONDS: "60", RATE_LIMIT_PERSIST_MS: "0" },
      "members",
      { limit: 10, windowMs: 60_000, persistDelayMs: 0 },
    ],
    [
      "each kind its own var",
      { RATE_LIMIT_ANALYTICS: "7", RATE_LIMIT_MEMBERS: "9" },
      "analytics",
      { limit: 7, windowMs: 900_000, persistDelayMs: 1000 },
    ],
    [
      "spaces around digits are fine",
      { RATE_LIMIT_ANALYTICS: " 5 " },
      "analytics",
      { limit: 5, windowMs: 900_000, persistDelayMs: 1000 },
    ],
    [
      "not digits: the default, not off",
      { RATE_LIMIT_ANALYTICS: "-1", RATE_LIMIT_WINDOW_SECONDS: "1e3" },
      "analytics",
      { limit: 1000, windowMs: 900_000, persistDelayMs: 1000 },
    ],
    [
      "a window of 0: the default window",
      { RATE_LIMIT_WINDOW_SECONDS: "0" },
      "members",
      { limit: 1000, windowMs: 900_000, persistDelayMs: 1000 },
    ],
    [
      "the persist delay is at most a minute",
      { RATE_LIMIT_PERSIST_MS: "600000" },
      "members",
      { limit: 1000, windowMs: 900_000, persistDelayMs: 60_000 },
    ],
    ["0 switches that kind off", { RATE_LIMIT_ANALYTICS: "0" }, "analytics", null],
    [
      "0 of the other kind leaves this one on",
      { RATE_LIMIT_ANALYTICS: "0" },
      "members",
      { limit: 1000, windowMs: 900_000, persistDelayMs: 1000 },
    ],
  ] as const)("%s", (_name, vars, kind, expected) => {
    expect(quotaPolicy(env(vars), kind)).toEqual(expected);
  });
});

describe("quotaHeaders", () => {
  it("GitHub's X-RateLimit-* and the IETF fields; Retry-After only when refused, at least 1 s", () => {
    const allowed = countRequest(undefined, policy, T0).verdict;
    expect(quotaHeaders(allowed, T0 + 187_500)).toEqual({
      "X-RateLimit-Limit": "3",
      "X-RateLimit-Remaining": "2",
      "X-RateLimit-Reset": String((T0 + 900_000) / 1000),
      "X-RateLimit-Used": "1",
      "RateLimit-Policy": '"default";q=3;w=900',
      RateLimit: '"default";r=2;t=713',
    });
    const refused = countRequest({ windowStart: T0, used: 3 }, policy, T0).verdict;
    expect(quotaHeaders(refused, T0 + 899_999)["Retry-After"]).toBe("1");
    expect(quotaHeaders(refused, T0 + 100_000)["Retry-After"]).toBe("800");
  });
});
