import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { medianIndex, selectRank } from "../../src/rules/analytics-summary";
import {
  DURATION_BUCKET_BOUNDS,
  decodeSorted,
  durationBucket,
  exactBucket,
  SORTED_WIDTH,
} from "../../src/rules/duration-buckets";
import {
  bucketedPart,
  type Durations,
  rankThroughWindow,
  resolveMedians,
  type SliceReader,
  SORTED_ROW_MIN,
  windowOf,
  withoutRemoved,
} from "../../src/storage/summary-medians";

import { blocksOf, encode } from "./summary-blocks";

const duration = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(...DURATION_BUCKET_BOUNDS.flatMap((b) => [b - 1, b, b + 1])),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.integer({ min: 0, max: 10 * 86_400_000 }),
);

describe("duration buckets (rules/duration-buckets.ts)", () => {
  it("the bounds rise, from one second by 10%, past thirteen years", () => {
    expect(DURATION_BUCKET_BOUNDS[0]).toBe(1000);
    for (let i = 1; i < DURATION_BUCKET_BOUNDS.length; i++) {
      const [lower, upper] = [DURATION_BUCKET_BOUNDS[i - 1] as number, DURATION_BUCKET_BOUNDS[i] as number];
      expect(upper).toBeGreaterThan(lower);
      expect(Math.abs(upper / lower - 1.1)).toBeLessThan(0.001);
    }
    expect(DURATION_BUCKET_BOUNDS.at(-1)).toBeGreaterThan(13 * 365 * 86_400_000);
  });

  it("a duration's bucket is the count of bounds at most it", () => {
    fc.assert(
      fc.property(duration, (v) => {
        expect(durationBucket(v)).toBe(DURATION_BUCKET_BOUNDS.filter((b) => b <= v).length);
      }),
      { numRuns: 2000 },
    );
  });

  it("the bucket from the logarithm is the binary search's at every bound, either side of it and far beyond", () => {
    const values = [
      ...DURATION_BUCKET_BOUNDS.flatMap((b) => [b - 1, b - 0.5, b, b + 0.5, b + 1]),
      -1,
      0,
      999,
      2 ** 52,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
    ];
    for (const v of values) expect([v, durationBucket(v)]).toEqual([v, exactBucket(v)]);
    expect(durationBucket(Number.MAX_SAFE_INTEGER)).toBe(DURATION_BUCKET_BOUNDS.length);
  });

  it("fixed-width sorted values decode to the durations, appended where asked", () => {
    fc.assert(
      fc.property(fc.array(duration, { maxLength: 50 }), fc.integer({ min: 0, max: 5 }), (values, at) => {
        const into = new Float64Array(at + values.length);
        expect(decodeSorted(values.map(encode).join(""), into, at)).toBe(at + values.length);
        expect([...into.subarray(at)]).toEqual(values);
      }),
    );
    expect(() => decodeSorted("abc", new Float64Array(1), 0)).toThrow(/not a multiple of 13/);
    for (const bad of ["000000000000g", "00000000000A0", "0000000\u00e900000", "-000000000000"])
      expect(() => decodeSorted(`${encode(5)}${bad}`, new Float64Array(2), 0), bad).toThrow(/not a hexadecimal digit/);
  });

  it("selectRank is the value at that position of the values sorted; a position outside them is refused", () => {
    fc.assert(
      fc.property(fc.array(duration, { minLength: 1, maxLength: 200 }), fc.nat(), (values, n) => {
        const k = n % values.length;
        expect(selectRank(Float64Array.from(values), k)).toBe([...values].sort((a, b) => a - b)[k]);
      }),
      { numRuns: 1000 },
    );
    expect(() => selectRank(Float64Array.from([1, 2]), 2)).toThrow(RangeError);
  });
});

describe("withoutRemoved: a multiset less a part of it", () => {
  it("takes away one equal value per removed value, a few (one by one) or many (counted), and refuses a value not held", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 40 }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 0, max: 120 }),
        (values, seed, wanted) => {
          // A sub-multiset of `values` of up to `wanted` of them, drawn by a seeded shuffle.
          const order = values.map((_, i) => i).sort((a, b) => ((a * 7919 + seed) % 1009) - ((b * 7919 + seed) % 1009) || a - b);
          const removed = order.slice(0, Math.min(wanted, values.length)).map((i) => values[i] as number);
          const left = [...withoutRemoved(Float64Array.from(values), removed)].sort((a, b) => a - b);
          const want = [...values];
          for (const v of removed) want.splice(want.indexOf(v), 1);
          expect(left).toEqual(want.sort((a, b) => a - b));
          // One more of a value than it holds: refused, by either way.
          const extra = [...removed, 41];
          expect(() => withoutRemoved(Float64Array.from(values), extra)).toThrow(/does not hold/);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("rankThroughWindow: a rank of a sorted part and others, from a window of the part", () => {
  /** A sub-multiset of `values`, up to `wanted` of them, drawn by a seeded shuffle. */
  const drawn = (values: number[], seed: number, wanted: number) =>
    values
      .map((_, i) => i)
      .sort((a, b) => ((a * 7919 + seed) % 1009) - ((b * 7919 + seed) % 1009) || a - b)
      .slice(0, Math.min(wanted, values.length))
      .map((i) => values[i] as number);

  const check = (big: number[], others: number[], seed: number, wanted: number, at: number) => {
    const sorted = [...big].sort((a, b) => a - b);
    const gone = drawn([...big, ...others], seed, wanted);
    const all = [...big, ...others];
    for (const v of gone) all.splice(all.indexOf(v), 1);
    if (all.length === 0) return null;
    all.sort((a, b) => a - b);
    const rank = at % all.length;
    const { lo, hi } = windowOf(sorted.length, rank, others.length, gone.length);
    const window = Float64Array.from(sorted.slice(lo, hi + 1));
    const got = rankThroughWindow(window, lo, sorted.length - 1 - hi, Float64Array.from(others), gone, rank);
    // Exact, or refused only when the window's values are all one value, with values before and after it.
    if (got === null)
      expect([window[0] === window[window.length - 1], lo > 0, hi < sorted.length - 1]).toEqual([true, true, true]);
    else expect(got).toBe(all[rank]);
    // No more values read than the others and the removed ones, and one.
    expect(window.length).toBeLessThanOrEqual(others.length + gone.length + 1);
    return got;
  };

  it("answers the value at the rank from windowOf's window (ties, removed values from anywhere)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 30 }), { minLength: 1, maxLength: 200 }),
        fc.array(fc.integer({ min: -5, max: 30 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 0, max: 30 }),
        fc.nat(),
        (big, others, seed, wanted, at) => {
          check(big, others, seed, wanted, at);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("always answers when no value repeats", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: -1000, max: 1000 }), { minLength: 2, maxLength: 240 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 0, max: 30 }),
        fc.nat(),
        (distinct, split, seed, wanted, at) => {
          const cut = Math.min(split, distinct.length - 1);
          fc.pre(distinct.length - Math.min(wanted, distinct.length) > 0);
          expect(check(distinct.slice(0, cut), distinct.slice(cut), seed, wanted, at)).not.toBeNull();
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("a few cases by hand: one value read, ties at the edges, and what a narrower window cannot tell", () => {
    const big = Float64Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Nothing else in the bucket: the value at the rank alone is read.
    expect(windowOf(10, 4, 0, 0)).toEqual({ lo: 4, hi: 4 });
    expect(rankThroughWindow(big.slice(4, 5), 4, 5, new Float64Array(), [], 4)).toBe(4);
    // Ties before and after the window: the values counted as below and above equal its edges.
    const tied = Float64Array.from([1, 4, 4, 4, 4, 4, 9]);
    expect(rankThroughWindow(tied.slice(3, 4), 3, 3, new Float64Array(), [], 3)).toBe(4);
    // A removed value below the window comes off the count before it; one equal to the window's
    // first, when the window holds no more of it, too.
    expect(rankThroughWindow(big.slice(4, 6), 4, 4, new Float64Array(), [1], 3)).toBe(4);
    const zeros = [0, 0, 0, 0, 0, 0, 0];
    expect(windowOf(9, 1, 0, 7)).toEqual({ lo: 1, hi: 8 });
    expect(rankThroughWindow(Float64Array.from([0, 0, 0, 0, 0, 0, 1, 1]), 1, 0, new Float64Array(), zeros, 1)).toBe(1);
    // One equal to both edges of a window of one value, with values before and after it: refused.
    expect(rankThroughWindow(Float64Array.from([4]), 2, 2, new Float64Array(), [4, 4], 1)).toBeNull();
    // The answer one of the others, below a window narrower than windowOf's: refused, as is a
    // removed value that neither the window nor the others hold and that lies within the window.
    expect(rankThroughWindow(big.slice(4, 6), 4, 4, Float64Array.from([2.5]), [], 3)).toBeNull();
    expect(rankThroughWindow(Float64Array.from([3, 5]), 3, 4, new Float64Array(), [4], 3)).toBeNull();
  });
});

describe("resolveMedians: exact medians from counts per bucket and the median bucket's values", () => {
  it("equals the lower median of every value, blocks and loose values together, for any values", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(duration, { maxLength: 40 }), { maxLength: 6 }),
        fc.array(fc.array(duration, { maxLength: 20 }), { maxLength: 3 }),
        async (days, loose) => {
          const { parts, reader } = blocksOf(days);
          // Two sources: every block with the loose values, and the blocks alone.
          const sources: Durations[] = [
            { values: loose, parts },
            { values: [], parts },
          ];
          const result = await resolveMedians(sources, reader);
          const median = (values: number[]) => {
            const sorted = [...values].sort((a, b) => a - b);
            return sorted.length === 0 ? null : (sorted[medianIndex(sorted.length)] as number);
          };
          expect(result.stale).toBe(false);
          expect(result.values).toEqual([median([...days.flat(), ...loose.flat()]), median(days.flat())]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads only the median's bucket, each slice once however many sources share it", async () => {
    // 1,000 values over many buckets: the median's bucket holds a few of them.
    const values = Array.from({ length: 1000 }, (_, i) => 1000 + i * 997);
    const { parts, reader, asked } = blocksOf([values.slice(0, 500), values.slice(500)]);
    const result = await resolveMedians(
      [
        { values: [], parts },
        { values: [], parts },
      ],
      reader,
    );
    const sorted = [...values].sort((a, b) => a - b);
    expect(result.values).toEqual([sorted[499], sorted[499]]);
    expect(asked).toHaveLength(1);
    expect(result.bucketValues).toBe(asked[0]);
    expect(result.bucketValues).toBeGreaterThan(0);
    expect(result.bucketValues).toBeLessThan(100);
  });

  it("a block gone or rebuilt since it was read makes the answer stale, not a median", async () => {
    const { parts } = blocksOf([[1000, 2000, 3000]]);
    const result = await resolveMedians([{ values: [], parts }], async () => ({ texts: null, rowsRead: 1, corrupt: [] }));
    expect(result).toMatchObject({ stale: true, rowsRead: 1 });
  });

  it("counts that name a bucket outside the scheme, out of order or not positive are malformed: stale, nothing read, the block named", async () => {
    const part = { repoKey: "api", day: 7, version: 9, start: 0 };
    for (const [buckets, counts] of [
      [
        [5, DURATION_BUCKET_BOUNDS.length + 1],
        [1, 3],
      ],
      [[-1], [1]],
      [
        [4, 4],
        [1, 1],
      ],
      [
        [6, 5],
        [1, 1],
      ],
      [[5], [0]],
      [[5], [1.5]],
      [[5, 6], [1]],
    ] as const) {
      const result = await resolveMedians(
        [{ values: [[1]], parts: [{ ...part, buckets: [...buckets], counts: [...counts] }] }],
        async () => {
          throw new Error("no slice should be read");
        },
      );
      expect(result).toMatchObject({ stale: true, corrupt: [{ repoKey: "api", day: 7, version: 9 }] });
    }
  });

  it("less removed values (a served block's straddling pull requests): the lower median of what is left, for any removal", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.oneof(duration, fc.constantFrom(0, 1_000, 1_001)), { maxLength: 40 }), { maxLength: 5 }),
        fc.array(fc.array(fc.oneof(duration, fc.constantFrom(0, 1_000, 1_001)), { maxLength: 20 }), { maxLength: 3 }),
        fc.infiniteStream(fc.boolean()),
        async (days, loose, picks) => {
          const all = [...days.flat(), ...loose.flat()];
          // Any sub-multiset of the values, duplicates included: each removed value takes away one.
          const removed = all.filter(() => picks.next().value as boolean);
          const kept = [...all];
          for (const v of removed) kept.splice(kept.indexOf(v), 1);
          const sorted = kept.sort((a, b) => a - b);
          const expected = sorted.length === 0 ? null : (sorted[medianIndex(sorted.length)] as number);
          const { parts, reader } = blocksOf(days);
          const counted = await resolveMedians([{ values: loose, parts, removed }], reader);
          const listed = await resolveMedians([{ values: [...days, ...loose], parts: [], removed }], reader);
          expect([counted.values, listed.values]).toEqual([[expected], [expected]]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("removing a value the group does not hold is an error, not a wrong median", async () => {
    const none = async () => ({ texts: [], rowsRead: 0, corrupt: [] });
    await expect(resolveMedians([{ values: [[5, 1], [3]], parts: [], removed: [4] }], none)).rejects.toThrow(/does not hold/);
    await expect(resolveMedians([{ values: [[5]], parts: [], removed: [5, 5] }], none)).rejects.toThrow(/does not hold/);
  });

  it("a source without blocks is selected from its values and reads nothing", async () => {
    const result = await resolveMedians(
      [
        { values: [[5, 1], [3]], parts: [] },
        { values: [], parts: [] },
      ],
      async () => {
        throw new Error("no slice should be read");
      },
    );
    expect(result).toEqual({ values: [3, null], stale: false, bucketValues: 0, rowsRead: 0, corrupt: [] });
  });

  describe("a span's sorted row of every group together, read through a window", () => {
    // One bucket's range, from one hour: every value of the big row lies in it.
    const low = DURATION_BUCKET_BOUNDS.find((b) => b >= 3_600_000) as number;
    const bucket = durationBucket(low);
    const high = DURATION_BUCKET_BOUNDS[bucket] as number; // the next bound: the bucket is [low, high)
    const group = {
      kind: "author" as const,
      key: "",
      first: 20_000,
      last: 20_089,
      span: true,
      sortedFrom: SORTED_ROW_MIN as number | null,
    };
    /** Sources over a span's sorted row of `big` (one bucket), a month's bucket rows of `month`, and loose values. */
    function spanOf(big: number[], month: number[], { sorted = true } = {}) {
      // A span of a Worker of before: its head names no sorted row, and its row is in no order.
      const sortedBig = sorted ? [...big].sort((a, b) => a - b) : [...big].reverse();
      const rows = new Map<string, string>();
      const bucketRows = (values: number[], at: { day: number; version: number; group: typeof group }) => {
        const byBucket = new Map<number, number[]>();
        for (const v of values) byBucket.set(durationBucket(v), [...(byBucket.get(durationBucket(v)) ?? []), v]);
        const pairs = [...byBucket.entries()].sort(([a], [b]) => a - b);
        // A month's bucket rows are sorted too; the span's big row is the one under test.
        for (const [b, vs] of pairs)
          rows.set(
            `${at.group.span}|${b}`,
            [...vs]
              .sort((x, y) => x - y)
              .map(encode)
              .join(""),
          );
        return bucketedPart(
          { repoKey: "", ...at, metric: 1 },
          pairs.map(([b]) => b),
          pairs.map(([, vs]) => vs.length),
          0,
        );
      };
      const spanPart = bucketedPart(
        { repoKey: "", day: 20_000, version: 7, group: sorted ? group : { ...group, sortedFrom: null }, metric: 1 },
        [bucket],
        [sortedBig.length],
        0,
      );
      rows.set(`true|${bucket}`, sortedBig.map(encode).join(""));
      const monthPart = bucketRows(month, {
        day: 20_090,
        version: 8,
        group: { ...group, first: 20_090, last: 20_119, span: false },
      });
      const asked: { offset: number; count: number; span: boolean }[][] = [];
      const reader: SliceReader = async (requests) => {
        asked.push(requests.map(({ offset, count, group: g }) => ({ offset, count, span: g?.span === true })));
        return {
          texts: requests.map(({ group: g, bucketRow, offset, count }) =>
            (rows.get(`${g?.span}|${bucketRow?.bucket}`) as string).slice(offset * SORTED_WIDTH, (offset + count) * SORTED_WIDTH),
          ),
          rowsRead: requests.length,
          corrupt: [],
        };
      };
      return { parts: [spanPart, monthPart], reader, asked };
    }
    const lowerMedian = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted.length === 0 ? null : (sorted[medianIndex(sorted.length)] as number);
    };
    const inBucket = fc.integer({ min: low, max: high - 1 });

    it("equals the lower median of every value less the removed ones, ties included, reading a window of the row", async () => {
      await fc.assert(
        fc.asyncProperty(
          // Few distinct values (ties) or many; the big row at least SORTED_ROW_MIN.
          fc.integer({ min: 1, max: 5000 }),
          fc.integer({ min: 0, max: 2 ** 31 }),
          fc.array(fc.oneof(inBucket, duration), { maxLength: 60 }),
          fc.array(fc.oneof(inBucket, duration), { maxLength: 30 }),
          fc.integer({ min: 0, max: 40 }),
          async (distinct, seed, month, loose, wanted) => {
            const big = Array.from(
              { length: SORTED_ROW_MIN + (seed % 500) },
              (_, i) => low + (((i * 7919 + seed) % distinct) * (high - low - 1)) / Math.max(1, distinct - 1),
            );
            const whole = big.map(Math.floor);
            const all = [...whole, ...month, ...loose];
            const removed = all.filter((_, i) => (i * 31 + seed) % 97 === 0).slice(0, wanted);
            const left = [...all];
            for (const v of removed) left.splice(left.indexOf(v), 1);
            const { parts, reader, asked } = spanOf(whole, month);
            const result = await resolveMedians([{ values: [loose], parts, removed }], reader);
            expect(result.stale).toBe(false);
            expect(result.values).toEqual([lowerMedian(left)]);
            // When the median's bucket is the big row's, a window of it is read, not the row.
            const read = asked.flat().filter((r) => r.span);
            if (read.length > 0) expect(read[0]?.count).toBeLessThanOrEqual(month.length + loose.length + removed.length + 1);
          },
        ),
        { numRuns: 300 },
      );
    });

    it("a span whose head names no sorted row (made by a Worker of before) is read whole, in no order", async () => {
      const big = Array.from({ length: SORTED_ROW_MIN + 11 }, (_, i) => low + ((i * 7919) % (high - low)));
      const { parts, reader, asked } = spanOf(big, [], { sorted: false });
      const result = await resolveMedians([{ values: [], parts }], reader);
      expect(result.values).toEqual([lowerMedian(big)]);
      expect(asked.map((read) => read.map((r) => r.count))).toEqual([[big.length]]);
    });

    it("a removed value the window cannot place is read against the row whole: an error when the group does not hold it", async () => {
      const big = Array.from({ length: SORTED_ROW_MIN + 1 }, (_, i) => low + 2 * i);
      const { parts, reader, asked } = spanOf(big, []);
      // An odd value inside the window's range (the values at the rank and after it) that no part holds.
      const median = big[medianIndex(big.length - 1)] as number;
      await expect(resolveMedians([{ values: [], parts, removed: [median + 1] }], reader)).rejects.toThrow(/does not hold/);
      expect(asked.map((read) => read.map((r) => r.count))).toEqual([[2], [big.length]]);
      // The same value held by a loose list: taken from it, the window answers alone.
      const again = spanOf(big, []);
      const result = await resolveMedians([{ values: [[median + 1]], parts: again.parts, removed: [median + 1] }], again.reader);
      expect(result.values).toEqual([big[medianIndex(big.length)]]);
      expect(again.asked).toHaveLength(1);
    });
  });
});
