import type { GroupKind } from "../../src/storage/summary-group-months";
import { planGroupMonths } from "../../src/storage/summary-group-plan";
import { shardDb } from "./helpers";
import type { Window } from "./summary-attack-http";

/**
 * What the tests of spans of whole months (`summary-group-spans.ts`) read back: the spans stored,
 * the heads a summary would serve, and groups in key order to compare.
 */

const DAY = 86_400_000;

export type SpanHead = { kind: string; first: number; last: number; lo: number | null; version: number; built: number };

/** An organization's span heads (markers too), by kind and days. */
export async function spans(org: string): Promise<SpanHead[]> {
  const { results } = await (await shardDb(org))
    .prepare(
      `SELECT kind, first_day AS first, last_day AS last, lo, version, built FROM summary_group_span_heads
WHERE org_key = ?1 ORDER BY kind, first_day, last_day`,
    )
    .bind(org)
    .all<SpanHead>();
  return results;
}

/** The heads a summary of `w` by `kinds` would serve, as planned. */
export async function plan(org: string, w: Window, kinds: GroupKind[]) {
  const first = Math.ceil(w.start / DAY);
  const last = Math.floor((w.end + 1) / DAY) - 1;
  return planGroupMonths(await shardDb(org), org, kinds, w, { first, last });
}

/** The spans such a summary would serve, as `[kind, first day, last day]`. */
export const servedSpans = async (org: string, w: Window, kinds: GroupKind[]) =>
  (await plan(org, w, kinds)).served.filter((m) => m.span).map((m) => [m.kind, m.first, m.last]);

/** Groups in ascending key order. */
export const byKey = <G extends { key: string }>(groups: readonly G[]): G[] =>
  [...groups].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
