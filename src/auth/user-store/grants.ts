import { and, eq, ne } from "drizzle-orm";
import { SCOPES, type Scope } from "../scopes";
import * as schema from "../user-schema";
import type { Db } from "./db";

/**
 * The person's OAuth grants inside their UserObject (contract section 19): statements only, run
 * inside the object's transactions. The object decides; the library's KV records follow.
 */

export type GrantRow = typeof schema.oauthGrants.$inferSelect;

/** A grant as the person sees it on /app/keys ("Connected apps"). */
export interface GrantSummary {
  grantId: string;
  clientName: string;
  clientId: string;
  scopes: Scope[];
  approvedAt: number;
  lastUsedAt: number | null;
}

export interface NewGrant {
  grantId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: readonly Scope[];
}

const g = schema.oauthGrants;

/** Stored scopes, in the contract's order; anything unknown is dropped. */
export const grantScopes = (row: GrantRow): Scope[] => {
  const stored = new Set(row.scopes.split(" "));
  return SCOPES.filter((scope) => stored.has(scope));
};

/**
 * Records an approval. As the library does for its own records, a new approval replaces the
 * person's earlier grants of the same client (a client ID metadata document's `client_id` is
 * shared by every installation, so there only those with the same redirect URI). Answers the ids
 * it replaced.
 */
export function insertGrant(db: Db, grant: NewGrant, sharedClientId: boolean, now: number): string[] {
  const same = sharedClientId
    ? and(eq(g.clientId, grant.clientId), eq(g.redirectUri, grant.redirectUri))
    : eq(g.clientId, grant.clientId);
  const replaced = db
    .select({ grantId: g.grantId })
    .from(g)
    .where(and(same, ne(g.grantId, grant.grantId)))
    .all();
  for (const { grantId } of replaced) db.delete(g).where(eq(g.grantId, grantId)).run();
  db.insert(g)
    .values({ ...grant, scopes: grant.scopes.join(" "), approvedAt: now, lastUsedAt: null })
    .run();
  return replaced.map((r) => r.grantId);
}

export const findGrant = (db: Db, grantId: string): GrantRow | undefined =>
  db.select().from(g).where(eq(g.grantId, grantId)).get();

/** "Last used", to the hour: one write per grant per hour at most. */
export function touchGrant(db: Db, row: GrantRow, hour: number): void {
  if (row.lastUsedAt !== hour) db.update(g).set({ lastUsedAt: hour }).where(eq(g.grantId, row.grantId)).run();
}

export const listGrants = (db: Db): GrantSummary[] =>
  db
    .select()
    .from(g)
    .all()
    .map((row) => ({
      grantId: row.grantId,
      clientName: row.clientName,
      clientId: row.clientId,
      scopes: grantScopes(row),
      approvedAt: row.approvedAt,
      lastUsedAt: row.lastUsedAt,
    }))
    .sort((a, b) => b.approvedAt - a.approvedAt);

/** Ends a grant; true when it existed. */
export const deleteGrant = (db: Db, grantId: string): boolean =>
  db.delete(g).where(eq(g.grantId, grantId)).returning({ grantId: g.grantId }).all().length > 0;

/** Blocking a person ends every grant. */
export const deleteEveryGrant = (db: Db): void => {
  db.delete(g).run();
};
