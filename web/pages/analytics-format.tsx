import type { Answer } from "../api";

/** The dashboard's types and formatting: every figure is a <data> element whose value is the API's number. */

export type Summary = Answer<"/app/api/analytics/summary", "GET">;
export type Group = Summary["groups"][number];
/** The summary's figures (contract section 12): one group, or the totals. */
export type Figures = Summary["totals"];

export const count = (n: number) => n.toLocaleString("en-US");

/** 5400000 → "1 h 30 min"; under an hour in minutes, a day and more in days and hours. */
export function duration(ms: number | null): string {
  if (ms === null) return "—";
  const sign = ms < 0 ? "−" : "";
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 60) return `${sign}${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${sign}${hours} h ${minutes % 60} min`;
  return `${sign}${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "—");

export function Num({ value }: { value: number }) {
  return <data value={String(value)}>{count(value)}</data>;
}
/**
 * A duration, or none (no `value`). Keyed by whether there is one: Preact leaves a `value` it is
 * given as undefined untouched, so a median that became null kept the old number in `value`.
 */
export function Dur({ ms }: { ms: number | null }) {
  return ms === null ? (
    <data key="none">{duration(ms)}</data>
  ) : (
    <data key="ms" value={String(ms)}>
      {duration(ms)}
    </data>
  );
}

export const withParam = (q: URLSearchParams, name: string, value: string) => {
  const copy = new URLSearchParams(q);
  copy.set(name, value);
  return copy;
};
