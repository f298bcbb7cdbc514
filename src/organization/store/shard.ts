/**
 * The organization's analytics shard (`directory/shards.ts`), in the object's synchronous KV
 * storage: recorded once (its placement, told by the directory), changed afterwards only by a
 * move's switch, which names the shard it moves from (a late first record cannot undo a switch).
 */
const KEY = "analyticsShard";

/** The shard recorded, or null when the directory has not told this object yet. */
export const recordedShard = (storage: DurableObjectStorage): string | null => storage.kv.get<string>(KEY) ?? null;

/** Records the placement unless one is recorded; answers the recorded shard. */
export function recordShard(storage: DurableObjectStorage, shard: string): string {
  const held = recordedShard(storage);
  if (held !== null) return held;
  storage.kv.put(KEY, shard);
  return shard;
}

/** A move's switch: from `from` (or none recorded) to `to`; answers the recorded shard (`to` when switched or already there). */
export function switchShard(storage: DurableObjectStorage, from: string, to: string): string {
  const held = recordedShard(storage);
  if (held !== null && held !== from) return held;
  storage.kv.put(KEY, to);
  return to;
}
