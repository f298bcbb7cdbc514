import { formatInstant, parseTimestamp } from "../lib/time";

/** Position after the last row of a page: its merge time and internal id. */
export interface Cursor {
  mergedAt: number;
  id: number;
}

/** `<mergedAt>|<id>`, the contract's observed form. Opaque to callers. */
export const encodeCursor = (c: Cursor): string => `${formatInstant(c.mergedAt)}|${c.id}`;

/** Null for anything that is not exactly that form with a valid timestamp and a positive integer id. */
export function decodeCursor(value: string): Cursor | null {
  const parts = value.split("|");
  if (parts.length !== 2) return null;
  const [at, id] = parts as [string, string];
  if (!/^[1-9]\d{0,15}$/.test(id) || !Number.isSafeInteger(Number(id))) return null;
  const parsed = parseTimestamp(at);
  if (parsed.kind !== "ok") return null;
  return { mergedAt: parsed.ms, id: Number(id) };
}
