import { eq, sql } from "drizzle-orm";
import { authorActivity, knownPullRequests } from "../schema";
import type { Db } from "./db";

/** Authors' activity and the pull requests learned (contract section 20). Storage only. */

/** Raises an author's activity to `at` (epoch ms); an older time changes nothing. */
export function raiseActivity(db: Db, loginKey: string, at: number): void {
  db.insert(authorActivity)
    .values({ loginKey, at })
    .onConflictDoUpdate({
      target: authorActivity.loginKey,
      set: { at: sql`max(${authorActivity.at}, excluded.at)` },
      setWhere: sql`excluded.at > ${authorActivity.at}`,
    })
    .run();
}

/** The newest activity of a folded login, or null. */
export function activityOf(db: Db, loginKey: string): number | null {
  return db.select({ at: authorActivity.at }).from(authorActivity).where(eq(authorActivity.loginKey, loginKey)).get()?.at ?? null;
}

/** Records the pull requests as learned; answers those that were not before (each once). */
export function learnPullRequests(db: Db, prIds: readonly number[]): number[] {
  const ids = [...new Set(prIds)];
  if (ids.length === 0) return [];
  const known = new Set(
    db
      .select({ prId: knownPullRequests.prId })
      .from(knownPullRequests)
      // One JSON parameter, not one per id: SQLite's bound-variable limit.
      .where(sql`${knownPullRequests.prId} in (select value from json_each(${JSON.stringify(ids)}))`)
      .all()
      .map((r) => r.prId),
  );
  const fresh = ids.filter((id) => !known.has(id));
  for (const prId of fresh) db.insert(knownPullRequests).values({ prId }).run();
  return fresh;
}
