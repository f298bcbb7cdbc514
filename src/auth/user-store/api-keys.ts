import { and, asc, eq } from "drizzle-orm";
import type { KeyKind } from "../../schemas/key-kind";
import { apiKeys } from "../user-schema";
import type { Db } from "./db";

/** The user's named keys (only their SHA-256 hashes). */

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export const keyByHash = (db: Db, keyHash: string): ApiKeyRow | undefined =>
  db.select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)).get();

export const keyById = (db: Db, keyId: string): ApiKeyRow | undefined =>
  db.select().from(apiKeys).where(eq(apiKeys.keyId, keyId)).get();

export const keyByName = (db: Db, kind: KeyKind, nameKey: string): ApiKeyRow | undefined =>
  db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.kind, kind), eq(apiKeys.nameKey, nameKey)))
    .get();

/** Every key, by kind then creation. */
export const allKeys = (db: Db): ApiKeyRow[] =>
  db.select().from(apiKeys).orderBy(asc(apiKeys.kind), asc(apiKeys.createdAt), asc(apiKeys.keyId)).all();

export const keysOfKind = (db: Db, kind: KeyKind): ApiKeyRow[] => db.select().from(apiKeys).where(eq(apiKeys.kind, kind)).all();

/** Stores a new key, or a regenerated one in place (same id). */
export function putKey(db: Db, row: ApiKeyRow): void {
  db.insert(apiKeys).values(row).onConflictDoUpdate({ target: apiKeys.keyId, set: row }).run();
}

export function deleteKey(db: Db, keyId: string): void {
  db.delete(apiKeys).where(eq(apiKeys.keyId, keyId)).run();
}

export function deleteKeysOfKind(db: Db, kind: KeyKind): void {
  db.delete(apiKeys).where(eq(apiKeys.kind, kind)).run();
}

/** Records the hour a key was last used; a key revoked meanwhile is left alone. */
export function setLastUsed(db: Db, keyId: string, at: number): void {
  db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.keyId, keyId)).run();
}
