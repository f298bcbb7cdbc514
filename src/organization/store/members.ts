import { and, count, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { ChangeFacts, MemberState } from "../../rules/members";
import type { Role } from "../../schemas/common";
import { type MemberRow, members } from "../schema";
import type { Db } from "./db";

/** The members table: one row per member of the organization. Storage only: the caller has checked access. */

/** A position in the member list: after this (lower(githubLogin), githubUserId). */
export interface MemberCursor {
  loginKey: string;
  githubUserId: string;
}

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
 * characters.
 */
export function memberPageQuery(db: Db, filters: MemberFilters) {
  const m = members;
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

export function getMember(db: Db, githubUserId: string): MemberRow | undefined {
  return db.select().from(members).where(eq(members.githubUserId, githubUserId)).get();
}

/** Stores the member's whole row, added or replaced. */
export function putMember(db: Db, row: MemberRow): void {
  db.insert(members).values(row).onConflictDoUpdate({ target: members.githubUserId, set: row }).run();
}

export function deleteMember(db: Db, githubUserId: string): void {
  db.delete(members).where(eq(members.githubUserId, githubUserId)).run();
}

/** Sets a member's seat and role (a guarded change the rules allowed). */
export function setMemberState(db: Db, githubUserId: string, state: MemberState): void {
  db.update(members).set(state).where(eq(members.githubUserId, githubUserId)).run();
}

/** Members holding a seat. */
export const seatsUsed = (db: Db): number => countWhere(db, eq(members.seat, true));

/** Members whose role is admin. */
export const adminCount = (db: Db): number => countWhere(db, eq(members.role, "admin"));

const countWhere = (db: Db, where: SQL): number => db.select({ n: count() }).from(members).where(where).get()?.n ?? 0;

/** Up to `limit` member ids after `after`, in id order (the relogin job's pages). */
export function memberIdsAfter(db: Db, after: string, limit: number): string[] {
  return db
    .select({ githubUserId: members.githubUserId })
    .from(members)
    .where(sql`${members.githubUserId} > ${after}`)
    .orderBy(members.githubUserId)
    .limit(limit)
    .all()
    .map((m) => m.githubUserId);
}

/** What the rules of guarded changes read (`decideMemberChanges`), for an organization with `purchasedSeats`. */
export function changeFacts(db: Db, purchasedSeats: number) {
  const member = (githubUserId: string) => getMember(db, githubUserId);
  return { member, purchasedSeats, seatsUsed: seatsUsed(db), adminCount: adminCount(db) } satisfies ChangeFacts;
}
