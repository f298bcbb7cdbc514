import { and, eq, inArray, lt, ne } from "drizzle-orm";
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

/** Records a login left by a rename (to `toKey`), its stray rows to be set apart (`held_logins`). */
export function recordHold(db: Db, loginKey: string, toKey: string, now: number): void {
  db.insert(heldLogins).values({ loginKey, toKey, state: "to_hold", recordedAt: now }).run();
}

/** Whether a rename from `loginKey` to `toKey` was received before (any entry, gathered or not). */
export function renameSeenBefore(db: Db, loginKey: string, toKey: string): boolean {
  const seen = db
    .select({ seq: heldLogins.seq })
    .from(heldLogins)
    .where(and(eq(heldLogins.loginKey, loginKey), eq(heldLogins.toKey, toKey)))
    .limit(1)
    .get();
  return seen !== undefined;
}

/** The entries not gathered yet, oldest first. */
export function openHolds(db: Db): HeldLogin[] {
  return db.select().from(heldLogins).where(ne(heldLogins.state, "done")).orderBy(heldLogins.seq).all();
}

/** Moves entries on (by `seq`, so an entry recorded since is untouched). */
export function setHoldState(db: Db, seqs: readonly number[], state: HeldLogin["state"]): void {
  if (seqs.length > 0)
    db.update(heldLogins)
      .set({ state })
      .where(inArray(heldLogins.seq, [...seqs]))
      .run();
}
