/**
 * The dashboard's side of contract section 12's bound: a time grouping's window spans at most 400
 * of its buckets. The dashboard's charts group by day, ISO week (Monday 00:00 UTC, the default) or
 * month (its other groupings, by repository and author, have no such bound), so a custom window
 * may touch at most 400 of the chosen buckets; a wider one is refused here, in words, before any
 * request.
 */

export const MAX_BUCKETS = 400;
/** The charts' time groupings (the summary's `groupBy`), as the URL's `per` names them. */
export const PERIODS = ["day", "week", "month"] as const;
export type Period = (typeof PERIODS)[number];
const DAY = 86_400_000;

/** Whole UTC days since 1970-01-01 of a `YYYY-MM-DD` date, or null when it is not one. */
function dayOf(date: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(ms) ? null : Math.floor(ms / DAY);
}

/** The Monday (as a day number) of the ISO week a day falls in; 1970-01-01 was a Thursday. */
const mondayOf = (day: number): number => day - ((((day + 3) % 7) + 7) % 7);
const monthOf = (day: number): number => {
  const d = new Date(day * DAY);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};

/** How many buckets of `per` the inclusive window of two `YYYY-MM-DD` dates touches; null unless both are dates. */
export function bucketsTouched(start: string, end: string, per: Period = "week"): number | null {
  const a = dayOf(start);
  const b = dayOf(end);
  if (a === null || b === null || b < a) return null;
  if (per === "day") return b - a + 1;
  if (per === "month") return monthOf(b) - monthOf(a) + 1;
  return (mondayOf(b) - mondayOf(a)) / 7 + 1;
}

/** How many ISO weeks the inclusive window of two `YYYY-MM-DD` dates touches; null unless both are dates. */
export const weeksTouched = (start: string, end: string): number | null => bucketsTouched(start, end, "week");

/** "400 weeks (about 7 years and 8 months)": the bound in words. */
export function boundWords(per: Period = "week"): string {
  if (per === "day") return `${MAX_BUCKETS} days (about 13 months)`;
  if (per === "month") return `${MAX_BUCKETS} months (33 years and 4 months)`;
  return `${MAX_BUCKETS} weeks (about 7 years and 8 months)`;
}

/** Why a custom window cannot be shown, in words; null when it can (or when the API is to judge it). */
export function customWindowRefusal(start: string, end: string, per: Period = "week"): string | null {
  const buckets = bucketsTouched(start, end, per);
  if (buckets === null || buckets <= MAX_BUCKETS) return null;
  const [count, bound] = [buckets.toLocaleString("en-US"), boundWords(per)];
  const shorter = per === "month" ? "" : per === "week" ? ", or show it per month" : ", or show it per week or month";
  return `From ${start} to ${end} spans ${count} ${per}s; the charts show at most ${bound}. Pick a later start or an earlier end${shorter}.`;
}
