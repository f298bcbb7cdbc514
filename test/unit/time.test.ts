import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DAY_MS, formatInstant, MAX_INSTANT_MS } from "../../src/lib/time";

/** `formatInstant` writes what `Date.prototype.toISOString` writes, without building a Date. */
describe("formatInstant", () => {
  const iso = (ms: number) => new Date(ms).toISOString();

  it("equals toISOString at every edge: epoch, the last instant, leap days, month and year ends, a millisecond either side", () => {
    const days = [
      "1970-01-01",
      "1972-02-29",
      "1999-12-31",
      "2000-02-29",
      "2000-03-01",
      "2024-02-29",
      "2026-11-27",
      "2100-02-28",
      "2100-03-01",
      "2399-12-31",
      "2400-02-29",
      "9999-12-31",
    ].map((day) => Date.parse(`${day}T00:00:00.000Z`));
    const edges = days.flatMap((start) => [start, start + 1, start + 999, start + 1000, start + DAY_MS - 1, start + DAY_MS]);
    const instants = [0, 1, 59_999, 3_599_999, MAX_INSTANT_MS - 1, MAX_INSTANT_MS, ...edges].filter((ms) => ms <= MAX_INSTANT_MS);
    expect(instants.length).toBeGreaterThan(60);
    for (const ms of instants) expect([ms, formatInstant(ms)]).toEqual([ms, iso(ms)]);
  });

  it("equals toISOString for any whole millisecond from 1970 to 9999-12-31T23:59:59.999Z", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_INSTANT_MS }), (ms) => formatInstant(ms) === iso(ms)),
      { numRuns: 20_000 },
    );
  });

  it("outside that range and for fractions it is toISOString itself, refusals included", () => {
    for (const ms of [-1, -DAY_MS - 1, MAX_INSTANT_MS + 1, 8.64e15, 1.5, 1_700_000_000_000.7]) {
      expect(formatInstant(ms)).toBe(iso(ms));
    }
    expect(() => formatInstant(Number.NaN)).toThrow(RangeError);
    expect(() => formatInstant(8.64e15 + 1)).toThrow(RangeError);
  });
});
