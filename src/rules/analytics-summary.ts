import { DAY_MS } from "../lib/time";
import {
  type AnalyticsSummaryGroup,
  type AnalyticsSummaryTotals,
  MAX_TIME_BUCKETS,
  type SummaryGroupBy,
} from "../schemas/analytics-summary";

/**
 * The rules of the analytics summary (contract section 12) that do not need storage: which bucket a
 * merge falls in, which buckets a window touches, the median's position, the order of groups, and
 * the answer assembled from the grouped figures the statement returns.
 */

export type TimeGroupBy = Extract<SummaryGroupBy, "day" | "week" | "month">;

export const isTimeGroupBy = (groupBy: SummaryGroupBy): groupBy is TimeGroupBy =>
  groupBy === "day" || groupBy === "week" || groupBy === "month";

/** Whole UTC days since 1970-01-01, rounded down (also before 1970). */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);

/**
 * 1970-01-01 was a Thursday: with Monday as 0, day d is weekday (d + 3) mod 7. The storage
 * statement computes the same in SQL (`storage/analytics-summary.ts`), so both must change together.
 */
export const weekdayFromMonday = (day: number): number => (((day + 3) % 7) + 7) % 7;

/** The first millisecond of the bucket `ms` falls in: its UTC day, ISO week (Monday) or month. */
export function bucketStart(ms: number, groupBy: TimeGroupBy): number {
  const day = utcDay(ms);
  if (groupBy === "day") return day * DAY_MS;
  if (groupBy === "week") return (day - weekdayFromMonday(day)) * DAY_MS;
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** A bucket's key: its first day, `YYYY-MM-DD`. */
export const bucketKey = (start: number): string => new Date(start).toISOString().slice(0, 10);

function nextBucket(start: number, groupBy: TimeGroupBy): number {
  if (groupBy === "day") return start + DAY_MS;
  if (groupBy === "week") return start + 7 * DAY_MS;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The bucket `ms` falls in, numbered from the one holding 1970-01-01 (negative before it). */
function bucketNumber(ms: number, groupBy: TimeGroupBy): number {
  const day = utcDay(ms);
  if (groupBy === "day") return day;
  // A Monday's day number is 4 more than a multiple of 7 (1970-01-01, day 0, was a Thursday).
  if (groupBy === "week") return (day - weekdayFromMonday(day) + 3) / 7;
  const date = new Date(day * DAY_MS);
  return (date.getUTCFullYear() - 1970) * 12 + date.getUTCMonth();
}

/** How many buckets the inclusive window touches (0 for a window that ends before it starts). */
export const bucketCount = (window: { start: number; end: number }, groupBy: TimeGroupBy): number =>
  Math.max(0, bucketNumber(window.end, groupBy) - bucketNumber(window.start, groupBy) + 1);

/**
 * A time grouping's window may touch at most 400 of its buckets (contract section 12), counted as
 * the answer lists them: a window shorter than 400 weeks from a Sunday to a Monday touches 401 ISO
 * weeks. So no answer grows with the width of a window (a 1970-9999 week window answered 91 MB).
 */
export const windowTooWide = (groupBy: SummaryGroupBy, window: { start: number; end: number }): boolean =>
  isTimeGroupBy(groupBy) && bucketCount(window, groupBy) > MAX_TIME_BUCKETS;

/** Every bucket the inclusive window touches, ascending: the first holds `start`, the last `end`. At most 400. */
export function bucketsOfWindow(window: { start: number; end: number }, groupBy: TimeGroupBy): string[] {
  if (bucketCount(window, groupBy) > MAX_TIME_BUCKETS) {
    throw new Error(`a ${groupBy} window of more than ${MAX_TIME_BUCKETS} buckets reached the summary's arrangement`);
  }
  const keys: string[] = [];
  for (let at = bucketStart(window.start, groupBy); at <= window.end; at = nextBucket(at, groupBy)) keys.push(bucketKey(at));
  return keys;
}

/** The median's position among n values in ascending order (the lower middle for even n). */
export const medianIndex = (n: number): number => Math.floor((n - 1) / 2);

/**
 * The value at `medianIndex` of the values in ascending order, without sorting them all: a
 * selection (quickselect, the middle of three as pivot, Hoare's partition) that reorders `values`
 * in place and costs time linear in their number on average. Null when there are none.
 */
export function lowerMedian(values: Float64Array): number | null {
  return values.length === 0 ? null : selectRank(values, medianIndex(values.length));
}

/**
 * The value at position `k` (from 0) of the values in ascending order, by the selection
 * `lowerMedian` describes (reorders `values` in place). `k` must be a position of `values`.
 */
export function selectRank(values: Float64Array, k: number): number {
  if (!Number.isSafeInteger(k) || k < 0 || k >= values.length)
    throw new RangeError(`rank ${k} is not a position of ${values.length} values`);
  let lo = 0;
  let hi = values.length - 1;
  while (hi > lo) {
    // The middle of three as pivot; Hoare's partition (Wirth's form): [lo, j] at most the pivot,
    // [i, hi] at least it, and whatever lies between equals it. About 1.5x faster than a three-way
    // partition on the summary's durations (a year's 474,000 at 1M).
    const x = values[lo] as number;
    const y = values[(lo + hi) >>> 1] as number;
    const z = values[hi] as number;
    const pivot = Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) < pivot) i++;
      while ((values[j] as number) > pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i++] = values[j] as number;
        values[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return values[k] as number;
  }
  return values[k] as number;
}

/**
 * Ascending by Unicode code point, which is SQLite's BINARY order of UTF-8 text and does not depend
 * on the runtime's locale. (JavaScript's `<` compares UTF-16 code units, which differs for
 * characters beyond U+FFFF against U+E000 to U+FFFF.)
 */
export function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Repository and author groups: most pull requests first, then by key. */
export const compareGroups = (a: AnalyticsSummaryGroup, b: AnalyticsSummaryGroup): number =>
  b.pullRequests - a.pullRequests || compareCodePoints(a.key, b.key);

/** The figures of a group without rows. */
export const EMPTY_FIGURES: AnalyticsSummaryTotals = {
  pullRequests: 0,
  linesAdded: 0,
  linesDeleted: 0,
  serviceIssuesFlagged: 0,
  serviceIssuesFixed: 0,
  aiLinesAuthored: 0,
  pullRequestsWithAiData: 0,
  medianMsToFirstReview: null,
  medianMsToMerge: null,
};

/**
 * The groups of the answer from the groups that have rows. Repository and author groups are ordered
 * by `compareGroups`. Time buckets are every bucket the window touches, empty ones included, plus
 * the bucket of any row merged outside the window (a pull request merged before the window and
 * reviewed inside it is one of the export's rows, so the summary counts it too), ascending.
 */
export function arrangeGroups(
  groupBy: SummaryGroupBy,
  window: { start: number; end: number },
  found: readonly AnalyticsSummaryGroup[],
): AnalyticsSummaryGroup[] {
  if (!isTimeGroupBy(groupBy)) return [...found].sort(compareGroups);
  const byKey = new Map(found.map((g) => [g.key, g]));
  const keys = new Set([...bucketsOfWindow(window, groupBy), ...byKey.keys()]);
  return [...keys].sort().map((key) => byKey.get(key) ?? { key, ...EMPTY_FIGURES });
}
