import { and, asc, eq, isNotNull, or, sql } from "drizzle-orm";
import { repoKey } from "../../lib/names";
import { collaborators, pendingRenames, type RepositoryRow, repositories } from "../schema";
import type { Db } from "./db";

/**
 * The repositories with their collaborators, keyed by folded name, and the outbox of repository
 * renames D1 still has to follow. Storage only: the decisions are the caller's.
 */

/** What one write of a repository sets: `githubId` null leaves a stored id alone. */
export interface RepositoryWrite {
  name: string;
  private: boolean;
  githubId: number | null;
  removed?: boolean;
  /** GitHub's `updated_at` of this visibility (`repositoryJoined`); undefined leaves the stored one. */
  visibilityVersion?: number | null;
}

/** The one write of a repository (control plane and GitHub): upsert by name, back in the installation unless `removed`. */
export function putRepository(db: Db, r: RepositoryWrite): void {
  const row = {
    repoKey: repoKey(r.name),
    name: r.name,
    private: r.private,
    removed: r.removed ?? false,
    ...(r.visibilityVersion === undefined ? {} : { visibilityVersion: r.visibilityVersion }),
  };
  const set = r.githubId === null ? row : { ...row, githubId: r.githubId };
  db.insert(repositories).values(set).onConflictDoUpdate({ target: repositories.repoKey, set }).run();
}

export function repositoryByKey(db: Db, repoKey: string): RepositoryRow | undefined {
  return db.select().from(repositories).where(eq(repositories.repoKey, repoKey)).get();
}

export function repositoryByGithubId(db: Db, githubId: number): RepositoryRow | undefined {
  return db.select().from(repositories).where(eq(repositories.githubId, githubId)).get();
}

/** A repository by GitHub id, else by name. */
export const findRepository = (db: Db, r: { id: number; name: string }): RepositoryRow | undefined =>
  repositoryByGithubId(db, r.id) ?? repositoryByKey(db, repoKey(r.name));

/** Marks a repository removed from the installation; its row stays as a tombstone. */
export function tombstoneRepository(db: Db, repoKey: string): void {
  db.update(repositories).set({ removed: true }).where(eq(repositories.repoKey, repoKey)).run();
}

/** Moves a repository and its collaborators to a new key; whatever stood under that key is replaced. */
export function rekeyRepository(db: Db, fromKey: string, toKey: string): void {
  db.delete(repositories).where(eq(repositories.repoKey, toKey)).run();
  db.update(repositories).set({ repoKey: toKey }).where(eq(repositories.repoKey, fromKey)).run();
  db.delete(collaborators).where(eq(collaborators.repoKey, toKey)).run();
  db.update(collaborators).set({ repoKey: toKey }).where(eq(collaborators.repoKey, fromKey)).run();
}

/** Keys of the repositories removed from the installation. */
export function removedRepoKeys(db: Db): string[] {
  return db
    .select({ repoKey: repositories.repoKey })
    .from(repositories)
    .where(eq(repositories.removed, true))
    .all()
    .map((r) => r.repoKey);
}

/** Repository keys a non-admin member may read: public ones, and private ones naming them (never removed ones). */
export function reposVisibleTo(db: Db, githubUserId: string): string[] {
  // One row holding the list as JSON: workerd hands SQLite rows to JavaScript one by one, which
  // for a few hundred repositories cost more than the query itself (measured: 0.9 ms of the
  // export's 15 ms for 175 of 200 repositories; 0.5 ms as one row).
  const row = db
    .select({ repoKeys: sql<string>`json_group_array(${repositories.repoKey})` })
    .from(repositories)
    .leftJoin(collaborators, and(eq(collaborators.repoKey, repositories.repoKey), eq(collaborators.githubUserId, githubUserId)))
    .where(and(eq(repositories.removed, false), or(eq(repositories.private, false), isNotNull(collaborators.githubUserId))))
    .get();
  return JSON.parse(row?.repoKeys ?? "[]") as string[];
}

/** Replaces a repository's collaborator list. */
export function replaceCollaborators(db: Db, repoKey: string, githubUserIds: readonly string[]): void {
  db.delete(collaborators).where(eq(collaborators.repoKey, repoKey)).run();
  for (const githubUserId of githubUserIds) db.insert(collaborators).values({ repoKey, githubUserId }).run();
}

export function addCollaborator(db: Db, repoKey: string, githubUserId: string): void {
  db.insert(collaborators).values({ repoKey, githubUserId }).onConflictDoNothing().run();
}

export function removeCollaborator(db: Db, repoKey: string, githubUserId: string): void {
  db.delete(collaborators)
    .where(and(eq(collaborators.repoKey, repoKey), eq(collaborators.githubUserId, githubUserId)))
    .run();
}

/** Records that D1's rows under `fromKey` have to follow to `toName`, after every rename recorded before. */
export function addPendingRename(db: Db, fromKey: string, toName: string): void {
  db.insert(pendingRenames).values({ fromKey, toName }).run();
}

/** The renames D1 has still to follow, in the order they were applied here. */
export function listPendingRenames(db: Db): (typeof pendingRenames.$inferSelect)[] {
  return db.select().from(pendingRenames).orderBy(asc(pendingRenames.seq)).all();
}

/** D1 has followed the rename recorded as `seq`. */
export function deletePendingRename(db: Db, seq: number): void {
  db.delete(pendingRenames).where(eq(pendingRenames.seq, seq)).run();
}

/** Every stored repository, removed ones included (an installation sync compares them with GitHub's list). */
export function allRepositories(db: Db): RepositoryRow[] {
  return db.select().from(repositories).all();
}
