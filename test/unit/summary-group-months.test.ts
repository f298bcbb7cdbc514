import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { monthLastDay, monthsMeeting, wholeMonths } from "../../src/storage/summary-days";
import { groupMonthKinds } from "../../src/storage/summary-group-months";
import { alignedRun, longestRun } from "../../src/storage/summary-group-plan";

const scope = { orgKey: "o", repoKeys: null, authorKeys: null, accessibleRepoKeys: null, start: 0, end: 1 };

describe("month blocks per group: the choices (summary-group-months.ts)", () => {
  it("longestRun is the first longest run of days that pass, against every run tried", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 40 }), fc.integer({ min: -5, max: 5 }), (passes, a) => {
        const ok = (day: number) => passes[day - a] === true;
        const b = a + passes.length - 1;
        let want: { first: number; last: number } | null = null;
        for (let first = a; first <= b; first++)
          for (let last = first; last <= b; last++) {
            let all = true;
            for (let day = first; day <= last; day++) all &&= ok(day);
            if (all && (want === null || last - first > want.last - want.first)) want = { first, last };
          }
        expect(longestRun(a, b, 7, ok)).toEqual(want === null ? null : { ...want, month: 7 });
      }),
      { numRuns: 500 },
    );
  });

  it("a run is narrowed to a week's boundaries of its month, or dropped when under seven days", () => {
    const jan = Date.parse("2026-01-01") / 86_400_000;
    const feb = Date.parse("2026-02-01") / 86_400_000;
    expect(monthLastDay(jan)).toBe(jan + 30);
    expect(monthLastDay(feb)).toBe(feb + 27);
    expect(monthLastDay(feb + 13)).toBe(feb + 27);
    expect(monthsMeeting(jan + 20, feb + 2)).toEqual([
      [jan, jan + 30],
      [feb, feb + 27],
    ]);
    expect(wholeMonths(jan + 20, feb + 27)).toEqual([[feb, feb + 27]]);
    expect(wholeMonths(jan, feb + 26)).toEqual([[jan, jan + 30]]);
    const run = (first: number, last: number, month = jan) => alignedRun({ first, last, month }, monthLastDay(month));
    expect(run(jan, jan + 30)).toEqual({ first: jan, last: jan + 30, month: jan });
    expect(run(jan + 5, jan + 30)).toEqual({ first: jan + 7, last: jan + 30, month: jan });
    expect(run(jan + 7, jan + 30)).toEqual({ first: jan + 7, last: jan + 30, month: jan });
    expect(run(jan, jan + 19)).toEqual({ first: jan, last: jan + 13, month: jan });
    expect(run(jan, jan + 20)).toEqual({ first: jan, last: jan + 20, month: jan });
    expect(run(jan + 1, jan + 26)).toEqual({ first: jan + 7, last: jan + 20, month: jan });
    expect(run(jan + 22, jan + 30)).toBeNull(); // from the 29th: three days
    expect(run(jan + 1, jan + 12)).toBeNull();
    expect(run(feb + 3, feb + 27, feb)).toEqual({ first: feb + 7, last: feb + 27, month: feb });
  });

  it("serves a request grouped by repository or author alone, of the whole organization", () => {
    expect(groupMonthKinds({ ...scope, groupBys: ["repo"] })).toEqual(["repo"]);
    expect(groupMonthKinds({ ...scope, groupBys: ["author", "repo", "author"] })).toEqual(["author", "repo"]);
    expect(groupMonthKinds({ ...scope, groupBys: ["repo", "week"] })).toBeNull();
    expect(groupMonthKinds({ ...scope, groupBys: [] })).toBeNull();
    expect(groupMonthKinds({ ...scope, groupBys: ["repo"], repoKeys: ["api"] })).toBeNull();
    expect(groupMonthKinds({ ...scope, groupBys: ["repo"], authorKeys: ["alice"] })).toBeNull();
    expect(groupMonthKinds({ ...scope, groupBys: ["repo"], accessibleRepoKeys: ["api"] })).toBeNull();
    expect(groupMonthKinds({ ...scope, groupBys: ["repo"], excludedRepoKeys: ["old"] })).toBeNull();
    expect(groupMonthKinds({ ...scope, groupBys: ["repo"], excludedRepoKeys: [] })).toEqual(["repo"]);
  });
});
