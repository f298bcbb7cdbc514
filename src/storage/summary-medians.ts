import { lowerMedian, medianIndex, selectRank } from "../rules/analytics-summary";
import { DURATION_BUCKETS, decodeSorted, durationBucket, SORTED_WIDTH } from "../rules/duration-buckets";
import type { GroupKind } from "./summary-group-months";
import { SLICES_BYTES_PER_STATEMENT, SLICES_PER_STATEMENT } from "./summary-rows";

/**
 * The summary's medians (contract section 12: the lower median of each group's durations, exact),
 * from a group's durations as lists of values and, for blocks served by their counts per duration
 * bucket (`analytics-summary.ts` `bucketed`), from those counts and the values of one bucket read
 * from the blocks' sorted durations (`summary-days.ts`).
 */
/**
 * One duration's part of a block served by its counts (`bucketed`): the day, the block's version,
 * the buckets that have values (ascending) and the count of each, and where this duration's values
 * start in the block's sorted values (those to merge follow those to first review).
 */
export interface BucketedPart {
  /** The block's repository key ('' for the organization's block of the day). */
  repoKey: string;
  /** The block's day, or a group's month block's month (its first day). */
  day: number;
  /** A group's month block (`summary-group-months.ts`): its kind and group key; absent for a day block. */
  group?: BlockGroup;
  /**
   * A month block's values of every group together (`summary_group_month_buckets`, `group.key`
   * ''): 0 the durations to first review, 1 to merge. A bucket's values are then a row of their own.
   */
  metric?: 0 | 1;
  version: number;
  buckets: readonly number[];
  counts: readonly number[];
  start: number;
}

/**
 * A part with every field present, in one order: a year by author makes some 10,000, and
 * `resolveMedians` reads each several times (objects of one shape are read several times faster
 * than spreads of differing ones).
 */
export function bucketedPart(
  at: { repoKey: string; day: number; version: number; group?: BlockGroup | undefined; metric?: 0 | 1 | undefined },
  buckets: readonly number[],
  counts: readonly number[],
  start: number,
): BucketedPart {
  return { repoKey: at.repoKey, day: at.day, group: at.group, metric: at.metric, version: at.version, buckets, counts, start };
}

/**
 * A group's values of one duration: lists of values, and blocks' parts served by their counts;
 * less `removed`, values that the lists or parts hold and the group does not (a served block's
 * pull requests that straddle an edge of the window, `summary-rows.ts` `REMOVED_FROM`).
 */
export interface Durations {
  values: number[][];
  parts: BucketedPart[];
  removed?: number[];
}

/** Up to this many removed values are found one by one (`withoutRemoved`). */
const FEW_REMOVED = 32;

/** `values` less the values of `removed` (a multiset: each removed value takes away one equal value), in no particular order. */
export function withoutRemoved(values: Float64Array, removed: readonly number[]): Float64Array {
  if (removed.length === 0) return values;
  if (removed.length > values.length) throw new Error("a summary removed a duration its group does not hold");
  // A few (the usual: a bucket's share of a window's straddlers): each found by a typed array's
  // native scan and swapped out, the order being the selection's to make (a Map lookup for each of a
  // year's 50,000 values of the totals' bucket cost 2.8 ms). Many: counted in a Map.
  if (removed.length <= FEW_REMOVED) {
    const kept = values.slice();
    let size = kept.length;
    for (const v of removed) {
      const at = kept.subarray(0, size).indexOf(v);
      if (at < 0) throw new Error("a summary removed a duration its group does not hold");
      kept[at] = kept[size - 1] as number;
      size--;
    }
    return kept.subarray(0, size);
  }
  const owed = new Map<number, number>();
  for (const v of removed) owed.set(v, (owed.get(v) ?? 0) + 1);
  const kept = new Float64Array(values.length - removed.length);
  let at = 0;
  for (const v of values) {
    const left = owed.get(v) ?? 0;
    if (left > 0) owed.set(v, left - 1);
    else {
      if (at === kept.length) throw new Error("a summary removed a duration its group does not hold");
      kept[at++] = v;
    }
  }
  if (at !== kept.length) throw new Error("a summary removed a duration its group does not hold");
  return kept;
}

/**
 * The value at `medianIndex` of the parts' values (less `removed`) in ascending order
 * (`lowerMedian`); null when there are none.
 */
export function median(parts: readonly (readonly number[])[], removed: readonly number[] = []): number | null {
  const values = new Float64Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    values.set(part, at);
    at += part.length;
  }
  return lowerMedian(withoutRemoved(values, removed));
}

/**
 * Where, in a sorted part of `count` values of a bucket, the value at `rank` of the bucket's values
 * lies when it is the part's (`rankThroughWindow`): `others` values of the bucket are in other parts
 * and `gone` of them all are taken away, so at most `rank + gone` of the part's values lie below it
 * and at least `rank + 1 - others` at most it.
 */
export function windowOf(count: number, rank: number, others: number, gone: number): { lo: number; hi: number } {
  return { lo: Math.max(0, rank - others), hi: Math.min(count - 1, rank + gone) };
}

/**
 * The value at position `rank` (ascending, from 0) of the multiset B + `others` - `gone`, where B
 * is a sorted part known only through `window` (its values at positions `lo`..`lo + window.length
 * - 1`) and the counts of its values before (`lo`) and after (`above`) the window; null when the
 * window cannot tell (narrower than `windowOf`'s, or a removed value it does not hold equal to
 * both its edges with values before and after it), and the caller reads B whole.
 *
 * Why it is exact: the values before the window are at most its first, those after at least its
 * last. Count them as below and above everything the window and `others` hold (a removed value
 * that neither holds is one of them: below the window's first, or above its last), and take the
 * value at `rank` of that. A value from the window's first to its last then has no more values
 * below it than in B + `others` - `gone` and as many at most it (those before the window are at
 * most the first; those after, at least the last, count only when the value is below the last):
 * so it is at `rank` there too. A value outside the window's range (one of `others`) is refused;
 * with `windowOf`'s bounds, none is at `rank`: below the window's first at most `rank` values are
 * at most it, above its last more than `rank` are below it.
 */
export function rankThroughWindow(
  window: Float64Array,
  lo: number,
  above: number,
  others: Float64Array,
  gone: readonly number[],
  rank: number,
): number | null {
  if (window.length === 0) return null;
  const first = window[0] as number;
  const last = window[window.length - 1] as number;
  const held = new Float64Array(window.length + others.length);
  held.set(window);
  held.set(others, window.length);
  // Removed values the window and `others` hold are taken from them; the rest from before the
  // window (at most its first) or after it (at least its last). One equal to both edges, with
  // values on both sides, could be either: refused.
  let size = held.length;
  let below = lo;
  let after = above;
  for (const v of gone) {
    const at = held.subarray(0, size).indexOf(v);
    if (at >= 0) {
      held[at] = held[size - 1] as number;
      size--;
      continue;
    }
    const before = below > 0 && (v < first || (v === first && (first < last || after === 0)));
    const beyond = after > 0 && (v > last || (v === last && (first < last || below === 0)));
    if (before && !beyond) below--;
    else if (beyond && !before) after--;
    else return null;
  }
  const k = rank - below;
  if (k < 0 || k >= size) return null;
  const value = selectRank(held.subarray(0, size), k);
  if ((below > 0 && value < first) || (after > 0 && value > last)) return null;
  return value;
}

/** A group's month block: the kind of grouping and the group's key as the rows spell it. */
export interface BlockGroup {
  kind: GroupKind;
  key: string;
  /** The first and last day of the month block's run (its rows' key beside the month), or of its span. */
  first: number;
  last: number;
  /** A span of whole months (`summary-group-spans.ts`): its rows are the span's, keyed without a month. */
  span?: boolean;
  /** A span's rows of every group together (`key` '') of at least this many values are sorted (its head's `sorted_from`). */
  sortedFrom?: number | null;
}

/**
 * One slice of a block's sorted values: `count` values from position `offset` of the block of
 * `day` (the organization's, `repoKey` '', or a repository's), or of a group's month block
 * (`group`, `day` its month), which must still be stored at `version`.
 */
export interface SliceRequest {
  repoKey: string;
  day: number;
  group?: BlockGroup;
  /** A month block's bucket row (`BucketedPart.metric`): the duration and the bucket; `offset` 0. */
  bucketRow?: { metric: 0 | 1; bucket: number };
  version: number;
  offset: number;
  count: number;
}

/**
 * Reads slices of blocks' sorted values: per request, in order, the slice's fixed-width text, or
 * null for all when any block is gone or rebuilt since it was read (stale), or when a block's
 * sorted values do not hold the slice its counts promise (`corrupt`: no build writes such a block;
 * the caller deletes it, so the next summary builds it anew).
 */
export type SliceReader = (
  requests: readonly SliceRequest[],
) => Promise<{ texts: string[] | null; rowsRead: number; corrupt: BlockId[] }>;

/**
 * A stored block: whose (the organization's, repository key '', or a repository's), which day,
 * which version; or a group's month block (`group`, `day` its month).
 */
export interface BlockId {
  repoKey: string;
  day: number;
  group?: BlockGroup;
  version: number;
}

/** An isolate's slices of one organization's blocks, already read and decoded (`summary-slice-cache.ts`). */
export interface OrgSlices {
  get(request: SliceRequest): Float64Array | undefined;
  set(request: SliceRequest, values: Float64Array): void;
}

export const noSlices: SliceReader = () => {
  throw new Error("a summary served from duration counts needs a reader of the blocks' sorted values");
};

/** How many rows, and bytes of slices' text, one slices statement reads at most (tests lower them). */
export interface SliceStatementLimits {
  rows: number;
  bytes: number;
}

const SLICE_STATEMENT_LIMITS: SliceStatementLimits = { rows: SLICES_PER_STATEMENT, bytes: SLICES_BYTES_PER_STATEMENT };

/**
 * The entries' statements, in order: at most `rows` rows each, and at most `bytes` bytes of answer
 * and of bound JSON each (a row over it alone). An entry's answer: its slices' text and 48 bytes
 * for its index, version, quotes and brackets. Its bound JSON: at most six bytes a character of
 * its row's names (JSON escapes a control character in six, UTF-8 takes at most three for the
 * others; a group key is any 255 characters an event may carry) and 96 for its numbers.
 */
function statementsOf<E extends { of: SliceRequest; slices: { r: SliceRequest }[] }>(
  entries: readonly E[],
  { rows, bytes: budget }: SliceStatementLimits,
): E[][] {
  const statements: E[][] = [];
  let current: E[] = [];
  let answer = 0;
  let bound = 0;
  for (const entry of entries) {
    const answerSize = 48 + entry.slices.reduce((sum, { r }) => sum + r.count * SORTED_WIDTH, 0);
    const { repoKey, group } = entry.of;
    const boundSize = 96 + 6 * (group === undefined ? repoKey.length : group.kind.length + group.key.length);
    if (current.length > 0 && (current.length >= rows || answer + answerSize > budget || bound + boundSize > budget)) {
      statements.push(current);
      current = [];
      answer = 0;
      bound = 0;
    }
    current.push(entry);
    answer += answerSize;
    bound += boundSize;
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

/** The blocks' slices as stored in `summary_days` (and `summary_group_months`) of one organization, read through D1. */
export const sliceReader = (
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  limits: SliceStatementLimits = SLICE_STATEMENT_LIMITS,
): SliceReader =>
  sliceReaderOf(
    async (statements) => {
      // One statement alone is sent as itself; several as one batch (one round trip to D1: a call
      // costs about as much as a short statement, 1.7 ms of `/readyz`'s time under `wrangler dev`).
      const [only] = statements;
      const answers =
        statements.length === 1 && only !== undefined
          ? [
              await db
                .prepare(only[0])
                .bind(...only[1])
                .all<SlicesRow>(),
            ]
          : await db.batch<SlicesRow>(statements.map(([sql, params]) => db.prepare(sql).bind(...params)));
      return answers.map(({ results, meta }) => ({ results, rowsRead: meta.rows_read }));
    },
    orgKey,
    limits,
  );

/** At most this many slices statements go to D1 in one batch, and at most `BATCH_STATEMENT_BYTES` times their bytes' budget in all. */
const BATCH_STATEMENTS = 8;
const BATCH_STATEMENT_BYTES = 4;

/**
 * A slices statement's one row: per row of a block asked, `[index, version, text, second text]` as
 * JSON (one value to parse instead of an object per slice: a year by author reads ten thousand
 * slices).
 */
type SlicesRow = { slices: string | null };
type SliceRow = [i: number, version: number, text: string | null, second: string | null];

/**
 * A bound entry's slice (`at`: 2 the first, 4 the second of one row): its offset and count, in
 * values. Every build writes lower-case hexadecimal digits; a damaged row's other bytes are found
 * when the slice is decoded (`resolveMedians`: its block is corrupt). Checking them here cost more
 * than the slices themselves (GLOB or ltrim over each character: 26 ns each, 28 ms for a megabyte).
 */
const SLICE_TEXT = (at: number) =>
  `CAST(substr(s.sorted, (j.value ->> ${at}) * ${SORTED_WIDTH} + 1, (j.value ->> ${at + 1}) * ${SORTED_WIDTH}) AS TEXT)`;

const asOneRow = (slices: string) =>
  `SELECT json_group_array(json_array(i, version, text, second)) AS slices FROM (SELECT j.key AS i, s.version AS version,
  ${SLICE_TEXT(2)} AS text, ${SLICE_TEXT(4)} AS second ${slices})`;

/** A day block's slices: `?2` JSON `[[repo key, day, offset, count, offset, count], ...]`. */
const DAY_SLICES = asOneRow(`FROM json_each(?2) AS j CROSS JOIN summary_days AS s
ON s.org_key = ?1 AND s.repo_key = j.value ->> 0 AND s.day = j.value ->> 1`);

/** A group's month block's slices: `?2` JSON `[[[kind, group key, first, last], month, offset, count, offset, count], ...]`. */
const GROUP_SLICES = asOneRow(`FROM json_each(?2) AS j CROSS JOIN summary_group_months AS s
ON s.org_key = ?1 AND s.kind = j.value ->> '$[0][0]' AND s.month = j.value ->> 1 AND s.first_day = j.value ->> '$[0][2]'
  AND s.last_day = j.value ->> '$[0][3]' AND s.group_key = j.value ->> '$[0][1]'`);

/** A month block's bucket rows: `?2` JSON `[[[kind, metric, bucket, first, last], month, 0, count, 0, 0], ...]`. */
const BUCKET_SLICES = asOneRow(`FROM json_each(?2) AS j CROSS JOIN summary_group_month_buckets AS s
ON s.org_key = ?1 AND s.kind = j.value ->> '$[0][0]' AND s.month = j.value ->> 1 AND s.first_day = j.value ->> '$[0][3]'
  AND s.last_day = j.value ->> '$[0][4]' AND s.metric = j.value ->> '$[0][1]' AND s.bucket = j.value ->> '$[0][2]'`);

/**
 * A span's bucket rows, of one group or of every group together (key ''): `?2` as
 * `BUCKET_SLICES`'s with the group's key last (`[[[kind, metric, bucket, first, last, key], ...`; the
 * month unused).
 */
const SPAN_BUCKET_SLICES = asOneRow(`FROM json_each(?2) AS j CROSS JOIN summary_group_span_buckets AS s
ON s.org_key = ?1 AND s.kind = j.value ->> '$[0][0]' AND s.first_day = j.value ->> '$[0][3]'
  AND s.last_day = j.value ->> '$[0][4]' AND s.group_key = j.value ->> '$[0][5]'
  AND s.metric = j.value ->> '$[0][1]' AND s.bucket = j.value ->> '$[0][2]'`);

/** What a bound entry names: a row of one of the four tables, at the version its slices were planned on. */
const rowOf = ({ repoKey, group, bucketRow }: SliceRequest): unknown =>
  group === undefined
    ? repoKey
    : bucketRow === undefined
      ? [group.kind, group.key, group.first, group.last]
      : [group.kind, bucketRow.metric, bucketRow.bucket, group.first, group.last, group.key];

/** A request's row and version as one string (a template: a year by author asks some 10,000, and JSON cost 1.5 ms of them). */
const rowId = ({ repoKey, day, version, group, bucketRow }: SliceRequest): string =>
  group === undefined
    ? `${repoKey}\u0000${day}\u0000${version}`
    : `${group.kind}\u0000${group.key}\u0000${group.first}\u0000${group.last}\u0000${bucketRow?.metric}\u0000${bucketRow?.bucket}\u0000${day}\u0000${version}`;

/**
 * The blocks' slices as stored in `summary_days` and `summary_group_months` of one organization,
 * by one statement per `limits.rows` rows (and `limits.bytes` of text) of one table, run by `run` (D1 in the Worker;
 * the benchmark's SQLite file). Two slices of one row (a group's or a day's two durations: their
 * medians' buckets) are read with one seek: a seek costs about twice a slice's substring, and a
 * year by author asks two slices of most of its 4,800 group rows (35 to 25 ms on the 1M file).
 */
export function sliceReaderOf(
  run: (statements: [sql: string, params: [string, string]][]) => Promise<{ results: SlicesRow[]; rowsRead: number }[]>,
  orgKey: string,
  limits: SliceStatementLimits = SLICE_STATEMENT_LIMITS,
): SliceReader {
  for (const [name, value] of Object.entries(limits))
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`a slices statement's ${name} must be a whole number of at least 1, got ${value}`);
  return async (requests) => {
    const texts: string[] = new Array(requests.length);
    let rowsRead = 0;
    // A span's parts are all bucket rows (`summary-assemble.ts` `addGroupMonth`).
    const table = (r: SliceRequest) =>
      r.group === undefined
        ? DAY_SLICES
        : r.group.span === true
          ? SPAN_BUCKET_SLICES
          : r.bucketRow === undefined
            ? GROUP_SLICES
            : BUCKET_SLICES;
    type Entry = { row: unknown; of: SliceRequest; slices: { r: SliceRequest; at: number }[] };
    const tables = [DAY_SLICES, GROUP_SLICES, BUCKET_SLICES, SPAN_BUCKET_SLICES].map((sql) => {
      const entries: Entry[] = [];
      const open = new Map<string, Entry>(); // a row's entry with room for a second slice
      requests.forEach((r, at) => {
        if (table(r) !== sql) return;
        const id = rowId(r);
        const entry = open.get(id);
        if (entry !== undefined) {
          entry.slices.push({ r, at });
          open.delete(id);
        } else {
          const created = { row: rowOf(r), of: r, slices: [{ r, at }] };
          entries.push(created);
          open.set(id, created);
        }
      });
      return { sql, entries };
    });
    // Every statement, in order; sent in batches of a few (`BATCH_STATEMENTS`), their answers read in order.
    const statements = tables.flatMap(({ sql, entries }) =>
      statementsOf(entries, limits).map((chunk) => ({
        sql,
        chunk,
        params: [
          orgKey,
          JSON.stringify(
            chunk.map(({ row, of, slices: [first, second] }) => [
              row,
              of.day,
              first?.r.offset ?? 0,
              first?.r.count ?? 0,
              second?.r.offset ?? 0,
              second?.r.count ?? 0,
            ]),
          ),
        ] as [string, string],
        bytes: chunk.reduce((n, { slices }) => n + slices.reduce((m, { r }) => m + r.count * SORTED_WIDTH, 0), 0),
      })),
    );
    for (let at = 0; at < statements.length; ) {
      let end = at + 1;
      let bytes = statements[at]?.bytes ?? 0;
      while (
        end < statements.length &&
        end - at < BATCH_STATEMENTS &&
        bytes + (statements[end]?.bytes ?? 0) <= BATCH_STATEMENT_BYTES * limits.bytes
      )
        bytes += statements[end++]?.bytes ?? 0;
      const batch = statements.slice(at, end);
      at = end;
      const answers = await run(batch.map(({ sql, params }) => [sql, params]));
      for (const [k, { chunk }] of batch.entries()) {
        const { results, rowsRead: read } = answers[k] ?? { results: [], rowsRead: 0 };
        rowsRead += read;
        const found = new Map<number, SliceRow>();
        for (const { slices } of results) for (const row of JSON.parse(slices ?? "[]") as SliceRow[]) found.set(row[0], row);
        for (const [i, { of, slices }] of chunk.entries()) {
          const [, version, ...read] = found.get(i) ?? [i, null, null, null];
          if (version !== of.version) return { texts: null, rowsRead, corrupt: [] };
          for (const [n, { r: request, at: index }] of slices.entries()) {
            const text = read[n] ?? null;
            if (text === null || text.length !== request.count * SORTED_WIDTH) {
              const { repoKey, day, version, group } = request;
              return { texts: null, rowsRead, corrupt: [{ repoKey, day, version, ...(group ? { group } : {}) }] };
            }
            texts[index] = text;
          }
        }
      }
    }
    return { texts, rowsRead, corrupt: [] };
  };
}

/**
 * The lower median of each source's values, exactly. A source without blocks' parts: selected from
 * its values. One with: its counts per bucket (the parts' counts, its values counted into the same
 * buckets) give the median's bucket and its rank there; the values of that bucket are its own in
 * the bucket and one slice of each part's sorted values (all read in one round trip, shared by the
 * sources that need the same slice); the median is the value at that rank among them.
 * `stale` when a block changed since it was read (then the caller reads the whole summary again),
 * and `corrupt` the blocks whose counts name a bucket outside the scheme or whose sorted values do
 * not match their counts (the caller deletes them and reads again).
 */
export async function resolveMedians(
  sources: readonly Durations[],
  slices: SliceReader,
  kept?: OrgSlices,
): Promise<{ values: (number | null)[]; stale: boolean; bucketValues: number; rowsRead: number; corrupt: BlockId[] }> {
  const values: (number | null)[] = [];
  const malformed = new Map<string, BlockId>();
  for (const { parts } of sources)
    for (const { repoKey, day, version, group, buckets, counts } of parts)
      if (!wellFormed(buckets, counts))
        malformed.set(JSON.stringify([repoKey, day, version, group]), { repoKey, day, version, ...(group ? { group } : {}) });
  if (malformed.size > 0) return { values, stale: true, bucketValues: 0, rowsRead: 0, corrupt: [...malformed.values()] };
  // Each slice asked once, however many sources share it (a week's and the totals' share their days'):
  // by block and bucket.
  const requests: (SliceRequest & { index: number })[] = [];
  const byBlock = new Map<string, Map<number, SliceRequest & { index: number }>>();
  const byPart = new Map<BucketedPart, Map<number, SliceRequest & { index: number }>>();
  const pending: {
    source: number;
    rank: number;
    own: number[];
    gone: number[];
    slices: number[];
    size: number;
    window: PendingWindow | undefined;
  }[] = [];
  // Each walked list's buckets, once: the totals' lists are the groups' own.
  const bucketsOf = new WeakMap<readonly number[], Uint8Array>();
  const bucketsOfList = (list: readonly number[]): Uint8Array => {
    let of = bucketsOf.get(list);
    if (of === undefined) {
      of = new Uint8Array(list.length);
      for (let i = 0; i < list.length; i++) of[i] = durationBucket(list[i] as number);
      bucketsOf.set(list, of);
    }
    return of;
  };
  const counts = new Float64Array(DURATION_BUCKETS);
  for (const [index, { values: lists, parts, removed = [] }] of sources.entries()) {
    values.push(null);
    if (parts.length === 0) {
      values[index] = median(lists, removed);
      continue;
    }
    counts.fill(0);
    let n = 0;
    for (const list of lists) {
      n += list.length;
      const of = bucketsOfList(list);
      for (let i = 0; i < of.length; i++) {
        const b = of[i] as number;
        counts[b] = (counts[b] as number) + 1;
      }
    }
    for (const { buckets, counts: those } of parts)
      for (let i = 0; i < buckets.length; i++) {
        const count = those[i] as number;
        const b = buckets[i] as number;
        counts[b] = (counts[b] as number) + count;
        n += count;
      }
    for (const v of removed) {
      const b = durationBucket(v);
      counts[b] = (counts[b] as number) - 1;
      n--;
    }
    if (n === 0) continue;
    let rank = medianIndex(n);
    let bucket = 0;
    while (rank >= (counts[bucket] ?? 0)) rank -= counts[bucket++] ?? 0;
    // The bucket's values among the walked ones (a bucket is a range of values, so the same test).
    const own: number[] = [];
    for (const list of lists) {
      const of = bucketsOfList(list);
      for (let i = 0; i < of.length; i++) if (of[i] === bucket) own.push(list[i] as number);
    }
    const gone = removed.length === 0 ? removed : removed.filter((v) => durationBucket(v) === bucket);
    // The parts' values in the bucket: where each starts, and how many.
    const hits: { part: BucketedPart; at: number; count: number }[] = [];
    for (const part of parts) {
      let offset = part.start;
      const { buckets, counts: those } = part;
      for (let i = 0; i < buckets.length; i++) {
        const b = buckets[i] as number;
        const count = those[i] as number;
        if (b < bucket) offset += count;
        else {
          // A bucket row holds the bucket's values alone: the whole row, from its start.
          if (b === bucket) hits.push({ part, at: part.metric === undefined ? offset : 0, count });
          break;
        }
      }
    }
    // A span's bucket row of every group together, sorted (`summary-group-spans.ts`): only the
    // window of it that can hold the value at the rank (`rankThroughWindow`).
    let sorted: { part: BucketedPart; count: number } | undefined;
    for (const { part, count } of hits) if (isSortedRow(part, count) && count > (sorted?.count ?? 0)) sorted = { part, count };
    const wanted: number[] = [];
    let size = own.length;
    let window: PendingWindow | undefined;
    for (const { part, at, count } of hits) {
      const { repoKey, day, version, group, metric } = part;
      if (sorted !== undefined && part === sorted.part) continue;
      // A day block's part is shared by the groupings that read its day (and by the totals), as
      // its own part object in each: known by its block and duration (`start`). A group's month
      // block's part is its group's alone: known by itself (a string key cost 2 ms by author).
      let asked = group === undefined ? byBlock.get(`${repoKey}\u0000${day}\u0000${part.start}`) : byPart.get(part);
      if (asked === undefined) {
        asked = new Map();
        if (group === undefined) byBlock.set(`${repoKey}\u0000${day}\u0000${part.start}`, asked);
        else byPart.set(part, asked);
      }
      let request = asked.get(bucket);
      if (request === undefined) {
        request = {
          repoKey,
          day,
          group,
          bucketRow: metric === undefined ? undefined : { metric, bucket },
          version,
          offset: at,
          count,
          index: requests.length,
        };
        requests.push(request);
        asked.set(bucket, request);
      }
      wanted.push(request.index);
      size += count;
    }
    if (sorted !== undefined) {
      const { part, count } = sorted;
      const { lo, hi } = windowOf(count, rank, size, gone.length);
      const row = rowRequest(part, bucket, count);
      window = { index: requests.length, lo, above: count - 1 - hi, row };
      requests.push({ ...row, offset: lo, count: hi - lo + 1, index: requests.length });
    }
    pending.push({ source: index, rank, own, gone, slices: wanted, size, window });
  }
  if (pending.length === 0) return { values, stale: false, bucketValues: 0, rowsRead: 0, corrupt: [] };
  const first = await readDecoded(requests, slices, kept);
  if (first.decoded === null) return { values, stale: true, bucketValues: 0, rowsRead: first.rowsRead, corrupt: first.corrupt };
  const decoded = first.decoded;
  let rowsRead = first.rowsRead;
  let bucketValues = requests.reduce((n, r) => n + r.count, 0);
  // The values of the bucket other than the sorted row's: the walked ones and the other parts' slices.
  const othersOf = ({ own, slices: wanted, size }: (typeof pending)[number]): Float64Array => {
    const into = new Float64Array(size);
    into.set(own);
    let at = own.length;
    for (const i of wanted) {
      const slice = decoded[i] as Float64Array;
      into.set(slice, at);
      at += slice.length;
    }
    return into;
  };
  const whole: { entry: (typeof pending)[number]; others: Float64Array }[] = [];
  for (const entry of pending) {
    const { source, rank, gone, window } = entry;
    const others = othersOf(entry);
    if (window === undefined) {
      values[source] = selectRank(withoutRemoved(others, gone), rank);
      continue;
    }
    const value = rankThroughWindow(decoded[window.index] as Float64Array, window.lo, window.above, others, gone, rank);
    if (value !== null) values[source] = value;
    else whole.push({ entry, others });
  }
  // A window that could not tell (ties at its edges): its row read whole, the values as without it.
  if (whole.length > 0) {
    const rows = whole.map(({ entry }, index) => ({ ...(entry.window as PendingWindow).row, index }));
    const second = await readDecoded(rows, slices, kept);
    rowsRead += second.rowsRead;
    if (second.decoded === null) return { values, stale: true, bucketValues: 0, rowsRead, corrupt: second.corrupt };
    bucketValues += rows.reduce((n, r) => n + r.count, 0);
    for (const [i, { entry, others }] of whole.entries()) {
      const row = second.decoded[i] as Float64Array;
      const all = new Float64Array(others.length + row.length);
      all.set(others);
      all.set(row, others.length);
      values[entry.source] = selectRank(withoutRemoved(all, entry.gone), entry.rank);
    }
  }
  return { values, stale: false, bucketValues, rowsRead, corrupt: [] };
}

/** A source's window of a sorted bucket row: its request, the values before and after it, and the row whole. */
interface PendingWindow {
  index: number;
  lo: number;
  above: number;
  row: SliceRequest;
}

/**
 * A span's bucket rows of every group together with at least this many values are built sorted
 * (`summary-group-spans.ts`), as its head's `sorted_from` records. Only the window of such a row is
 * decoded: a damaged character outside it goes unseen (one inside makes the span corrupt, as before).
 */
export const SORTED_ROW_MIN = 2_048;

/**
 * Whether a part's bucket row is a span's row of every group together that its build sorted: as
 * its head says (`sorted_from`), not as this Worker builds them (a span made by a Worker of before
 * has none sorted, and one of after may sort from another count).
 */
const isSortedRow = (part: BucketedPart, count: number): boolean => {
  const from = part.group?.sortedFrom;
  return (
    part.group?.span === true && part.group.key === "" && part.metric !== undefined && typeof from === "number" && count >= from
  );
};

/** The request of a part's bucket row whole. */
const rowRequest = (part: BucketedPart, bucket: number, count: number): SliceRequest => ({
  repoKey: part.repoKey,
  day: part.day,
  group: part.group,
  bucketRow: { metric: part.metric as 0 | 1, bucket },
  version: part.version,
  offset: 0,
  count,
});

/**
 * Reads and decodes slices: each slice's values, or null (stale, or `corrupt` the blocks of a slice
 * of a character no build writes: the caller deletes them and reads again). Slices the isolate
 * keeps (`kept`, `summary-slice-cache.ts`) are not read again; those read and decoded are kept.
 */
async function readDecoded(
  asked: readonly SliceRequest[],
  slices: SliceReader,
  kept?: OrgSlices,
): Promise<{ decoded: Float64Array[] | null; rowsRead: number; corrupt: BlockId[] }> {
  const decoded: Float64Array[] = new Array(asked.length);
  const missing: number[] = [];
  for (const [i, request] of asked.entries()) {
    const values = kept?.get(request);
    if (values === undefined) missing.push(i);
    else decoded[i] = values;
  }
  if (missing.length === 0) return { decoded, rowsRead: 0, corrupt: [] };
  const read = missing.length === asked.length ? asked : missing.map((i) => asked[i] as SliceRequest);
  const { texts, rowsRead, corrupt } = await slices(read);
  if (texts === null) return { decoded: null, rowsRead, corrupt };
  for (const [k, text] of texts.entries()) {
    const request = read[k] as SliceRequest;
    const into = new Float64Array(text.length / SORTED_WIDTH);
    try {
      decodeSorted(text, into, 0);
    } catch {
      const { repoKey, day, version, group } = request;
      return { decoded: null, rowsRead, corrupt: [{ repoKey, day, version, ...(group ? { group } : {}) }] };
    }
    decoded[missing[k] as number] = into;
    kept?.set(request, into);
  }
  return { decoded, rowsRead, corrupt: [] };
}

/** A block's counts as a build writes them: ascending buckets of the scheme, each with a positive whole count. */
function wellFormed(buckets: readonly number[], counts: readonly number[]): boolean {
  if (!Array.isArray(buckets) || !Array.isArray(counts) || buckets.length !== counts.length) return false;
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i];
    const count = counts[i];
    if (!Number.isSafeInteger(b) || (b as number) < 0 || (b as number) >= DURATION_BUCKETS) return false;
    if (i > 0 && (b as number) <= (buckets[i - 1] as number)) return false;
    if (!Number.isSafeInteger(count) || (count as number) < 1) return false;
  }
  return true;
}
