/**
 * Duration buckets (issue 31): geometric ranges of milliseconds, 10% wide from one second to thirteen years
 * (and one beyond), that let the summary find an exact median without reading every duration. A day block
 * (`storage/summary-days.ts`) stores how many of its durations fall in each bucket and the
 * durations themselves sorted, so the values of one bucket are one contiguous slice of them: the
 * median's bucket is found from the counts, and only that bucket's values are read.
 *
 * Bucket `b` holds the durations `v` with `BOUNDS[b - 1] <= v < BOUNDS[b]`: bucket 0 everything
 * below one second (negative durations included), the last bucket everything from the last bound
 * up. The database computes the same bucket from the same integer bounds (`durationBucketSql`), so
 * the Worker and the database never disagree at a bound.
 *
 * Stored blocks hold counts under these bounds and say nothing of them: a change to the bounds
 * needs a migration that deletes every block (`summary_days`), or old counts would be read as new.
 */
export const DURATION_BUCKET_BOUNDS: readonly number[] = Array.from({ length: 210 }, (_, i) => Math.round(1000 * 1.1 ** i));

/** How many buckets there are: one more than bounds. */
export const DURATION_BUCKETS = DURATION_BUCKET_BOUNDS.length + 1;

const LOG_STEP = Math.log(1.1);
const LAST_BOUND = DURATION_BUCKET_BOUNDS[DURATION_BUCKET_BOUNDS.length - 1] as number;

/**
 * The bucket of a duration in ms: how many bounds are at most it. Its logarithm names the bucket
 * to within one (the bounds are rounded), which the bounds then settle; a summary grouped by
 * repository counts each walked duration into its group's buckets and the totals'.
 */
export function durationBucket(ms: number): number {
  if (!(ms >= (DURATION_BUCKET_BOUNDS[0] as number))) return 0;
  if (ms >= LAST_BOUND) return DURATION_BUCKET_BOUNDS.length;
  let b = Math.floor(Math.log(ms / 1000) / LOG_STEP) + 1;
  if (b < 1) b = 1;
  if (b > DURATION_BUCKET_BOUNDS.length) b = DURATION_BUCKET_BOUNDS.length;
  // Bucket b holds [BOUNDS[b - 1], BOUNDS[b]).
  while (b > 0 && (DURATION_BUCKET_BOUNDS[b - 1] as number) > ms) b--;
  while (b < DURATION_BUCKET_BOUNDS.length && (DURATION_BUCKET_BOUNDS[b] as number) <= ms) b++;
  return b;
}

/** `durationBucket` by binary search: its reference in the tests. */
export function exactBucket(ms: number): number {
  let lo = 0;
  let hi = DURATION_BUCKET_BOUNDS.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((DURATION_BUCKET_BOUNDS[mid] as number) <= ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The bucket of an integer SQL expression (a column: it is read once per level), as SQL: the same
 * count of bounds at most it, by the same binary search written out as nested CASEs (seven deep;
 * a sum of a comparison per bound passes SQLite's limit of 100 on an expression's depth).
 */
export function durationBucketSql(expression: string): string {
  // The buckets from `lo` to `hi`: bucket b >= mid exactly when the value is at least BOUNDS[mid - 1].
  const within = (lo: number, hi: number): string => {
    if (lo === hi) return String(lo);
    const mid = (lo + hi + 1) >>> 1;
    return `CASE WHEN ${expression} >= ${DURATION_BUCKET_BOUNDS[mid - 1]} THEN ${within(mid, hi)} ELSE ${within(lo, mid - 1)} END`;
  };
  return `(${within(0, DURATION_BUCKET_BOUNDS.length)})`;
}

/**
 * A block's sorted durations are fixed-width text: each value plus `SORTED_OFFSET`, as
 * `SORTED_WIDTH` lower-case hexadecimal digits, so a bucket's values are read with one `substr`
 * and decoded without a JSON parse. A duration must lie strictly within `SORTED_OFFSET` of zero
 * (71,000 years; a block holding one that does not gets no content and its day is walked).
 */
export const SORTED_WIDTH = 13;
export const SORTED_OFFSET = 2 ** 51;

/** SQL: a duration as its fixed-width text. */
export const sortedValueSql = (expression: string): string => `printf('%0${SORTED_WIDTH}x', ${expression} + ${SORTED_OFFSET})`;

/** The durations of fixed-width text (`sortedValueSql` of each, concatenated), appended to `into` from `at`; returns the next position. */
export function decodeSorted(text: string, into: Float64Array, at: number): number {
  if (text.length % SORTED_WIDTH !== 0)
    throw new Error(`sorted durations of ${text.length} characters, not a multiple of ${SORTED_WIDTH}`);
  // Digit by digit, in two halves that stay exact (a year by author decodes some 100,000 values:
  // three to four times faster than parseInt of each value's substring).
  for (let i = 0; i < text.length; i += SORTED_WIDTH) {
    let high = 0;
    for (let j = i; j < i + HIGH_DIGITS; j++) high = high * 16 + (HEX_DIGIT[text.charCodeAt(j)] ?? Number.NaN);
    let low = 0;
    for (let j = i + HIGH_DIGITS; j < i + SORTED_WIDTH; j++) low = low * 16 + (HEX_DIGIT[text.charCodeAt(j)] ?? Number.NaN);
    const value = high * LOW_SCALE + low - SORTED_OFFSET;
    if (Number.isNaN(value)) throw new Error(`sorted durations hold a character that is not a hexadecimal digit near ${i}`);
    into[at++] = value;
  }
  return at;
}

/** Each character code's value as a lower-case hexadecimal digit (NaN: not one). */
const HEX_DIGIT = Float64Array.from({ length: 128 }, (_, code) =>
  code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : Number.NaN,
);
const HIGH_DIGITS = 6;
const LOW_SCALE = 16 ** (SORTED_WIDTH - HIGH_DIGITS);
