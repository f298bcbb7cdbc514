/**
 * The dashboard's derived figures (contract section 21), pure so that they are tested as tables
 * (test/unit/dashboard-figures.test.ts): the previous window of the same length, the change of a
 * total against it in words, the partial weeks at the window's ends, and the bounds of the
 * repository and author lists.
 */

const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** `2026-09-01T00:00:00.000Z`: the API's date-time form (section 1), to the millisecond. */
const instant = (ms: number) => new Date(ms).toISOString();

/**
 * The window of the same length just before `[start, end]` (both inclusive, to the millisecond, as
 * the API reads them): `[start - length, start - 1 ms]` with `length = end - start + 1 ms`. Null when
 * it would start before 1970 (the API refuses such dates).
 */
export function previousWindow(startDate: string, endDate: string): { startDate: string; endDate: string } | null {
  const start = Date.parse(startDate);
  const end = Date.parse(endDate);
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return null;
  const length = end - start + 1;
  if (start - length < 0) return null;
  return { startDate: instant(start - length), endDate: instant(start - 1) };
}

/** A window's length in words: "30 days", "24 hours"; whole days when it is at least one. */
export function lengthInWords(startDate: string, endDate: string): string {
  const length = Date.parse(endDate) - Date.parse(startDate) + 1;
  if (length >= DAY) {
    const days = Math.round(length / DAY);
    return days === 1 ? "1 day" : `${days.toLocaleString("en-US")} days`;
  }
  const hours = Math.max(1, Math.round(length / 3_600_000));
  return hours === 1 ? "1 hour" : `${hours} hours`;
}

export type Direction = "up" | "down" | "flat" | "none";

export interface Change {
  direction: Direction;
  /** What the eye reads beside the figure: "▲ 12%", "new", "same". */
  short: string;
  /** What a screen reader reads: the whole comparison in words, with both values. */
  text: string;
}

/**
 * A total against the previous window's: the direction and a sentence with both values.
 * `show` formats a value as the page shows it; `unit` names the figure in words ("pull requests
 * merged"); `longer`/`shorter` replace more/less for durations. `period`: "30 days".
 */
export function describeChange(
  current: number | null,
  previous: number | null,
  period: string,
  show: (v: number) => string,
  words: { more: string; less: string } = { more: "more", less: "less" },
): Change {
  const before = `the previous ${period}`;
  if (current === null && previous === null) {
    return { direction: "none", short: "no data either time", text: `No value in this window nor in ${before}.` };
  }
  if (previous === null) {
    return {
      direction: "none",
      short: "none before",
      text: `No value in ${before} (no pull requests) to compare with; ${show(current as number)} now.`,
    };
  }
  if (current === null) {
    return {
      direction: "none",
      short: `was ${show(previous)}`,
      text: `No value in this window (no pull requests); ${before} had ${show(previous)}.`,
    };
  }
  const both = `(${show(previous)} → ${show(current)})`;
  if (current === previous) return { direction: "flat", short: "= same", text: `The same as ${before} ${both}.` };
  if (previous === 0) {
    return {
      direction: "up",
      short: "▲ from 0",
      text: `Up from none in ${before}: no percentage against zero ${both}.`,
    };
  }
  const change = (100 * (current - previous)) / Math.abs(previous);
  const rounded = Math.round(Math.abs(change));
  const amount = rounded === 0 ? "less than 1%" : `${rounded.toLocaleString("en-US")}%`;
  const up = current > previous;
  return {
    direction: up ? "up" : "down",
    short: `${up ? "▲" : "▼"} ${rounded === 0 ? "<1" : rounded.toLocaleString("en-US")}%`,
    text: `${amount} ${up ? words.more : words.less} than ${before} ${both}.`,
  };
}

/** A bucket's first and last millisecond: a UTC day, an ISO week from its Monday, or a calendar month. */
function bucketOf(key: string, per: "day" | "week" | "month"): [number, number] {
  const from = Date.parse(`${key}T00:00:00Z`);
  if (per === "day") return [from, from + DAY - 1];
  if (per === "week") return [from, from + WEEK - 1];
  const d = new Date(from);
  return [from, Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - 1];
}

/**
 * How much of a bucket (its first day as `YYYY-MM-DD`) the window `[start, end]` covers: null when
 * all of it, else the days covered and the bucket's days (0 covered for a bucket outside the
 * window: rows merged after it).
 */
export function partialBucket(
  key: string,
  per: "day" | "week" | "month",
  startDate: string,
  endDate: string,
): { days: number; of: number } | null {
  const [from, to] = bucketOf(key, per);
  const start = Date.parse(startDate);
  const end = Date.parse(endDate);
  if (start <= from && to <= end) return null;
  const covered = Math.max(0, Math.min(to, end) - Math.max(from, start) + 1);
  return { days: Math.round((10 * covered) / DAY) / 10, of: Math.round((to - from + 1) / DAY) };
}

/** A partial bucket in words, for the tables: "partial: 3 of 7 days in the window". */
export function partialWords({ days, of }: { days: number; of: number }): string {
  return days === 0
    ? "outside the window (merges after it)"
    : `partial: ${days} of ${of} ${of === 1 ? "day" : "days"} in the window`;
}

/** The API's bounds on a list filter (contract section 21): at most 20 names, at most 255 characters in all. */
export const MAX_NAMES = 20;
export const MAX_LIST_CHARS = 255;

/** Why a list of names cannot be sent, in words; null when it can. `what`: "repositories", "authors". */
export function listRefusal(names: readonly string[], what: string): string | null {
  if (names.length > MAX_NAMES) return `${names.length} ${what} are chosen; at most ${MAX_NAMES} can be. Remove some.`;
  const chars = names.join(",").length;
  if (chars > MAX_LIST_CHARS) {
    return `The ${what} chosen take ${chars} characters with their commas; at most ${MAX_LIST_CHARS} fit. Remove some.`;
  }
  return null;
}

/** Whether one more name still fits the bounds of `listRefusal`. */
export const fits = (names: readonly string[], next: string): boolean => listRefusal([...names, next], "") === null;
