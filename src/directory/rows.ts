import { type CopyPosition, copyPage, deleteOrganizationRowsIfUnchanged, organizationFingerprint } from "../storage/copy";
import { moveRows } from "../storage/renames";
import { placementOf, readPlacements, shardOf } from "./shards";

/**
 * Moves of analytics rows between keys (renames, stray rows joining their organization), on the
 * organization's shard. While an organization moves between shards (`moves.ts`) these wait: they
 * throw `MoveRunning`, and their caller (the webhook consumer) sends the message again to wait a
 * minute, as often as the move lasts (`webhooks/consumer.ts` `waitForMove`).
 */
export class MoveRunning extends Error {
  override name = "MoveRunning";
}

/** A repository rename's rows (`storage/renames.ts`), on the organization's shard. */
export async function renameRepositoryRows(env: Env, home: string, fromKey: string, toName: string): Promise<void> {
  const placement = await placementOf(env, home);
  if (placement.movingTo !== null)
    throw new MoveRunning(`${home} is moving to ${placement.movingTo}: its repository rename waits`);
  await moveRows(shardOf(env, placement.shard).db, { orgKey: home, repo: fromKey }, { orgKey: home, repo: toName });
  await stillPlaced(env, home, placement.shard, "its repository rename");
}

/**
 * After a rename's move of rows on `shard`: a move between shards that began meanwhile may have
 * copied the rows before they moved (a rename changes no count, so the move's catch-up does not see
 * it), so the caller waits for that move and follows the rename again on the shard the move leaves
 * the rows on (the rows are still under the old name there). As the event write path reads its route again after writing
 * (`events.ts` `storeRouted`); an outside review found a rename lost on a move's target without it.
 */
async function stillPlaced(env: Env, home: string, shard: string, what: string): Promise<void> {
  const after = (await readPlacements(env, [home])).get(home);
  if (after !== undefined && (after.movingTo !== null || after.shard !== shard))
    throw new MoveRunning(`${home} began moving during ${what}: it is done again once the move has ended`);
}

/**
 * Every row of `from` joins `to` (`learn.ts` `gatherStrayRows`): one transaction when both are on
 * one shard (`moveRows`), else a copy to `to`'s shard (records merge by version, as events do)
 * followed by the delete of the source. Idempotent: a retry copies what is left again. A key never
 * placed has no rows.
 */
export async function moveOrganizationRows(env: Env, from: string, to: string): Promise<void> {
  const source = (await readPlacements(env, [from])).get(from);
  if (source === undefined) return;
  const target = await placementOf(env, to);
  if (source.movingTo !== null || target.movingTo !== null) throw new MoveRunning(`${from} or ${to} is moving between shards`);
  const a = shardOf(env, source.shard);
  const b = shardOf(env, target.shard);
  // Not read again after (as a rename is): a gather cannot be done again once its rows have moved,
  // and a move that began meanwhile is a known defect (test/known-defects/gather-move-race.test.ts).
  if (a === b) return moveRows(a.db, { orgKey: from }, { orgKey: to });
  // Copy, then delete only if nothing was written to `from` meanwhile (a batch that resolved its
  // home before the directory learned the new one may still write there): else copy again.
  for (let round = 1; ; round++) {
    const before = await organizationFingerprint(a.db, from);
    for (let position: CopyPosition | null = COPY_START; position !== null; ) {
      position = (await copyPage({ db: a.db, orgKey: from }, { db: b.db, orgKey: to, shardIndex: b.index }, position, 500)).next;
    }
    if (await deleteOrganizationRowsIfUnchanged(a.db, from, before)) return;
    if (round === GATHER_ROUNDS)
      throw new Error(`${from}'s rows kept changing while they were gathered into ${to}: not done, to be tried again`);
  }
}

/** Copies of a stray key's rows before a gather gives up for now (its caller's retry goes on). */
const GATHER_ROUNDS = 5;

const COPY_START: CopyPosition = { table: "pull_requests", after: null };
