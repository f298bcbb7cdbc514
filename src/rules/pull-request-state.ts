/**
 * Which of two states of one pull request to keep (contract sections 5 and 17), for every path a
 * pull request comes through (webhooks, the events API, GitHub sync, renames). The event write
 * path applies it in SQL, one event at a time against the stored row (`storage/events.ts`: its
 * upsert spells the same three cases), and so does a rename's move of rows (`storage/renames.ts`);
 * this is the rule's reference, for one state arriving on another.
 *
 * - The greatest `updatedAt` wins, and the first stored stays among equals...
 * - ...except that a merge beats an unmerged state of the same version: GitHub's `updated_at` has
 *   one-second resolution, so a `labeled` delivery and the merge often share it.
 * - A merge is final (GitHub never un-merges): a newer state without one keeps the stored merge
 *   time, and an older state that carries one still merges a newer unmerged state, changing
 *   nothing else of it.
 */
export interface PullRequestVersion {
  updatedAt: number;
  mergedAt: number | null;
}

/** Whether `incoming` replaces `held`'s fields. */
export const supersedes = (incoming: PullRequestVersion, held: PullRequestVersion): boolean =>
  incoming.updatedAt > held.updatedAt ||
  (incoming.updatedAt === held.updatedAt && held.mergedAt === null && incoming.mergedAt !== null);

/** The state to keep after `incoming` arrives on `held`. */
export function nextPullRequestState<T extends PullRequestVersion>(held: T, incoming: T): T {
  if (supersedes(incoming, held)) return { ...incoming, mergedAt: incoming.mergedAt ?? held.mergedAt };
  if (held.mergedAt === null && incoming.mergedAt !== null) return { ...held, mergedAt: incoming.mergedAt };
  return held;
}
