/**
 * Instants on the wire are RFC 3339 timestamps; inside the service they are epoch milliseconds.
 * One parser for every date the service accepts, so control plane and analytics agree.
 */

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const HAS_TIME_WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

export type InstantParse = { kind: "ok"; ms: number } | { kind: "invalid"; reason: string };

/**
 * What the caller's field accepts, which decides how a refusal is worded: control-plane date-times
 * take timestamps only; the analytics window also takes `YYYY-MM-DD` (parsed by `parseDateOnly`
 * first) and keeps its own wording.
 */
export type Accepts = "timestamp" | "timestamp or date";

const REFUSALS: Record<Accepts, { unparseable: string; dateOnly: string; tooLate: string }> = {
  timestamp: {
    unparseable: "must be an ISO 8601 timestamp with Z or ±HH:MM, like 2026-11-02T09:30:00Z",
    dateOnly: "must be a timestamp with a time and Z or ±HH:MM, like 2026-11-02T00:00:00Z; a date alone is not accepted here",
    tooLate: "must not be after 9999-12-31T23:59:59.999Z",
  },
  "timestamp or date": {
    unparseable: "must be an ISO 8601 timestamp or a YYYY-MM-DD date",
    dateOnly: "must be an ISO 8601 timestamp or a YYYY-MM-DD date",
    tooLate: "is too far in the future",
  },
};

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

function calendarMs(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | null {
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, ms);
  return date.getTime();
}

/** Parses an RFC 3339 timestamp with `Z` or `±HH:MM`; fractions are kept to the millisecond. */
export function parseTimestamp(input: string, accepts: Accepts = "timestamp"): InstantParse {
  const refusals = REFUSALS[accepts];
  const m = TIMESTAMP.exec(input);
  if (!m) {
    if (HAS_TIME_WITHOUT_ZONE.test(input)) {
      return { kind: "invalid", reason: "timestamp must carry a time zone (Z or ±HH:MM)" };
    }
    return { kind: "invalid", reason: DATE_ONLY.test(input) ? refusals.dateOnly : refusals.unparseable };
  }
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const millis = frac ? Number(frac.slice(0, 3).padEnd(3, "0")) : 0;
  const local = calendarMs(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s), millis);
  if (local === null) return { kind: "invalid", reason: "is not a valid calendar date and time" };
  let offsetMinutes = 0;
  if (sign) {
    const hours = Number(oh);
    const minutes = Number(om);
    if (hours > 23 || minutes > 59) return { kind: "invalid", reason: "has an invalid UTC offset" };
    offsetMinutes = (sign === "-" ? -1 : 1) * (hours * 60 + minutes);
  }
  const ms = local - offsetMinutes * 60_000;
  if (ms < 0) return { kind: "invalid", reason: "must not be before 1970-01-01T00:00:00Z" };
  if (ms > MAX_INSTANT_MS) return { kind: "invalid", reason: refusals.tooLate };
  return { kind: "ok", ms };
}

/** Parses `YYYY-MM-DD` as a UTC day; `edge` picks its first or last millisecond. */
export function parseDateOnly(input: string, edge: "start" | "end"): InstantParse | null {
  const m = DATE_ONLY.exec(input);
  if (!m) return null;
  const start = calendarMs(Number(m[1]), Number(m[2]), Number(m[3]));
  if (start === null) return { kind: "invalid", reason: "is not a valid calendar date" };
  if (start < 0) return { kind: "invalid", reason: "must not be before 1970-01-01" };
  return { kind: "ok", ms: edge === "start" ? start : start + DAY_MS - 1 };
}

export const DAY_MS = 86_400_000;

/** 9999-12-31T23:59:59.999Z: the last instant the response format can express. */
export const MAX_INSTANT_MS = 253_402_300_799_999;

/** "00" to "99" and "000" to "999", so a timestamp is a few lookups and one concatenation. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, "0"));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, "0"));

/** `YYYY-MM-DDT` of a day since 1970 (H. Hinnant's days-to-civil conversion, proleptic Gregorian as ECMAScript's). */
function dayPrefix(days: number): string {
  const z = days + 719_468; // days since 0000-03-01
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // 0 = March
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T`;
}

/** The last days written (rows of a page share few days); cleared when full. */
const dayPrefixes = new Map<number, string>();

/**
 * `YYYY-MM-DDTHH:mm:ss.sssZ`, the one date-time format of every response: exactly what
 * `Date.prototype.toISOString` writes. Written from integer arithmetic for every instant the
 * service stores (whole milliseconds from 1970 to `MAX_INSTANT_MS`), because a `Date` and its
 * `toISOString` cost 1.2-1.9 µs in workerd: three per row, 0.4-0.6 ms of a 100-row export page.
 * Anything else (before 1970, fractions, not a number) goes to `toISOString`, which decides.
 */
export function formatInstant(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_INSTANT_MS) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(days);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 4096) dayPrefixes.clear();
    prefix = dayPrefix(days);
    dayPrefixes.set(days, prefix);
  }
  const inDay = ms - days * DAY_MS;
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  return `${prefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[inDay % 1000]}Z`;
}
