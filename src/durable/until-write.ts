/**
 * Answers a Durable Object computed from its own SQLite storage, kept in memory until the storage
 * is next written. The object is the only writer of its storage, so an answer computed since the
 * last write is still exact: it is reused without the queries. "Written" is SQLite's
 * `total_changes()` on the object's one connection, which every INSERT, UPDATE and DELETE moves
 * (whichever code path issued it, triggers and rolled-back statements included), so no write path
 * has to remember to invalidate anything: a write that changes nothing the answer depends on only
 * costs one recomputation. Bounded: past `limit` entries the memory starts again.
 *
 * Use it only for reads on hot paths that depend on storage alone (not on the time, not on the
 * arguments' freshness beyond the key), and return the values read-only: callers over RPC get a
 * copy, callers inside the object share the entry.
 */
export class UntilWrite<V> {
  readonly #sql: SqlStorage;
  readonly #limit: number;
  readonly #entries = new Map<string, V>();
  #changes = -1;

  constructor(sql: SqlStorage, limit = 1_000) {
    this.#sql = sql;
    this.#limit = limit;
  }

  get(key: string, compute: () => V): V {
    const changes = this.#sql.exec<{ n: number }>("SELECT total_changes() AS n").one().n;
    if (changes !== this.#changes) {
      this.#entries.clear();
      this.#changes = changes;
    }
    if (this.#entries.has(key)) return this.#entries.get(key) as V;
    const value = compute();
    if (this.#entries.size >= this.#limit) this.#entries.clear();
    this.#entries.set(key, value);
    return value;
  }
}
