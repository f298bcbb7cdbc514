import { asc, eq, sql } from "drizzle-orm";
import { MAX_SEAT_REQUESTS } from "../../schemas/settings";
import { members, seatRequests } from "../schema";
import type { Db } from "./db";

/** The waiting list for seats (contract section 20). Storage only: the caller has checked access. */

/** Who of `githubUserIds` waits already. */
export function waitingAmong(db: Db, githubUserIds: readonly string[]): Set<string> {
  if (githubUserIds.length === 0) return new Set();
  const rows = db
    .select({ id: seatRequests.githubUserId })
    .from(seatRequests)
    // One JSON parameter, not one per id: SQLite's bound-variable limit.
    .where(sql`${seatRequests.githubUserId} in (select value from json_each(${JSON.stringify(githubUserIds)}))`)
    .all();
  return new Set(rows.map((r) => r.id));
}

export function addSeatRequest(db: Db, githubUserId: string, since: number): void {
  db.insert(seatRequests).values({ githubUserId, since }).onConflictDoNothing().run();
}

/** The member got a seat or left: off the list. */
export function dropSeatRequest(db: Db, githubUserId: string): void {
  db.delete(seatRequests).where(eq(seatRequests.githubUserId, githubUserId)).run();
}

/** The waiting list, oldest first, with each member's current login. */
export function seatRequestPage(db: Db) {
  return db
    .select({ githubUserId: seatRequests.githubUserId, githubLogin: members.githubLogin, since: seatRequests.since })
    .from(seatRequests)
    .innerJoin(members, eq(members.githubUserId, seatRequests.githubUserId))
    .orderBy(asc(seatRequests.since), asc(seatRequests.githubUserId))
    .limit(MAX_SEAT_REQUESTS)
    .all();
}
