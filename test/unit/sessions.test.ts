import { describe, expect, it } from "vitest";
import {
  HOUR_MS,
  judgeSession,
  keyExpiresAt,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  sessionOver,
  toHour,
} from "../../src/rules/sessions";

/** Contract section 13's session rules as tables (src/rules/sessions.ts), without a clock or storage. */

const T0 = Date.UTC(2026, 10, 2, 9, 30);
const DAY = 86_400_000;
const fresh = { createdAt: T0, lastSeenAt: T0 };
const ok = { blocked: false };

describe("judgeSession: idle 7 days, absolute 30 days, blocked users refused, last seen moved at most once an hour", () => {
  it.each<[string, Parameters<typeof judgeSession>, ReturnType<typeof judgeSession>]>([
    ["no such session", [undefined, ok, T0], { valid: false, reason: "unknown" }],
    ["the account is gone", [fresh, undefined, T0], { valid: false, reason: "no_account" }],
    ["the user is blocked", [fresh, { blocked: true }, T0 + 1], { valid: false, reason: "blocked" }],
    ["right after sign-in, same hour: nothing to write", [fresh, ok, T0 + 1000], { valid: true, touch: null }],
    ["next hour: last seen moves to its start", [fresh, ok, T0 + HOUR_MS], { valid: true, touch: toHour(T0 + HOUR_MS) }],
    [
      "one ms before the idle limit",
      [fresh, ok, T0 + SESSION_IDLE_MS - 1],
      { valid: true, touch: toHour(T0 + SESSION_IDLE_MS - 1) },
    ],
    ["at the idle limit", [fresh, ok, T0 + SESSION_IDLE_MS], { valid: false, reason: "idle" }],
    [
      "active, one ms before the absolute limit",
      [{ createdAt: T0, lastSeenAt: toHour(T0 + 29 * DAY) }, ok, T0 + SESSION_ABSOLUTE_MS - 1],
      { valid: true, touch: toHour(T0 + SESSION_ABSOLUTE_MS - 1) },
    ],
    [
      "active, at the absolute limit",
      [{ createdAt: T0, lastSeenAt: toHour(T0 + 29 * DAY) }, ok, T0 + SESSION_ABSOLUTE_MS],
      { valid: false, reason: "expired" },
    ],
    [
      "blocked wins over expired (either way refused)",
      [fresh, { blocked: true }, T0 + SESSION_ABSOLUTE_MS],
      { valid: false, reason: "blocked" },
    ],
  ])("%s", (_name, args, expected) => {
    expect(judgeSession(...args)).toEqual(expected);
  });

  it("sessionOver says exactly when no later request could be valid", () => {
    expect(sessionOver(fresh, T0 + SESSION_IDLE_MS - 1)).toBe(false);
    expect(sessionOver(fresh, T0 + SESSION_IDLE_MS)).toBe(true);
    expect(sessionOver({ createdAt: T0, lastSeenAt: T0 + 29 * DAY }, T0 + SESSION_ABSOLUTE_MS)).toBe(true);
  });
});

describe("toHour and key expiries", () => {
  it.each([
    [Date.UTC(2026, 0, 1, 13, 0, 0, 0), Date.UTC(2026, 0, 1, 13)],
    [Date.UTC(2026, 0, 1, 13, 59, 59, 999), Date.UTC(2026, 0, 1, 13)],
    [Date.UTC(2026, 0, 1, 14, 0, 0, 1), Date.UTC(2026, 0, 1, 14)],
  ])("toHour(%d) = %d", (ms, hour) => {
    expect(toHour(ms)).toBe(hour);
  });

  it.each([
    [7, T0 + 7 * DAY],
    [30, T0 + 30 * DAY],
    [90, T0 + 90 * DAY],
    [365, T0 + 365 * DAY],
    [null, null],
  ] as const)("a key of %s days expires at %s", (days, at) => {
    expect(keyExpiresAt(days, T0)).toBe(at);
  });
});
