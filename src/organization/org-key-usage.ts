import type { QuotaPolicy, QuotaState } from "../rules/quota";
import { countOrgKeyUse } from "./store/api-keys";
import type { Db } from "./store/db";

/** How soon a key's "last used" reaches storage when no quota sets the pace. */
const DEFAULT_PERSIST_MS = 1000;

/**
 * Organization keys' quota counters and "last used" hours, counted in the object's memory and
 * written shortly after, as a person's are in their `UserObject` (`auth/usage.ts`): the object is
 * single-threaded, so the next request sees the count and it is exact; the first request of a
 * window and the one that exhausts the quota are written before answering. Writing every count
 * before answering would make each answer wait for a commit (measured in bench:members: about
 * 1.16x a personal key's member GET).
 */
export class OrgKeyUsage {
  readonly #storage: DurableObjectStorage;
  readonly #db: Db;
  readonly #counts = new Map<string, QuotaState>();
  readonly #lastUsed = new Map<string, number>();
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(storage: DurableObjectStorage, db: Db) {
    this.#storage = storage;
    this.#db = db;
  }

  /** The key's counter: memory once counted here (the truth while the object lives), else storage. */
  state(keyId: string, stored: QuotaState | undefined): QuotaState | undefined {
    return this.#counts.get(keyId) ?? stored;
  }

  lastUsed(keyId: string, stored: number | null): number | null {
    return this.#lastUsed.get(keyId) ?? stored;
  }

  /** A counted request's new state, written within the policy's delay (at once when it opens or exhausts a window). */
  counted(keyId: string, next: QuotaState, policy: QuotaPolicy): void {
    this.#counts.set(keyId, next);
    if (next.used === 1 || next.used >= policy.limit) this.persist();
    else this.#soon(policy.persistDelayMs);
  }

  used(keyId: string, hour: number, policy: QuotaPolicy | null): void {
    this.#lastUsed.set(keyId, hour);
    this.#soon(policy?.persistDelayMs ?? DEFAULT_PERSIST_MS);
  }

  /** Writes what memory holds (joins the caller's transaction, if any); a key revoked meanwhile is left alone. */
  persist(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#storage.transactionSync(() => {
      for (const [keyId, state] of this.#counts) countOrgKeyUse(this.#db, keyId, state, this.#lastUsed.get(keyId) ?? null);
      for (const [keyId, at] of this.#lastUsed) if (!this.#counts.has(keyId)) countOrgKeyUse(this.#db, keyId, null, at);
      this.#lastUsed.clear();
    });
  }

  #soon(delayMs: number): void {
    if (delayMs === 0) this.persist();
    else this.#timer ??= setTimeout(() => this.persist(), delayMs);
  }
}
