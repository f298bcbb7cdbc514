import {
  type CopyPosition,
  copyPage,
  deleteOrganizationRowsIfUnchanged,
  hasOrganizationRows,
  organizationFingerprint,
} from "../storage/copy";
import { moveRows, type RowScope, RowsFenced } from "../storage/renames";
import { liftStaleFences } from "./moves";
import { placementOf, readPlacements, type Shard, shardOf } from "./shards";

/**
 * Moves of analytics rows between keys (renames, stray rows joining their organization), on the
 * organization's shard. While an organization moves between shards (`moves.ts`) these wait: they
 * throw `MoveRunning`, and their caller (the webhook consumer) sends the message again to wait a
 * minute, as often as the move lasts (`webhooks/consumer.ts` `waitForMove`). A move that begins
 * after they read the placement fences its source before it copies (`moves.ts` `beginMove`), so
 * a move of rows there either lands before the copy starts or changes nothing (`RowsFenced`).
 */
export class MoveRunning extends Error {
  override name = "MoveRunning";
}

/**
 * `moveRows` on a shard, a fence there answered as MoveRunning; a fence no move holds any more
 * (`moves.ts` `liftStaleFences`) is lifted and the move of rows tried once more.
 */
async function moveRowsOrWait(
  env: Env,
  shard: Shard,
  from: RowScope,
  to: RowScope,
  renameSeq: number | null = null,
): Promise<"moved" | "already followed"> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await moveRows(shard.db, from, to, renameSeq);
    } catch (error) {
      if (!(error instanceof RowsFenced)) throw error;
      if (attempt > 1 || !(await liftStaleFences(env, shard, [...new Set([from.orgKey, to.orgKey])])))
        throw new MoveRunning(`${error.message}: done again once the move has ended`);
    }
  }
}

/**
 * A repository rename's rows (`storage/renames.ts`), on the organization's shard: the entry `seq`
 * of its organization object's rename log. Answers "already followed" when that entry (or a later
 * one) already moved the rows there: by another consumer, or before a move between shards carried
 * the record of it.
 */
export async function renameRepositoryRows(
  env: Env,
  home: string,
  fromKey: string,
  toName: string,
  seq: number | null,
): Promise<"moved" | "already followed"> {
  const placement = await placementOf(env, home);
  if (placement.movingTo !== null)
    throw new MoveRunning(`${home} is moving to ${placement.movingTo}: its repository rename waits`);
  return moveRowsOrWait(env, shardOf(env, placement.shard), { orgKey: home, repo: fromKey }, { orgKey: home, repo: toName }, seq);
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
  if (a === b) {
    await moveRowsOrWait(env, a, { orgKey: from }, { orgKey: to });
    return;
  }
  // Copy, then delete only if nothing was written to `from` meanwhile (a batch that resolved its
  // home before the directory learned the new one may still write there): else copy again.
  for (let round = 1; ; round++) {
    const before = await organizationFingerprint(a.db, from);
    for (let position: CopyPosition | null = COPY_START; position !== null; ) {
      position = (await copyPage({ db: a.db, orgKey: from }, { db: b.db, orgKey: to, shardIndex: b.index }, position, 500)).next;
    }
    // A move of `to` that began during the copy may have copied its shard before these rows
    // landed (a newer state merged changes no count): keep the stray rows, and gather them again
    // once the move has ended, into the shard it leaves `to` on.
    const after = (await readPlacements(env, [to])).get(to);
    if (after !== undefined && (after.movingTo !== null || after.shard !== target.shard))
      throw new MoveRunning(`${to} began moving while ${from}'s rows were copied to it: gathered again once the move has ended`);
    if (await deleteOrganizationRowsIfUnchanged(a.db, from, before)) return;
    if (round === GATHER_ROUNDS)
      throw new Error(`${from}'s rows kept changing while they were gathered into ${to}: not done, to be tried again`);
  }
}

/** Whether any analytics row is stored under `key` (a key never placed has none). Places nothing. */
export async function keyHasRows(env: Env, key: string): Promise<boolean> {
  const placement = (await readPlacements(env, [key])).get(key);
  return placement !== undefined && (await hasOrganizationRows(shardOf(env, placement.shard).db, key));
}

/** Copies of a stray key's rows before a gather gives up for now (its caller's retry goes on). */
const GATHER_ROUNDS = 5;

const COPY_START: CopyPosition = { table: "pull_requests", after: null };
