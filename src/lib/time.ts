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

/** `YYYY-MM-DDTHH:mm:ss.sssZ`, the one date-time format of every response. */
export const formatInstant = (ms: number): string => new Date(ms).toISOString();
