import { and, desc, eq, lt, ne } from "drizzle-orm";
import { type SyncRunRow, syncRuns } from "../schema";
import type { Db } from "./db";

/** The progress records of installation syncs (`sync_runs`). Storage only: the decisions are `github-sync.ts`'s. */

/** How many syncs are kept: the running one and the last few finished, for `GET .../sync`. */
const KEPT = 20;

/** The newest sync, or undefined. */
export function latestRun(db: Db): SyncRunRow | undefined {
  return db.select().from(syncRuns).orderBy(desc(syncRuns.id)).limit(1).get();
}

/** The newest finished sync, or undefined. */
export function lastFinishedRun(db: Db): SyncRunRow | undefined {
  return db.select().from(syncRuns).where(ne(syncRuns.state, "running")).orderBy(desc(syncRuns.id)).limit(1).get();
}

export function runById(db: Db, id: number): SyncRunRow | undefined {
  return db.select().from(syncRuns).where(eq(syncRuns.id, id)).get();
}

export function runByTrigger(db: Db, triggerKey: string): SyncRunRow | undefined {
  return db.select().from(syncRuns).where(eq(syncRuns.triggerKey, triggerKey)).get();
}

/** Adds a sync, and forgets all but the newest `KEPT`. */
export function insertRun(db: Db, row: SyncRunRow): void {
  db.insert(syncRuns).values(row).run();
  db.delete(syncRuns)
    .where(lt(syncRuns.id, row.id - KEPT + 1))
    .run();
}

export function updateRun(db: Db, id: number, set: Partial<Omit<SyncRunRow, "id">>): void {
  db.update(syncRuns).set(set).where(eq(syncRuns.id, id)).run();
}

/** Ends a sync that is still running (a finished one stays as it ended). */
export function finishRun(db: Db, id: number, set: Pick<SyncRunRow, "state" | "finishedAt"> & Partial<SyncRunRow>): void {
  db.update(syncRuns)
    .set(set)
    .where(and(eq(syncRuns.id, id), eq(syncRuns.state, "running")))
    .run();
}
