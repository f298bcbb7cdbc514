import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { medianIndex } from "../../src/rules/analytics-summary";
import { durationBucket } from "../../src/rules/duration-buckets";
import { resolveMedians, type SliceRequest } from "../../src/storage/summary-medians";
import { SLICE_ENTRY_BYTES, SliceCache, sliceBytes, sliceKey } from "../../src/storage/summary-slice-cache";
import { blocksOf } from "./summary-blocks";

const lowerMedian = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : (sorted[medianIndex(sorted.length)] as number);
};

const request = (over: Partial<SliceRequest> = {}): SliceRequest => ({
  repoKey: "",
  day: 20_000,
  version: 7,
  offset: 0,
  count: 3,
  ...over,
});

describe("SliceCache: a block's slices under one version, kept by the isolate", () => {
  it("keeps at most maxBytes bytes (values, key and each entry's own cost), forgetting the least recently used first", () => {
    const key = (day: number) => `acme\u0000${sliceKey(request({ day }))}`;
    const two = (a: number, b: number) => Float64Array.from([a, b]);
    // Room for two slices of two values, not three.
    const cache = new SliceCache(sliceBytes(key(1), two(1, 2)) + sliceBytes(key(2), two(3, 4)) + 8);
    const org = cache.of("acme");
    org.set(request({ day: 1 }), two(1, 2));
    org.set(request({ day: 2 }), two(3, 4));
    expect(cache.size).toEqual({ slices: 2, bytes: sliceBytes(key(1), two(1, 2)) + sliceBytes(key(2), two(3, 4)) });
    expect(org.get(request({ day: 1 }))).toEqual(two(1, 2)); // used: kept longest
    org.set(request({ day: 3 }), two(5, 6));
    expect(cache.size.slices).toBe(2);
    expect(org.get(request({ day: 2 }))).toBeUndefined();
    expect(org.get(request({ day: 1 }))).toEqual(two(1, 2));
    expect(org.get(request({ day: 3 }))).toEqual(two(5, 6));
    // A slice larger than the whole cache is not kept, and pushes nothing out.
    org.set(request({ day: 4 }), new Float64Array(cache.maxBytes / 8));
    expect(org.get(request({ day: 4 }))).toBeUndefined();
    expect(cache.size.slices).toBe(2);
    // The same slice set again replaces itself.
    const before = cache.size;
    org.set(request({ day: 3 }), two(5, 6));
    expect(cache.size).toEqual(before);
    // Each entry costs its own bytes, however few its values: many slices of one value fill it too.
    expect(sliceBytes(key(1), Float64Array.from([1]))).toBeGreaterThanOrEqual(SLICE_ENTRY_BYTES + 8);
    const small = new SliceCache(100 * (SLICE_ENTRY_BYTES + 200));
    for (let day = 0; day < 10_000; day++) small.of("acme").set(request({ day }), Float64Array.from([day]));
    expect(small.size.slices).toBeGreaterThan(0);
    expect(small.size.slices).toBeLessThanOrEqual(Math.floor(small.maxBytes / (SLICE_ENTRY_BYTES + 8)));
    expect(small.size.bytes).toBeLessThanOrEqual(small.maxBytes);
    cache.clear();
    expect(cache.size).toEqual({ slices: 0, bytes: 0 });
    expect(org.get(request({ day: 1 }))).toBeUndefined();
    expect(new SliceCache(0).maxBytes).toBe(0);
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => new SliceCache(bad)).toThrow(/at least 0/);
  });

  it("a slice is its organization's, table's, row's, version's and range's: none stands for another", () => {
    const group = { kind: "repo" as const, key: "api", first: 20_000, last: 20_029 };
    const variants: SliceRequest[] = [
      request(),
      request({ repoKey: "api" }),
      request({ day: 20_001 }),
      request({ version: 8 }),
      request({ offset: 1 }),
      request({ count: 4 }),
      request({ group }),
      request({ group: { ...group, key: "web" } }),
      request({ group: { ...group, kind: "author" } }),
      request({ group: { ...group, last: 20_030 } }),
      request({ group, bucketRow: { metric: 0, bucket: 100 } }),
      request({ group, bucketRow: { metric: 1, bucket: 100 } }),
      request({ group, bucketRow: { metric: 0, bucket: 101 } }),
      request({ group: { ...group, span: true }, bucketRow: { metric: 0, bucket: 100 } }),
    ];
    expect(new Set(variants.map(sliceKey)).size).toBe(variants.length);
    const cache = new SliceCache();
    cache.of("acme").set(request(), Float64Array.from([1]));
    expect(cache.of("Acme").get(request())).toBeUndefined();
    expect(cache.of("acme").get(request())).toEqual(Float64Array.from([1]));
  });

  it("resolveMedians reads a slice once: asked again, the same medians without a read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: -5_000, max: 40 * 86_400_000 }), { minLength: 1, maxLength: 40 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.array(fc.integer({ min: 0, max: 86_400_000 }), { maxLength: 10 }),
        async (days, loose) => {
          const { parts, reader, calls } = blocksOf(days);
          const kept = new SliceCache().of("acme");
          const sources = [
            { values: [loose], parts },
            { values: [], parts },
          ];
          const expected = [lowerMedian([...days.flat(), ...loose]), lowerMedian(days.flat())];
          const first = await resolveMedians(sources, reader, kept);
          expect(first.values).toEqual(expected);
          expect(calls).toHaveLength(1);
          const again = await resolveMedians(sources, reader, kept);
          expect(again).toMatchObject({ values: expected, stale: false, rowsRead: 0 });
          expect(again.bucketValues).toBe(first.bucketValues);
          expect(calls).toHaveLength(1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("only the slices not kept are read; a damaged or stale answer keeps nothing", async () => {
    const values = Array.from({ length: 400 }, (_, i) => 1000 + i * 4_999);
    const { parts, reader, calls, state } = blocksOf([values.slice(0, 200), values.slice(200)]);
    const cache = new SliceCache();
    const kept = cache.of("acme");
    // Damaged: the block is named corrupt, as without a cache, and its slice is not kept.
    state.damage = true;
    const damaged = await resolveMedians([{ values: [], parts }], reader, kept);
    expect(damaged).toMatchObject({ stale: true, corrupt: [{ repoKey: "", day: 0, version: 100 }] });
    expect(cache.size.slices).toBe(0);
    // Stale: nothing kept either.
    state.damage = false;
    state.stale = true;
    expect(await resolveMedians([{ values: [], parts }], reader, kept)).toMatchObject({ stale: true });
    expect(cache.size.slices).toBe(0);
    state.stale = false;
    // The totals' slice read once; then a source over the first day alone asks one slice more.
    const median = lowerMedian(values);
    expect((await resolveMedians([{ values: [], parts }], reader, kept)).values).toEqual([median]);
    const before = calls.length;
    const both = await resolveMedians(
      [
        { values: [], parts },
        { values: [], parts: parts.slice(0, 1) },
      ],
      reader,
      kept,
    );
    expect(both.values).toEqual([median, lowerMedian(values.slice(0, 200))]);
    const asked = calls.slice(before).flat();
    const firstDayBucket = durationBucket(lowerMedian(values.slice(0, 200)) as number);
    const totalsBucket = durationBucket(median as number);
    expect(asked).toHaveLength(firstDayBucket === totalsBucket ? 0 : 1);
    for (const r of asked) expect(r.day).toBe(0);
  });
});
