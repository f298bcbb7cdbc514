import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SUMMARY_CSV_HEADER, toSummaryCsv } from "../../src/analytics/summary-csv";
import {
  arrangeGroups,
  bucketCount,
  bucketStart,
  bucketsOfWindow,
  compareCodePoints,
  EMPTY_FIGURES,
  lowerMedian,
  medianIndex,
  type TimeGroupBy,
  windowTooWide,
} from "../../src/rules/analytics-summary";

const at = (iso: string) => Date.parse(iso);
const day = (iso: string) => new Date(iso).toISOString().slice(0, 10);

describe("buckets (contract section 12): the UTC day, ISO week from Monday, or month of mergedAt", () => {
  it.each<[string, TimeGroupBy, string]>([
    ["2026-11-18T23:59:59.999Z", "day", "2026-11-18"],
    ["2026-11-19T00:00:00.000Z", "day", "2026-11-19"],
    // 2026-11-16 is a Monday; Sunday 23:59:59.999 still belongs to the week before.
    ["2026-11-16T00:00:00.000Z", "week", "2026-11-16"],
    ["2026-11-22T23:59:59.999Z", "week", "2026-11-16"],
    ["2026-11-15T23:59:59.999Z", "week", "2026-11-09"],
    // An ISO week across a new year starts in the old one.
    ["2027-01-01T12:00:00.000Z", "week", "2026-12-28"],
    ["1970-01-01T00:00:00.000Z", "week", "1969-12-29"],
    ["1969-12-31T23:59:59.999Z", "day", "1969-12-31"],
    ["2026-02-28T23:59:59.999Z", "month", "2026-02-01"],
    ["2028-02-29T10:00:00.000Z", "month", "2028-02-01"],
    ["2026-12-31T23:59:59.999Z", "month", "2026-12-01"],
  ])("%s by %s starts %s", (instant, groupBy, start) => {
    expect(day(new Date(bucketStart(at(instant), groupBy)).toISOString())).toBe(start);
  });

  it.each<[string, string, TimeGroupBy, string[]]>([
    ["2026-11-18T10:00:00Z", "2026-11-18T10:00:00Z", "day", ["2026-11-18"]],
    ["2026-11-18T23:00:00Z", "2026-11-20T01:00:00Z", "day", ["2026-11-18", "2026-11-19", "2026-11-20"]],
    ["2026-11-15T00:00:00Z", "2026-11-16T00:00:00Z", "week", ["2026-11-09", "2026-11-16"]],
    ["2026-11-16T00:00:00Z", "2026-11-22T23:59:59.999Z", "week", ["2026-11-16"]],
    ["2026-01-31T00:00:00Z", "2026-03-01T00:00:00Z", "month", ["2026-01-01", "2026-02-01", "2026-03-01"]],
    ["2026-12-15T00:00:00Z", "2027-01-15T00:00:00Z", "month", ["2026-12-01", "2027-01-01"]],
  ])("a window %s to %s by %s touches %j", (start, end, groupBy, keys) => {
    expect(bucketsOfWindow({ start: at(start), end: at(end) }, groupBy)).toEqual(keys);
  });
});

describe("a time grouping spans at most 400 of its buckets (contract section 12)", () => {
  const D = 86_400_000;
  it.each<[string, string, TimeGroupBy, boolean]>([
    // Whole UTC days: 400 fit, 401 do not.
    ["2025-01-01T00:00:00Z", "2026-02-04T23:59:59.999Z", "day", false],
    ["2025-01-01T00:00:00Z", "2026-02-05T00:00:00Z", "day", true],
    // Shorter than 400 days, but its ends touch 401 UTC days.
    ["2025-01-01T12:00:00Z", "2026-02-05T11:59:59.999Z", "day", true],
    ["2025-01-01T12:00:00Z", "2026-02-04T23:59:59.999Z", "day", false],
    // ISO weeks from Monday: 2024-01-01 is a Monday, 2031-08-31 a Sunday 400 weeks on.
    ["2024-01-01T00:00:00Z", "2031-08-31T23:59:59.999Z", "week", false],
    ["2024-01-01T00:00:00Z", "2031-09-01T00:00:00Z", "week", true],
    // 2,795 days (less than 400 weeks) from a Sunday to a Monday: 401 ISO weeks.
    ["2023-12-31T00:00:00Z", "2031-08-25T00:00:00Z", "week", true],
    ["2023-12-31T00:00:00Z", "2031-08-24T23:59:59.999Z", "week", false],
    // Months: January 2024 to April 2057 is 400, to May 2057 401, however few days of the ends are in.
    ["2024-01-01T00:00:00Z", "2057-04-30T23:59:59.999Z", "month", false],
    ["2024-01-01T00:00:00Z", "2057-05-01T00:00:00Z", "month", true],
    ["2024-01-31T23:59:59.999Z", "2057-05-01T00:00:00Z", "month", true],
    ["2024-02-29T00:00:00Z", "2057-05-31T23:59:59.999Z", "month", false],
    // The audit's repro, and the same window before 1970 (weeks and months there too).
    ["1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "week", true],
    ["1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "month", true],
  ])("%s to %s by %s: too wide: %s", (start, end, groupBy, tooWide) => {
    const window = { start: at(start), end: at(end) };
    expect(windowTooWide(groupBy, window)).toBe(tooWide);
    // Every window accepted here touches exactly 400 buckets.
    if (!tooWide) expect(bucketsOfWindow(window, groupBy)).toHaveLength(400);
  });

  it("bucketCount is the number of buckets bucketsOfWindow lists, also before 1970", () => {
    for (const groupBy of ["day", "week", "month"] as const) {
      for (const [start, end] of [
        [at("1969-12-20T05:00:00Z"), at("1970-02-03T00:00:00Z")],
        [at("2026-11-15T23:59:59.999Z"), at("2026-11-16T00:00:00Z")],
        [at("2026-11-16T00:00:00Z"), at("2026-11-16T00:00:00Z")],
      ] as const) {
        expect(bucketCount({ start, end }, groupBy)).toBe(bucketsOfWindow({ start, end }, groupBy).length);
      }
    }
    expect(bucketCount({ start: 5 * D, end: D }, "day")).toBe(0);
  });

  it("repository and author groupings have no time buckets to bound", () => {
    const window = { start: at("1970-01-01T00:00:00Z"), end: at("9999-12-31T23:59:59.999Z") };
    expect(windowTooWide("repo", window)).toBe(false);
    expect(windowTooWide("author", window)).toBe(false);
  });

  it("bucketsOfWindow refuses to list more than 400 buckets (no caller may build an unbounded answer)", () => {
    const window = { start: at("1970-01-01T00:00:00Z"), end: at("9999-12-31T23:59:59.999Z") };
    expect(() => bucketsOfWindow(window, "week")).toThrow(/400/);
    expect(() => arrangeGroups("month", window, [])).toThrow(/400/);
  });
});

describe("the median's position: floor((n - 1) / 2) in ascending order", () => {
  it.each([
    [1, 0],
    [2, 0],
    [3, 1],
    [4, 1],
    [5, 2],
  ])("n = %i → %i", (n, index) => expect(medianIndex(n)).toBe(index));
});

describe("the lower median by selection: the value at floor((n - 1) / 2) of the values sorted", () => {
  it("equals sorting and indexing, for any values (ties, negatives, many equal ones)", () => {
    const value = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.integer({ min: -(2 ** 40), max: 2 ** 40 }));
    fc.assert(
      fc.property(fc.array(value, { maxLength: 300 }), (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        const expected = sorted.length === 0 ? null : sorted[medianIndex(sorted.length)];
        expect(lowerMedian(Float64Array.from(values))).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    [[], null],
    [[7], 7],
    [[2, 1], 1],
    [[3, -1, 2], 2],
    [[5, 5, 5, 5], 5],
  ])("%j → %j", (values, expected) => expect(lowerMedian(Float64Array.from(values))).toBe(expected));
});

describe("group order", () => {
  const group = (key: string, pullRequests: number) => ({ ...EMPTY_FIGURES, key, pullRequests });

  it("repository and author groups: most pull requests first, then key by code point", () => {
    const found = [group("web", 2), group("api", 2), group("Zeta", 5), group("𝒜", 1), group("\uffee", 1)];
    expect(arrangeGroups("repo", { start: 0, end: 1 }, found).map((g) => g.key)).toEqual(["Zeta", "api", "web", "\uffee", "𝒜"]);
  });

  it("code point order, not UTF-16 code units: U+1D49C sorts after U+FFEE", () => {
    expect(compareCodePoints("\uffee", "𝒜")).toBeLessThan(0);
    expect("\uffee" < "𝒜").toBe(false);
    expect(compareCodePoints("a", "ab")).toBeLessThan(0);
    expect(compareCodePoints("b", "b")).toBe(0);
  });

  it("time buckets: every bucket of the window, empty ones as zeros, plus buckets of rows merged outside it, ascending", () => {
    const window = { start: at("2026-11-10T00:00:00Z"), end: at("2026-11-12T12:00:00Z") };
    const found = [group("2026-11-11", 3), group("2024-01-05", 1)];
    expect(arrangeGroups("day", window, found)).toEqual([
      group("2024-01-05", 1),
      group("2026-11-10", 0),
      group("2026-11-11", 3),
      group("2026-11-12", 0),
    ]);
  });
});

describe("summary CSV (sections 10 and 12)", () => {
  it("one record per group, the header of section 12, null medians empty, keys neutralised and quoted", () => {
    const groups = [
      { ...EMPTY_FIGURES, key: "=cmd", pullRequests: 2, medianMsToFirstReview: -5, medianMsToMerge: 10 },
      { ...EMPTY_FIGURES, key: "a,b" },
    ];
    expect(SUMMARY_CSV_HEADER).toBe(
      "key,pullRequests,linesAdded,linesDeleted,serviceIssuesFlagged,serviceIssuesFixed,aiLinesAuthored,pullRequestsWithAiData,medianMsToFirstReview,medianMsToMerge",
    );
    expect(toSummaryCsv(groups)).toBe(`${SUMMARY_CSV_HEADER}\r\n'=cmd,2,0,0,0,0,0,0,-5,10\r\n"a,b",0,0,0,0,0,0,0,,\r\n`);
    expect(toSummaryCsv([])).toBe(`${SUMMARY_CSV_HEADER}\r\n`);
  });
});
