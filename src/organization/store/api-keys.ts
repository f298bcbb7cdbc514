import { and, asc, eq } from "drizzle-orm";
import { orgApiKeys as k, type OrgApiKeyRow } from "../schema";
import type { Db } from "./db";

/** The organization's own keys (contract section 18): only their SHA-256 hashes. */

export const orgKeyByHash = (db: Db, keyHash: string): OrgApiKeyRow | undefined =>
  db.select().from(k).where(eq(k.keyHash, keyHash)).get();

export const orgKeyById = (db: Db, keyId: string): OrgApiKeyRow | undefined =>
  db.select().from(k).where(eq(k.keyId, keyId)).get();

export const orgKeysOfKind = (db: Db, kind: OrgApiKeyRow["kind"]): OrgApiKeyRow[] =>
  db.select().from(k).where(eq(k.kind, kind)).all();

export const allOrgKeys = (db: Db): OrgApiKeyRow[] =>
  db.select().from(k).orderBy(asc(k.kind), asc(k.createdAt), asc(k.keyId)).all();

/** Stores a new key, or a regenerated one in place (same id; its quota window carries over). */
export function putOrgKey(db: Db, row: OrgApiKeyRow): void {
  const { windowStart: _w, used: _u, ...settings } = row;
  db.insert(k).values(row).onConflictDoUpdate({ target: k.keyId, set: settings }).run();
}

export function deleteOrgKey(db: Db, keyId: string): void {
  db.delete(k).where(eq(k.keyId, keyId)).run();
}

/** A request counted against the key's own quota, and its "last used" hour. */
export function countOrgKeyUse(
  db: Db,
  keyId: string,
  quota: { windowStart: number; used: number } | null,
  lastUsedAt: number | null,
): void {
  const set = { ...(quota ?? {}), ...(lastUsedAt === null ? {} : { lastUsedAt }) };
  if (Object.keys(set).length > 0)
    db.update(k)
      .set(set)
      .where(and(eq(k.keyId, keyId)))
      .run();
}
