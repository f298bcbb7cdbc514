/**
 * A `Map` used as a bounded memory of the most recent entries (a Map keeps insertion order): sets
 * `key` as its newest entry and forgets the oldest ones beyond `capacity`. The isolate's notes
 * (`PagePlans`, `SummaryPlans`, `AccessGuesses`, the edge days' empty days) all keep this way.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, capacity: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= capacity) break;
    map.delete(oldest);
  }
}
