import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type { MemberCursor } from "../members/query";
import type { Role } from "../schemas/common";
import * as schema from "./organization-schema";

export interface MemberFilters {
  role?: Role;
  seat?: boolean;
  search?: string;
  after?: MemberCursor;
  limit: number;
}

/**
 * One page of the member list plus one row (to know whether a next page exists), in
 * `members_by_login` order: lower(githubLogin), then githubUserId, after the cursor's position.
 * `lower(github_login)` is spelled exactly as in the index, so SQLite walks it instead of sorting
 * (test/worker/members-plan.test.ts). `search` uses instr, not LIKE: `%` and `_` are plain
 * characters. Storage only: the caller has checked access.
 */
export function memberPageQuery(db: DrizzleSqliteDODatabase<typeof schema>, filters: MemberFilters) {
  const m = schema.members;
  const loginKey = sql<string>`lower(${m.githubLogin})`;
  const where: (SQL | undefined)[] = [];
  if (filters.role !== undefined) where.push(eq(m.role, filters.role));
  if (filters.seat !== undefined) where.push(eq(m.seat, filters.seat));
  if (filters.search !== undefined) {
    const s = filters.search;
    where.push(sql`(instr(lower(${m.githubLogin}), lower(${s})) > 0 or instr(lower(${m.workEmail}), lower(${s})) > 0)`);
  }
  if (filters.after) {
    where.push(sql`(${loginKey}, ${m.githubUserId}) > (${filters.after.loginKey}, ${filters.after.githubUserId})`);
  }
  return db
    .select({ ...getTableColumns(m), loginKey })
    .from(m)
    .where(and(...where))
    .orderBy(loginKey, m.githubUserId)
    .limit(filters.limit + 1);
}
