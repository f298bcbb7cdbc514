/**
 * Answers a Durable Object computed from its own SQLite storage, kept in memory until the storage
 * is next written. The object is the only writer of its storage, so an answer computed since the
 * last write is still exact: it is reused without the queries. "Written" is SQLite's
 * `total_changes()` on the object's one connection, which every INSERT, UPDATE and DELETE moves
 * (whichever code path issued it, and also when its transaction is later rolled back), so no
 * write path has to remember to invalidate anything: a write that changes nothing the answer
 * depends on only costs one recomputation.
 *
 * Rules for using it: only for reads that depend on storage and on the key alone (not on the time,
 * not on the spelling of a name the key folds); never inside a transaction after a write in it
 * (a rollback does not move the counter back, so an answer read from rows the rollback undid would
 * stay); and treat the values as read-only (callers over RPC get a copy, callers inside the object
 * share the entry). `deleteAll()` may reopen the connection and restart the counter: an object that
 * uses it must drop its UntilWrite too.
 *
 * Bounded by weight: each entry weighs `weigh(value)` (1 by default), at most `budget` in all; past
 * it the memory starts again, and a value heavier than the whole budget is not kept.
 */
export class UntilWrite<V> {
  readonly #sql: SqlStorage;
  readonly #budget: number;
  readonly #weigh: (value: V) => number;
  readonly #entries = new Map<string, V>();
  #weight = 0;
  #changes = -1;

  constructor(sql: SqlStorage, { budget = 1_000, weigh = () => 1 }: { budget?: number; weigh?: (value: V) => number } = {}) {
    this.#sql = sql;
    this.#budget = budget;
    this.#weigh = weigh;
  }

  get(key: string, compute: () => V): V {
    const changes = this.#sql.exec<{ n: number }>("SELECT total_changes() AS n").one().n;
    if (changes !== this.#changes) {
      this.#clear();
      this.#changes = changes;
    }
    if (this.#entries.has(key)) return this.#entries.get(key) as V;
    const value = compute();
    const weight = this.#weigh(value);
    if (weight > this.#budget) return value;
    if (this.#weight + weight > this.#budget) this.#clear();
    this.#entries.set(key, value);
    this.#weight += weight;
    return value;
  }

  #clear(): void {
    this.#entries.clear();
    this.#weight = 0;
  }
}
