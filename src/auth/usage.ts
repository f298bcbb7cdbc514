import { countRequest, type QuotaPolicy, type QuotaState, type QuotaVerdict } from "../rules/quota";
import type { KeyKind } from "../schemas/key-kind";
import { setLastUsed } from "./user-store/api-keys";
import type { Db } from "./user-store/db";
import { getQuota, putQuota } from "./user-store/quotas";

/** How soon a key's "last used" reaches storage when no quota sets the pace. */
export const DEFAULT_PERSIST_MS = 1000;

/**
 * The owner's quota counters and keys' "last used" hours, counted in the object's memory and
 * written to storage shortly after (one write for everything counted meanwhile).
 *
 * Counts in memory at once: the object is single-threaded, so the next request sees the count
 * and it is exact. The write follows within `persistDelayMs` (`RATE_LIMIT_PERSIST_MS`, default
 * 1 s), except for the first request of a window and the one that exhausts the quota: those are
 * written in the verdict's transaction, before answering, so an exhausted quota stays exhausted
 * whatever happens to the object. Writing every count before answering makes each answer wait for
 * a commit (measured: about 10% of a member read, the whole cost of counting) and bills a row
 * written per request. The price: a crash or restart of the object forgets the counts of at most
 * the last `persistDelayMs` inside a window. 0 writes every count before answering.
 */
export class Usage {
  readonly #storage: DurableObjectStorage;
  readonly #db: Db;
  readonly #quotas = new Map<KeyKind, QuotaState>();
  /** Keys' "last used" hours not written yet, by key id. */
  readonly #lastUsed = new Map<string, number>();
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(storage: DurableObjectStorage, db: Db) {
    this.#storage = storage;
    this.#db = db;
  }

  /** Counts one request against the quota of `kind` (null: no quota configured). */
  count(kind: KeyKind, policy: QuotaPolicy | null, now: number): QuotaVerdict | null {
    if (policy === null) return null;
    const { verdict, next } = countRequest(this.#quotas.get(kind) ?? getQuota(this.#db, kind), policy, now);
    if (verdict.allowed) {
      this.#quotas.set(kind, next);
      if (next.used === 1 || next.used >= policy.limit) this.persist();
      else this.#soon(policy.persistDelayMs);
    }
    return verdict;
  }

  /** The key's last use as known here: the hour not written yet, else the stored one. */
  lastUsed(keyId: string, stored: number | null): number | null {
    return this.#lastUsed.get(keyId) ?? stored;
  }

  /** Records a key's new "last used" hour, written within `delayMs`. */
  used(keyId: string, hour: number, delayMs: number): void {
    this.#lastUsed.set(keyId, hour);
    this.#soon(delayMs);
  }

  /**
   * Writes the counters and "last used" hours held in memory to storage (joins the caller's
   * transaction, if any). Idempotent. A "last used" of a key replaced meanwhile changes nothing.
   */
  persist(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#storage.transactionSync(() => {
      for (const [kind, state] of this.#quotas) putQuota(this.#db, kind, state);
      for (const [keyId, at] of this.#lastUsed) setLastUsed(this.#db, keyId, at);
      this.#lastUsed.clear();
    });
  }

  /** Schedules `persist` (one write for everything counted meanwhile); 0 writes now. */
  #soon(delayMs: number): void {
    if (delayMs === 0) this.persist();
    else this.#timer ??= setTimeout(() => this.persist(), delayMs);
  }
}
