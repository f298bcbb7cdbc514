import { describe, expect, it } from "vitest";
import {
  describeChange,
  lengthInWords,
  listRefusal,
  partialBucket,
  partialWords,
  previousWindow,
} from "../../web/dashboard-figures";

const count = (n: number) => n.toLocaleString("en-US");

describe("the dashboard's previous window (contract section 21): the same length, just before", () => {
  it.each([
    // Whole UTC days, both ends inclusive: 30 days before 30 days.
    ["2026-10-29T00:00:00.000Z", "2026-11-27T23:59:59.999Z", "2026-09-29T00:00:00.000Z", "2026-10-28T23:59:59.999Z", "30 days"],
    // The API's default window (ends now, starts 30 × 24 h before, to the millisecond).
    ["2026-10-28T14:05:00.123Z", "2026-11-27T14:05:00.123Z", "2026-09-28T14:05:00.122Z", "2026-10-28T14:05:00.122Z", "30 days"],
    ["2026-11-27T00:00:00.000Z", "2026-11-27T23:59:59.999Z", "2026-11-26T00:00:00.000Z", "2026-11-26T23:59:59.999Z", "1 day"],
    ["2026-11-26T14:00:00.000Z", "2026-11-27T14:00:00.000Z", "2026-11-25T13:59:59.999Z", "2026-11-26T13:59:59.999Z", "1 day"],
    ["2026-11-27T13:00:00.000Z", "2026-11-27T14:59:59.999Z", "2026-11-27T11:00:00.000Z", "2026-11-27T12:59:59.999Z", "2 hours"],
  ])("%s to %s: %s to %s (%s)", (start, end, prevStart, prevEnd, words) => {
    expect(previousWindow(start, end)).toEqual({ startDate: prevStart, endDate: prevEnd });
    expect(lengthInWords(start, end)).toBe(words);
  });

  it("none before 1970 (the API refuses such dates), nor for a reversed window", () => {
    expect(previousWindow("1970-01-01T00:00:00.000Z", "1970-01-31T23:59:59.999Z")).toBeNull();
    expect(previousWindow("1970-02-01T00:00:00.000Z", "1970-03-05T23:59:59.999Z")).toBeNull();
    expect(previousWindow("1970-02-01T00:00:00.000Z", "1970-02-28T23:59:59.999Z")).toEqual({
      startDate: "1970-01-04T00:00:00.000Z",
      endDate: "1970-01-31T23:59:59.999Z",
    });
    expect(previousWindow("2026-02-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z")).toBeNull();
  });
});

describe("a total against the previous window's, in words", () => {
  it.each([
    [45, 40, "up", "▲ 13%", "13% more than the previous 30 days (40 → 45)."],
    [30, 40, "down", "▼ 25%", "25% less than the previous 30 days (40 → 30)."],
    [40, 40, "flat", "= same", "The same as the previous 30 days (40 → 40)."],
    [0, 0, "flat", "= same", "The same as the previous 30 days (0 → 0)."],
    [12, 0, "up", "▲ from 0", "Up from none in the previous 30 days: no percentage against zero (0 → 12)."],
    [1001, 1000, "up", "▲ <1%", "less than 1% more than the previous 30 days (1,000 → 1,001)."],
    [5, null, "none", "none before", "No value in the previous 30 days (no pull requests) to compare with; 5 now."],
    [null, 5, "none", "was 5", "No value in this window (no pull requests); the previous 30 days had 5."],
    [null, null, "none", "no data either time", "No value in this window nor in the previous 30 days."],
  ] as const)("%s after %s: %s", (current, previous, direction, short, text) => {
    expect(describeChange(current, previous, "30 days", count)).toEqual({ direction, short, text });
  });

  it("durations say longer and shorter", () => {
    const minutes = (ms: number) => `${ms / 60_000} min`;
    expect(describeChange(30 * 60_000, 20 * 60_000, "7 days", minutes, { more: "longer", less: "shorter" }).text).toBe(
      "50% longer than the previous 7 days (20 min → 30 min).",
    );
  });
});

describe("partial buckets at the window's ends", () => {
  // 2026-11-23 is a Monday.
  it.each([
    ["2026-11-23", "week", "2026-11-23T00:00:00.000Z", "2026-11-29T23:59:59.999Z", null],
    ["2026-11-23", "week", "2026-11-25T00:00:00.000Z", "2026-12-31T23:59:59.999Z", { days: 5, of: 7 }],
    ["2026-11-23", "week", "2026-11-01T00:00:00.000Z", "2026-11-27T23:59:59.999Z", { days: 5, of: 7 }],
    ["2026-11-23", "week", "2026-11-25T00:00:00.000Z", "2026-11-25T23:59:59.999Z", { days: 1, of: 7 }],
    ["2026-11-23", "week", "2026-11-27T12:00:00.000Z", "2026-12-31T23:59:59.999Z", { days: 2.5, of: 7 }],
    // A week of merges after the window (reviewed in it): outside.
    ["2026-11-30", "week", "2026-11-01T00:00:00.000Z", "2026-11-27T23:59:59.999Z", { days: 0, of: 7 }],
    ["2026-11-01", "month", "2026-11-01T00:00:00.000Z", "2026-11-30T23:59:59.999Z", null],
    ["2026-11-01", "month", "2026-10-29T00:00:00.000Z", "2026-11-27T23:59:59.999Z", { days: 27, of: 30 }],
    ["2026-02-01", "month", "2026-02-10T00:00:00.000Z", "2026-03-31T23:59:59.999Z", { days: 19, of: 28 }],
    ["2026-11-27", "day", "2026-11-27T00:00:00.000Z", "2026-11-27T23:59:59.999Z", null],
    ["2026-11-27", "day", "2026-10-28T12:00:00.000Z", "2026-11-27T12:00:00.000Z", { days: 0.5, of: 1 }],
  ] as const)("the %s bucket of %s in %s to %s: %o", (key, per, start, end, partial) => {
    expect(partialBucket(key, per, start, end)).toEqual(partial);
  });

  it("says so in words", () => {
    expect(partialWords({ days: 5, of: 7 })).toBe("partial: 5 of 7 days in the window");
    expect(partialWords({ days: 0.5, of: 1 })).toBe("partial: 0.5 of 1 day in the window");
    expect(partialWords({ days: 0, of: 30 })).toBe("outside the window (merges after it)");
  });
});

describe("the list filters' bounds (20 names, 255 characters)", () => {
  it("refuses in words what the API would refuse", () => {
    const names = (n: number, length = 3) => Array.from({ length: n }, (_, i) => `${i}`.padStart(length, "r"));
    expect(listRefusal(names(20), "repositories")).toBeNull();
    expect(listRefusal(names(21), "repositories")).toBe("21 repositories are chosen; at most 20 can be. Remove some.");
    // 20 names of 12 characters and 19 commas: 259 characters.
    expect(listRefusal(names(20, 12), "authors")).toBe(
      "The authors chosen take 259 characters with their commas; at most 255 fit. Remove some.",
    );
    expect(listRefusal(names(19, 12), "authors")).toBeNull();
  });
});
