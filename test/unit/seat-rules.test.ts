import { describe, expect, it } from "vitest";
import { type AuthorFacts, decideAutomaticSeats, decideSettingsChange, type SeatFacts } from "../../src/rules/seats";

/** Automatic seat assignment and the settings guard (contract section 20, src/rules/seats.ts), as tables. */

const facts = (over: Partial<SeatFacts> = {}): SeatFacts => ({
  mode: "automatic",
  active: true,
  purchasedSeats: 3,
  seatsUsed: 1,
  ...over,
});
const author = (githubUserId: string, over: Partial<AuthorFacts> = {}): AuthorFacts => ({
  githubUserId,
  seat: false,
  isBot: false,
  waiting: false,
  ...over,
});

describe("decideAutomaticSeats", () => {
  it("gives seats in order while purchased minus used is positive, then the waiting list", () => {
    expect(
      decideAutomaticSeats(
        facts(),
        ["a", "b", "c", "d"].map((id) => author(id)),
      ),
    ).toEqual({
      assign: ["a", "b"],
      wait: ["c", "d"],
    });
  });

  it.each([
    ["manual", facts({ mode: "manual" })],
    ["an inactive organization", facts({ active: false })],
  ])("%s decides nothing", (_name, f) => {
    expect(decideAutomaticSeats(f, [author("a")])).toEqual({ assign: [], wait: [] });
  });

  it("a bot and a seat holder never change; a waiting member gets a free seat or stays, joining once; a repeated author counts once", () => {
    const authors = [
      author("bot", { isBot: true }),
      author("held", { seat: true }),
      author("w", { waiting: true }),
      author("a"),
      author("a"),
    ];
    expect(decideAutomaticSeats(facts({ seatsUsed: 2 }), authors)).toEqual({ assign: ["w"], wait: ["a"] });
    expect(decideAutomaticSeats(facts({ seatsUsed: 3 }), authors)).toEqual({ assign: [], wait: ["a"] });
  });

  it("more seats in use than bought (a sync) gives none, never a negative count", () => {
    expect(decideAutomaticSeats(facts({ purchasedSeats: 1, seatsUsed: 4 }), [author("a")])).toEqual({ assign: [], wait: ["a"] });
  });
});

describe("decideSettingsChange", () => {
  it.each([
    ["manual", "automatic", "manual", true],
    ["manual", "manual", "manual", false],
    ["automatic", "manual", "automatic", true],
  ] as const)("current %s, PATCH %s expecting %s: changed %s", (current, seatAssignment, expected, changed) => {
    expect(decideSettingsChange(current, { seatAssignment, expectedSeatAssignment: expected })).toEqual({
      ok: true,
      before: current,
      after: seatAssignment,
      changed,
    });
  });

  it("a stale guard names the current value", () => {
    expect(decideSettingsChange("automatic", { seatAssignment: "manual", expectedSeatAssignment: "manual" })).toMatchObject({
      ok: false,
      code: "expected_value_mismatch",
      details: [{ path: "expectedSeatAssignment", message: "current value is automatic" }],
    });
  });
});
