import { and, eq, gte, inArray, lt, ne, or } from "drizzle-orm";
import type { WaitingRename } from "../../directory/identity";
import { type HeldLogin, heldLogins, type InstallationRow, installation, waitingRenames } from "../schema";
import type { Db } from "./db";

/**
 * The installation row (id = 1: one organization per object) and the renames of its login that
 * wait for an earlier rename of their chain. Storage only: the decisions are the caller's.
 */

/** The installation, whether installed or not; undefined until one was registered here. */
export function getInstallation(db: Db): InstallationRow | undefined {
  return db.select().from(installation).where(eq(installation.id, 1)).get();
}

/** Registers the installation, or replaces every field of the one registered. */
export function putInstallation(db: Db, row: InstallationRow): void {
  db.insert(installation).values(row).onConflictDoUpdate({ target: installation.id, set: row }).run();
}

/** Changes some fields of the installation; nothing when there is none. */
export function updateInstallation(db: Db, set: Partial<Omit<InstallationRow, "id">>): void {
  db.update(installation).set(set).where(eq(installation.id, 1)).run();
}

/** Keeps an organization rename until the chain reaches its `from`. */
export function addWaitingRename(db: Db, rename: { fromKey: string; toLogin: string; receivedAt: number }): void {
  db.insert(waitingRenames).values(rename).run();
}

/** Every waiting rename, after dropping those received before `receivedBefore`. */
export function waitingRenamesSince(db: Db, receivedBefore: number): WaitingRename[] {
  db.delete(waitingRenames).where(lt(waitingRenames.receivedAt, receivedBefore)).run();
  return db.select().from(waitingRenames).all();
}

/** Drops the waiting renames a chain used. */
export function deleteWaitingRenames(db: Db, ids: readonly number[]): void {
  for (const id of ids) db.delete(waitingRenames).where(eq(waitingRenames.id, id)).run();
}

/**
 * How long after a rename was applied here its consumer may still set apart the rows under the
 * login it left: the queue's first attempt and its retries (about 5 minutes in all) fit; a
 * delivery back from the dead-letter queue, or a consumer that kept failing, does not (the login
 * may have a new owner by then, whose rows those would be).
 */
export const HOLD_WINDOW_MS = 10 * 60_000;

/** Records a login left by the rename of delivery `deliveryKey`, its stray rows to be set apart (`held_logins`). */
export function recordHold(db: Db, loginKey: string, deliveryKey: string, now: number): void {
  db.insert(heldLogins).values({ loginKey, deliveryKey, state: "to_hold", recordedAt: now }).run();
}

/**
 * Claims an entry for its hold: `to_hold` (or `holding`, a retry) becomes `holding`, only within
 * `HOLD_WINDOW_MS` of `recorded_at`. Answers whether the caller may move the rows.
 */
export function claimHold(db: Db, seq: number, now: number): boolean {
  const claimed = db
    .update(heldLogins)
    .set({ state: "holding" })
    .where(
      and(
        eq(heldLogins.seq, seq),
        inArray(heldLogins.state, ["to_hold", "holding"]),
        gte(heldLogins.recordedAt, now - HOLD_WINDOW_MS),
      ),
    )
    .returning({ seq: heldLogins.seq })
    .all();
  return claimed.length > 0;
}

/**
 * The entries whose holding key may be gathered now: `held`, and `holding` past the window (its
 * hold can no longer run; what it moved is gathered as it stands).
 */
export function gatherableHolds(db: Db, now: number): HeldLogin[] {
  return db
    .select()
    .from(heldLogins)
    .where(
      or(eq(heldLogins.state, "held"), and(eq(heldLogins.state, "holding"), lt(heldLogins.recordedAt, now - HOLD_WINDOW_MS))),
    )
    .orderBy(heldLogins.seq)
    .all();
}

/** Marks gathered entries done: `held` ones, and `holding` ones still past the window (by `seq`: any other untouched). */
export function holdsGathered(db: Db, seqs: readonly number[], now: number): void {
  if (seqs.length === 0) return;
  db.update(heldLogins)
    .set({ state: "done" })
    .where(
      and(
        inArray(heldLogins.seq, [...seqs]),
        or(eq(heldLogins.state, "held"), and(eq(heldLogins.state, "holding"), lt(heldLogins.recordedAt, now - HOLD_WINDOW_MS))),
      ),
    )
    .run();
}

/**
 * How long a `done` entry is kept: a hold still under way when a gather closed its entry marks it
 * held again (`OrganizationObject.holdDone`), so it must outlive any hold (claimed within
 * `HOLD_WINDOW_MS`); nothing else reads it.
 */
export const DONE_HOLD_KEPT_MS = 24 * 3_600_000;

/**
 * The entries not gathered yet, oldest first, after closing those not claimed in time
 * (`HOLD_WINDOW_MS`) and dropping `done` ones older than `DONE_HOLD_KEPT_MS`.
 */
export function openHolds(db: Db, now: number): HeldLogin[] {
  db.delete(heldLogins)
    .where(and(eq(heldLogins.state, "done"), lt(heldLogins.recordedAt, now - DONE_HOLD_KEPT_MS)))
    .run();
  db.update(heldLogins)
    .set({ state: "done" })
    .where(and(eq(heldLogins.state, "to_hold"), lt(heldLogins.recordedAt, now - HOLD_WINDOW_MS)))
    .run();
  return db.select().from(heldLogins).where(ne(heldLogins.state, "done")).orderBy(heldLogins.seq).all();
}

/** Moves entries on from one of the states `from` (by `seq`: an entry recorded since, or moved on by another consumer, is untouched). */
export function setHoldState(db: Db, seqs: readonly number[], from: readonly HeldLogin["state"][], to: HeldLogin["state"]): void {
  if (seqs.length > 0)
    db.update(heldLogins)
      .set({ state: to })
      .where(and(inArray(heldLogins.seq, [...seqs]), inArray(heldLogins.state, [...from])))
      .run();
}
