import { and, count, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { ChangeFacts, MemberState } from "../../rules/members";
import type { Role } from "../../schemas/common";
import { authorActivity, type MemberRow, members } from "../schema";
import type { Db } from "./db";
import { dropSeatRequest } from "./seat-requests";

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
  /** Only members whose activity is null or older than this (epoch ms): `inactiveDays` before now. */
  inactiveBefore?: number;
  after?: MemberCursor;
  limit: number;
}

/**
 * One page of the member list plus one row (to know whether a next page exists), in
 * `members_by_login` order: lower(githubLogin), then githubUserId, after the cursor's position.
 * `lower(github_login)` is spelled exactly as in the index, so SQLite walks it instead of sorting
 * (test/worker/members-plan.test.ts). `search` uses instr, not LIKE: `%` and `_` are plain
 * characters. Each row carries its author activity (`lastActivityAt`), one primary-key lookup per row
 * walked.
 */
export function memberPageQuery(db: Db, filters: MemberFilters) {
  const m = members;
  const loginKey = sql<string>`lower(${m.githubLogin})`;
  const a = authorActivity;
  const where: (SQL | undefined)[] = [];
  if (filters.role !== undefined) where.push(eq(m.role, filters.role));
  if (filters.seat !== undefined) where.push(eq(m.seat, filters.seat));
  if (filters.search !== undefined) {
    const s = filters.search;
    where.push(sql`(instr(lower(${m.githubLogin}), lower(${s})) > 0 or instr(lower(${m.workEmail}), lower(${s})) > 0)`);
  }
  if (filters.inactiveBefore !== undefined) {
    where.push(sql`(${a.at} is null or ${a.at} < ${filters.inactiveBefore})`);
  }
  if (filters.after) {
    where.push(sql`(${loginKey}, ${m.githubUserId}) > (${filters.after.loginKey}, ${filters.after.githubUserId})`);
  }
  return db
    .select({ ...getTableColumns(m), loginKey, lastActivityAt: a.at })
    .from(m)
    .leftJoin(a, eq(a.loginKey, loginKey))
    .where(and(...where))
    .orderBy(loginKey, m.githubUserId)
    .limit(filters.limit + 1);
}

export function getMember(db: Db, githubUserId: string): MemberRow | undefined {
  return db.select().from(members).where(eq(members.githubUserId, githubUserId)).get();
}

/** A member with its author activity (`lastActivityAt`, epoch ms or null). */
export type MemberWithActivity = MemberRow & { lastActivityAt: number | null };

export function getMemberWithActivity(db: Db, githubUserId: string): MemberWithActivity | undefined {
  return db
    .select({ ...getTableColumns(members), lastActivityAt: authorActivity.at })
    .from(members)
    .leftJoin(authorActivity, eq(authorActivity.loginKey, sql`lower(${members.githubLogin})`))
    .where(eq(members.githubUserId, githubUserId))
    .get();
}

/** The members whose folded login is one of `loginKeys` (the `members_by_login` index). */
export function membersByLoginKeys(db: Db, loginKeys: readonly string[]): MemberRow[] {
  if (loginKeys.length === 0) return [];
  return db
    .select()
    .from(members)
    .where(sql`lower(${members.githubLogin}) in (select value from json_each(${JSON.stringify(loginKeys)}))`)
    .all();
}

// Every write of a seat or a membership below also ends a wait for a seat that it settles (the
// member got one, or left): whichever path wrote it (PATCH, sync, webhook, automatic).

/** Stores the member's whole row, added or replaced. */
export function putMember(db: Db, row: MemberRow): void {
  db.insert(members).values(row).onConflictDoUpdate({ target: members.githubUserId, set: row }).run();
  if (row.seat) dropSeatRequest(db, row.githubUserId);
}

export function deleteMember(db: Db, githubUserId: string): void {
  db.delete(members).where(eq(members.githubUserId, githubUserId)).run();
  dropSeatRequest(db, githubUserId);
}

/** Sets a member's seat and role (a guarded change the rules allowed, or an automatic seat). */
export function setMemberState(db: Db, githubUserId: string, state: MemberState): void {
  db.update(members).set(state).where(eq(members.githubUserId, githubUserId)).run();
  if (state.seat) dropSeatRequest(db, githubUserId);
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
