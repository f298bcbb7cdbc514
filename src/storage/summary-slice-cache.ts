import type { OrgSlices, SliceRequest } from "./summary-medians";

/**
 * The blocks' slices an isolate has read and decoded (issue 31: a summary asked again, by a
 * dashboard or a script, reads its medians' slices again otherwise: one more call to D1, and for a
 * year by week 4 ms of its shard's time), by organization, block, version and range.
 *
 * Why it is exact, not a cache of answers: a stored block's content never changes under its
 * version. Every write to a block's day deletes the block, a build writes a new random version
 * (`summary-days.ts`, `summary-group-months.ts`, `summary-group-spans.ts`) and none updates a
 * block in place, so the values of a range of one version are those values for good. A summary
 * asks for the versions its statement read, so a slice kept here is exactly what D1 would answer
 * while the block is stored; once the block is rebuilt, its old version is what that statement's
 * counts came from, so the figures are still those of one moment (D1 would have answered "stale",
 * and the summary would have been read again). Only slices that decoded are kept: a damaged row is
 * found as before and its block deleted, and its new version is read from D1.
 *
 * Bounded by the memory it holds, estimated per slice as its values (8 bytes each), its key (2
 * bytes a character) and `SLICE_ENTRY_BYTES` for the array, the string and the map's entry
 * (most slices hold a few values: an outside review measured about 490 bytes of heap for a slice
 * of two values and a key of 100 characters); the least recently used go first. The arrays it
 * hands out are shared by every request of the isolate: the readers only read them (`resolveMedians`).
 */
export class SliceCache {
  readonly #slices = new Map<string, Float64Array>();
  #bytes = 0;

  /** At most this many bytes are kept, as `sliceBytes` estimates them (0: none). */
  readonly maxBytes: number;

  constructor(maxBytes = 16_000_000) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
      throw new RangeError(`a slice cache holds a whole number of bytes of at least 0, got ${maxBytes}`);
    this.maxBytes = maxBytes;
  }

  /** The cache of one organization's blocks (a block is known by its organization, then as `sliceKey` says). */
  of(orgKey: string): OrgSlices {
    return {
      get: (request) => this.#get(`${orgKey}\u0000${sliceKey(request)}`),
      set: (request, values) => this.#set(`${orgKey}\u0000${sliceKey(request)}`, values),
    };
  }

  /** How many slices are kept, and their bytes as `sliceBytes` estimates them (tests). */
  get size(): { slices: number; bytes: number } {
    return { slices: this.#slices.size, bytes: this.#bytes };
  }

  /** Forgets every slice (tests that damage a stored block in place, which no build does). */
  clear(): void {
    this.#slices.clear();
    this.#bytes = 0;
  }

  #get(key: string): Float64Array | undefined {
    const values = this.#slices.get(key);
    if (values !== undefined) {
      // Used last: kept longest.
      this.#slices.delete(key);
      this.#slices.set(key, values);
    }
    return values;
  }

  #set(key: string, values: Float64Array): void {
    const bytes = sliceBytes(key, values);
    if (bytes > this.maxBytes) return;
    const old = this.#slices.get(key);
    if (old !== undefined) {
      this.#slices.delete(key);
      this.#bytes -= sliceBytes(key, old);
    }
    this.#slices.set(key, values);
    this.#bytes += bytes;
    for (const [oldest, kept] of this.#slices) {
      if (this.#bytes <= this.maxBytes) break;
      this.#slices.delete(oldest);
      this.#bytes -= sliceBytes(oldest, kept);
    }
  }
}

/** What a kept slice costs beside its values and its key: the array, the string and the map's entry. */
export const SLICE_ENTRY_BYTES = 400;

/** The bytes a kept slice is counted for: its values, its key (with the organization) and `SLICE_ENTRY_BYTES`. */
export const sliceBytes = (key: string, values: Float64Array): number => values.byteLength + 2 * key.length + SLICE_ENTRY_BYTES;

/**
 * A slice's identity within its organization: the table its row is in (a day block's, a group's
 * month block's, a month's bucket row, a span's bucket row), the row, the version and the range.
 */
export function sliceKey({ repoKey, day, group, bucketRow, version, offset, count }: SliceRequest): string {
  const table = group === undefined ? "d" : group.span === true ? "s" : bucketRow === undefined ? "g" : "b";
  const row =
    group === undefined
      ? repoKey
      : `${group.kind}\u0000${group.key}\u0000${group.first}\u0000${group.last}\u0000${bucketRow?.metric}\u0000${bucketRow?.bucket}`;
  return `${table}\u0000${row}\u0000${day}\u0000${version}\u0000${offset}\u0000${count}`;
}
