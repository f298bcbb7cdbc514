import { and, asc, eq, lt, lte, sql } from "drizzle-orm";
import { memberships as m } from "../user-schema";
import type { Db } from "./db";

/** The organizations index (contract section 8): what each organization's object last reported. */

/** An entry of the organizations index: the organization's home key and its lower-cased login. */
export interface MembershipPosition {
  orgKey: string;
  loginKey: string;
}

/** Stores a report unless a newer one (by `version`) is stored already. */
export function recordMembership(
  db: Db,
  orgKey: string,
  loginKey: string,
  member: boolean,
  version: number,
  installed: boolean,
): void {
  db.insert(m)
    .values({ orgKey, loginKey, member, installed, version })
    .onConflictDoUpdate({ target: m.orgKey, set: { loginKey, member, installed, version }, setWhere: lt(m.version, version) })
    .run();
}

/** Marks the entry not installed if its version is not newer than `version`. */
export function recordNotInstalled(db: Db, orgKey: string, version: number): void {
  db.update(m)
    .set({ installed: false })
    .where(and(eq(m.orgKey, orgKey), lte(m.version, version)))
    .run();
}

/** Installed memberships in (login key, home key) order after `after`. */
export function listMemberships(db: Db, after: MembershipPosition | null, limit: number): MembershipPosition[] {
  return db
    .select({ orgKey: m.orgKey, loginKey: m.loginKey })
    .from(m)
    .where(
      and(
        eq(m.member, true),
        eq(m.installed, true),
        after === null ? undefined : sql`(${m.loginKey}, ${m.orgKey}) > (${after.loginKey}, ${after.orgKey})`,
      ),
    )
    .orderBy(asc(m.loginKey), asc(m.orgKey))
    .limit(limit)
    .all();
}
