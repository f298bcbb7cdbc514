import { eq } from "drizzle-orm";
import { sessions } from "../user-schema";
import type { Db } from "./db";

/** The user's browser sessions (contract section 13), by the SHA-256 of the cookie's token. */

export type SessionRow = typeof sessions.$inferSelect;

export const getSession = (db: Db, tokenHash: string): SessionRow | undefined =>
  db.select().from(sessions).where(eq(sessions.tokenHash, tokenHash)).get();

export const allSessions = (db: Db): SessionRow[] => db.select().from(sessions).all();

export function insertSession(db: Db, row: SessionRow): void {
  db.insert(sessions).values(row).run();
}

export function touchSession(db: Db, tokenHash: string, lastSeenAt: number): void {
  db.update(sessions).set({ lastSeenAt }).where(eq(sessions.tokenHash, tokenHash)).run();
}

export function deleteSession(db: Db, tokenHash: string): void {
  db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).run();
}

/** Every session of the user ("sign out everywhere"), in one statement. */
export function deleteEverySession(db: Db): void {
  db.delete(sessions).run();
}
