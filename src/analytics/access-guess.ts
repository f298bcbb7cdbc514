import type { DurableResult } from "../lib/durable-call";
import { foldName, repoKeyList } from "../lib/names";
import { setNewest } from "../lib/newest";
import type { AnalyticsAccess } from "../rules/analytics-access";

/**
 * The last access decision this isolate saw for a caller, organization and repositories: a guess of
 * what the organization's object will answer, so a read can start alongside the decision instead
 * of after it. Never a decision: the reader uses what it read only when the decision yields exactly
 * the input it read for. Bounded in entries (the oldest goes first) and in size (an access listing
 * more repositories than `largest` is not kept). Each analytics reader (`read.ts`: the export's pages, the summary)
 * keeps an instance (256 × 1,000 names at most each).
 */
export class AccessGuesses<A extends AnalyticsAccess = AnalyticsAccess> {
  readonly #entries = new Map<string, A>();
  readonly #maxEntries: number;
  readonly #largest: number;

  constructor(maxEntries = 256, largest = 1_000) {
    this.#maxEntries = maxEntries;
    this.#largest = largest;
  }

  /**
   * The guess is the object's decision for these names, so the key holds everything the decision
   * depends on: the organization, the caller and the repositories named (section 21's list, as
   * keys: any order or case of the same list is the same entry). The author list changes no access;
   * the reader still compares the whole statement input (authors included) before it uses an early answer.
   */
  static key(org: string, callerId: string, repos: readonly string[] | undefined): string {
    return JSON.stringify([foldName(org), callerId, repos === undefined ? null : repoKeyList(repos)]);
  }

  get(key: string): A | undefined {
    return this.#entries.get(key);
  }

  /**
   * Keeps the decision only for a caller the key verdict let through: one refused (401, 429) loses
   * the guess, so a client hammering over its quota costs at most one early read.
   */
  record(key: string, access: DurableResult<A>, allowed: boolean): void {
    this.#entries.delete(key);
    if (!allowed || !access.ok) return;
    const size = (access.value.accessibleRepoKeys?.length ?? 0) + access.value.excludedRepoKeys.length;
    if (size > this.#largest) return;
    setNewest(this.#entries, key, access.value, this.#maxEntries);
  }
}
