import { expect } from "vitest";
import { durationBucket, SORTED_OFFSET, SORTED_WIDTH } from "../../src/rules/duration-buckets";
import type { BucketedPart, SliceReader, SliceRequest } from "../../src/storage/summary-medians";

/** A duration as the database encodes it in a block's sorted values (`sortedValueSql`). */
export const encode = (v: number) => (v + SORTED_OFFSET).toString(16).padStart(SORTED_WIDTH, "0");

/**
 * Day blocks as the database stores them (per day its durations sorted, encoded, and counted per
 * bucket; version day + 100), and a reader of their slices that records what it is asked (`asked`:
 * the values of each call; `calls`: its requests) and, as `state` says, answers damaged text or stale.
 */
export function blocksOf(days: number[][]) {
  const texts = new Map<number, string>();
  const parts: BucketedPart[] = days.map((values, day) => {
    const sorted = [...values].sort((a, b) => a - b);
    texts.set(day, sorted.map(encode).join(""));
    const counts = new Map<number, number>();
    for (const v of sorted) counts.set(durationBucket(v), (counts.get(durationBucket(v)) ?? 0) + 1);
    const pairs = [...counts.entries()].sort(([a], [b]) => a - b);
    return { repoKey: "", day, version: day + 100, buckets: pairs.map(([b]) => b), counts: pairs.map(([, c]) => c), start: 0 };
  });
  const asked: number[] = [];
  const calls: SliceRequest[][] = [];
  const state = { damage: false, stale: false };
  const reader: SliceReader = async (requests) => {
    asked.push(requests.reduce((n, r) => n + r.count, 0));
    calls.push([...requests]);
    if (state.stale) return { texts: null, rowsRead: 1, corrupt: [] };
    return {
      texts: requests.map(({ day, version, offset, count }) => {
        expect(version).toBe(day + 100);
        const text = (texts.get(day) as string).slice(offset * SORTED_WIDTH, (offset + count) * SORTED_WIDTH);
        return state.damage ? `z${text.slice(1)}` : text;
      }),
      rowsRead: requests.length,
      corrupt: [],
    };
  };
  return { parts, reader, asked, calls, state };
}
