import { eq } from "drizzle-orm";
import type { KeyKind } from "../../schemas/key-kind";
import { apiKeys } from "../user-schema";
import type { Db } from "./db";

/** The user's current key of each kind (only its SHA-256 hash). */

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export const keyOfKind = (db: Db, kind: KeyKind): ApiKeyRow | undefined =>
  db.select().from(apiKeys).where(eq(apiKeys.kind, kind)).get();

export const allKeys = (db: Db): ApiKeyRow[] => db.select().from(apiKeys).all();

/** Makes `row` the current key of its kind; returns the one it replaced. */
export function replaceKey(db: Db, row: ApiKeyRow): ApiKeyRow | undefined {
  const before = keyOfKind(db, row.kind);
  db.insert(apiKeys).values(row).onConflictDoUpdate({ target: apiKeys.kind, set: row }).run();
  return before;
}

/** Deletes the key of `kind`; returns it (undefined: there was none). */
export function deleteKeyOfKind(db: Db, kind: KeyKind): ApiKeyRow | undefined {
  const before = keyOfKind(db, kind);
  db.delete(apiKeys).where(eq(apiKeys.kind, kind)).run();
  return before;
}

/** Records the hour a key was last used; a key replaced meanwhile is left alone. */
export function setLastUsed(db: Db, keyId: string, at: number): void {
  db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.keyId, keyId)).run();
}
