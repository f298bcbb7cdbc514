/**
 * The dashboard's side of contract section 12's bound: a time grouping's window spans at most 400
 * of its buckets. The dashboard groups by ISO week (Monday 00:00 UTC) for its charts (its other
 * requests group by repository and author, which have no such bound), so a custom window may touch
 * at most 400 weeks; a wider one is refused here, in words, before any request.
 */

export const MAX_WEEKS = 400;
const DAY = 86_400_000;

/** Whole UTC days since 1970-01-01 of a `YYYY-MM-DD` date, or null when it is not one. */
function dayOf(date: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(ms) ? null : Math.floor(ms / DAY);
}

/** The Monday (as a day number) of the ISO week a day falls in; 1970-01-01 was a Thursday. */
const mondayOf = (day: number): number => day - ((((day + 3) % 7) + 7) % 7);

/** How many ISO weeks the inclusive window of two `YYYY-MM-DD` dates touches; null unless both are dates. */
export function weeksTouched(start: string, end: string): number | null {
  const a = dayOf(start);
  const b = dayOf(end);
  if (a === null || b === null || b < a) return null;
  return (mondayOf(b) - mondayOf(a)) / 7 + 1;
}

/** Why a custom window cannot be shown, in words; null when it can (or when the API is to judge it). */
export function customWindowRefusal(start: string, end: string): string | null {
  const weeks = weeksTouched(start, end);
  if (weeks === null || weeks <= MAX_WEEKS) return null;
  return (
    `From ${start} to ${end} spans ${weeks.toLocaleString("en-US")} weeks; the charts show at most ${MAX_WEEKS} weeks ` +
    "(about 7 years and 8 months). Pick a later start or an earlier end."
  );
}
