import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lowerMedian, medianIndex, selectRank } from "../../src/rules/analytics-summary";

/**
 * An outside review's attack on `selectRank` (the medians' selection, now Hoare's partition in
 * Wirth's form with the middle of three as pivot): inputs chosen against a quickselect (all equal,
 * two values, sorted, reversed, organ pipe, sawtooth, the pivot's extremes at the probed places,
 * negatives, signed zeros, magnitudes near 2^53), every rank k, against sorting. The selection
 * reorders in place: the values must stay the same multiset, and the answer must be the k-th value
 * of the values sorted, at any k. Durations are never NaN: NaN is outside its domain.
 */

const TOP = Number.MAX_SAFE_INTEGER; // 2^53 - 1

/** Every rank of `values` against the sorted copy (numeric equality: -0 and +0 are one duration). */
function checkEveryRank(name: string, values: number[]): void {
  const sorted = Float64Array.from(values).sort();
  for (let k = 0; k < values.length; k++) {
    const work = Float64Array.from(values);
    const got = selectRank(work, k);
    if (got !== sorted[k]) expect.fail(`${name}: rank ${k} of ${values.length} → ${got}, sorted says ${sorted[k]}`);
    // Still the same values (a selection only reorders).
    const after = work.slice().sort();
    for (let i = 0; i < after.length; i++)
      if (after[i] !== sorted[i]) expect.fail(`${name}: rank ${k} changed the values (at ${i}: ${after[i]} ≠ ${sorted[i]})`);
  }
}

const shapes: Record<string, (n: number) => number[]> = {
  "all equal": (n) => Array.from({ length: n }, () => 7),
  "all zero, signs mixed": (n) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? -0 : 0)),
  "two values": (n) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : 2)),
  "two values, blocks": (n) => Array.from({ length: n }, (_, i) => (i < n / 2 ? 2 : 1)),
  "one odd one out, first": (n) => Array.from({ length: n }, (_, i) => (i === 0 ? -1 : 0)),
  "one odd one out, last": (n) => Array.from({ length: n }, (_, i) => (i === n - 1 ? -1 : 0)),
  "one odd one out, middle": (n) => Array.from({ length: n }, (_, i) => (i === (n - 1) >>> 1 ? 9 : 0)),
  sorted: (n) => Array.from({ length: n }, (_, i) => i),
  reversed: (n) => Array.from({ length: n }, (_, i) => n - i),
  "organ pipe": (n) => Array.from({ length: n }, (_, i) => Math.min(i, n - 1 - i)),
  "inverted organ pipe": (n) => Array.from({ length: n }, (_, i) => Math.max(i, n - 1 - i)),
  sawtooth: (n) => Array.from({ length: n }, (_, i) => i % 4),
  "extremes at the probes": (n) =>
    Array.from({ length: n }, (_, i) => (i === 0 || i === n - 1 || i === (n - 1) >>> 1 ? TOP : i % 5)),
  "minima at the probes": (n) =>
    Array.from({ length: n }, (_, i) => (i === 0 || i === n - 1 || i === (n - 1) >>> 1 ? -TOP : i % 5)),
  negatives: (n) => Array.from({ length: n }, (_, i) => -((i * 7919) % 13) - 0.5),
  "near 2^53": (n) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? TOP - (i % 3) : -TOP + (i % 4))),
  "huge and tiny": (n) => Array.from({ length: n }, (_, i) => [TOP, -TOP, 0, -0, 1e-300, -1e-300, 2 ** 60][i % 7] as number),
};

describe("attack: selectRank against sorting, every rank", () => {
  it("adversarial shapes, lengths 1 to 40 and a few long ones", () => {
    for (const [name, make] of Object.entries(shapes))
      for (const n of [...Array.from({ length: 40 }, (_, i) => i + 1), 63, 64, 65, 257])
        checkEveryRank(`${name} (${n})`, make(n));
  });

  it("every permutation of small multisets (ties included)", () => {
    const permutations = (values: number[]): number[][] =>
      values.length <= 1
        ? [values]
        : values.flatMap((v, i) => permutations([...values.slice(0, i), ...values.slice(i + 1)]).map((rest) => [v, ...rest]));
    for (const multiset of [
      [1, 2, 3, 4, 5, 6],
      [1, 1, 2, 2, 3, 3],
      [0, 0, 0, 1, 1, 2],
      [5, 5, 5, 5, 5, 1],
      [-0, 0, -1, 1, -0, 0],
      [TOP, -TOP, TOP, 0, -TOP, 1, 2],
    ])
      for (const p of permutations(multiset)) checkEveryRank(JSON.stringify(p), p);
  });

  it("random arrays from small and wide alphabets (fixed seed)", () => {
    const value = fc.oneof(
      fc.integer({ min: -2, max: 2 }),
      fc.integer({ min: -TOP, max: TOP }),
      fc.constantFrom(0, -0, TOP, -TOP, 2 ** 53, -(2 ** 53)),
    );
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 80 }), fc.nat(), (values, seed) => {
        const sorted = Float64Array.from(values).sort();
        const k = seed % values.length;
        const work = Float64Array.from(values);
        expect(selectRank(work, k) === sorted[k]).toBe(true);
        expect(work.slice().sort()).toEqual(sorted);
        expect(lowerMedian(Float64Array.from(values)) === sorted[medianIndex(values.length)]).toBe(true);
      }),
      { numRuns: 3000, seed: 20261128 },
    );
  });

  it("refuses a rank that is not a position", () => {
    for (const k of [-1, 3, 1.5, Number.NaN]) expect(() => selectRank(Float64Array.from([1, 2, 3]), k)).toThrow(RangeError);
    expect(() => selectRank(new Float64Array(0), 0)).toThrow(RangeError);
  });
});
