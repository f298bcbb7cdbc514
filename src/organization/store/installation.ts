import { eq, lt } from "drizzle-orm";
import type { WaitingRename } from "../../directory/identity";
import { type InstallationRow, installation, waitingRenames } from "../schema";
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
