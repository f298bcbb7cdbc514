import { formatInstant } from "../lib/time";
import type { SyncRun, SyncStepName, SyncTrigger } from "../schemas/sync";
import type { ChangeOrigin, SyncBegin } from "./answers";
import { collaboratorRepoKey, repositoryJoined, repositoryRemoved } from "./github-changes";
import {
  decideSyncStart,
  type ListedMember,
  membersLeaving,
  repositoriesLeaving,
  stepProgress,
  syncApplies,
  syncedMember,
} from "./github-sync";
import { removeMember, writeMember } from "./member-writes";
import type { SyncRunRow } from "./schema";
import type { Db } from "./store/db";
import { getInstallation } from "./store/installation";
import { getMember, memberIdsAfter } from "./store/members";
import { allRepositories, findRepository, putRepository, replaceCollaborators, tombstoneRepository } from "./store/repositories";
import { finishRun, insertRun, lastFinishedRun, latestRun, runById, runByTrigger, updateRun } from "./store/sync-runs";

/**
 * The writes of an installation sync inside the caller's transaction: starting one (the
 * compare-and-set), its progress record, and each page of what GitHub listed, written through the
 * same stores and member writes as webhooks (audit entries with source `github`).
 */

/** Starts a sync unless one runs (`decideSyncStart`), writing the new run; `created`: its Workflow instance exists. */
export function beginSync(db: Db, trigger: { kind: SyncTrigger; key: string }, now: number): SyncBegin {
  const installation = getInstallation(db);
  const d = decideSyncStart(installation, latestRun(db), runByTrigger(db, trigger.key), trigger, now);
  if (d.kind === "not_installed" || !installation) return { kind: "not_installed" };
  if (d.kind === "in_progress") {
    const { instanceCreated: created, progressAt, startedAt } = d.run;
    return { kind: d.kind, run: toSyncRun(d.run), home: installation.homeKey, created, progressAt: progressAt ?? startedAt };
  }
  if (d.kind === "start") insertRun(db, d.run);
  const { installationId, instanceCreated: created } = d.run;
  return { kind: "started", run: toSyncRun(d.run), home: installation.homeKey, installationId, created };
}

/** What a step of the sync reports about itself, recorded with its data in one transaction. */
export type SyncUpdate =
  | { kind: "created" }
  | { kind: "progress"; step: SyncStepName; state: "running" | "done"; count: number }
  | { kind: "error"; step: string; message: string }
  | { kind: "finish"; state: "complete" | "failed"; error?: { step: string; message: string } };

export function recordSync(db: Db, id: number, update: SyncUpdate, now: number): void {
  const run = runById(db, id);
  if (!run) return;
  if (update.kind === "created") updateRun(db, id, { instanceCreated: true, progressAt: now });
  else if (update.kind === "progress")
    updateRun(db, id, { steps: stepProgress(run.steps, update.step, update.state, update.count), progressAt: now });
  else if (update.kind === "error")
    updateRun(db, id, { lastError: { step: update.step, message: update.message, at: now }, progressAt: now });
  else {
    const lastError = update.error ? { ...update.error, at: now } : run.lastError;
    finishRun(db, id, { state: update.state, finishedAt: now, lastError });
  }
}

/** A repository as GitHub lists it; `updatedAt` (epoch ms) orders its visibility (`repositoryJoined`). */
export type ListedRepository = { id: number; name: string; private: boolean; updatedAt?: number };

/** A page of what GitHub listed, for one step of a sync or one signal (a delivery's entity read again). */
export type SyncPage =
  | { kind: "repositories"; repositories: ListedRepository[] }
  /** A page of members; `listedIds` on the last page: everyone GitHub listed (the others leave). */
  | { kind: "members"; members: ListedMember[]; listedIds: string[] | null }
  | { kind: "collaborators"; repositories: { id: number; name: string; collaborators: string[] }[] }
  /** Signal: one person's membership now (null: not a member). */
  | { kind: "membership"; githubUserId: string; member: ListedMember | null }
  /** Signal: repositories a delivery named, each as the installation lists it now (null: not in it). */
  | { kind: "repository states"; repositories: { id: number; name: string; listed: ListedRepository | null }[] };

/** Who writes a page: a sync's step (with its progress) or a signal (by its delivery's ledger key). */
export type PageWriter = { syncId: number; progress: SyncUpdate } | { deliveryKey: string };

/** What a page wrote: the stored repositories (names as stored: only a rename changes one) and the members whose index must learn it. */
export interface SyncPageWritten {
  repositories: { id: number; name: string; private: boolean }[];
  /** Member id → member now, with the membership clock after the write. */
  told: { githubUserId: string; member: boolean; version: number }[];
}

/**
 * Writes a page (with the step's progress for a sync), or nothing (null) when the installation read
 * is no longer this organization's (`syncApplies`). Member writes are audited with source `github`.
 */
export function writeSyncPage(db: Db, installationId: number, page: SyncPage, by: PageWriter) {
  if (!syncApplies(getInstallation(db), installationId)) return null;
  if ("syncId" in by) recordSync(db, by.syncId, by.progress, Date.now());
  const correlationId = "syncId" in by ? `sync-${by.syncId}` : by.deliveryKey;
  const origin: ChangeOrigin = { source: "github", correlationId };
  const written: SyncPageWritten = { repositories: [], told: [] };
  if (page.kind === "membership" || page.kind === "repository states") {
    writeSignal(db, page, origin, written);
    return written;
  }
  if (page.kind === "repositories") {
    for (const listed of page.repositories) {
      const write = repositoryJoined(findRepository(db, listed), listed);
      putRepository(db, write);
      written.repositories.push({ id: listed.id, name: write.name, private: write.private });
    }
    for (const repoKey of repositoriesLeaving(allRepositories(db), page.repositories)) tombstoneRepository(db, repoKey);
  } else if (page.kind === "members") {
    for (const listed of page.members) {
      const { version } = writeMember(db, listed.githubUserId, syncedMember(getMember(db, listed.githubUserId), listed), origin);
      written.told.push({ githubUserId: listed.githubUserId, member: true, version });
    }
    if (page.listedIds !== null) {
      for (const id of membersLeaving(memberIdsAfter(db, "", Number.MAX_SAFE_INTEGER), new Set(page.listedIds))) {
        written.told.push({ githubUserId: id, member: false, version: removeMember(db, id, origin) });
      }
    }
  } else {
    for (const repo of page.repositories) {
      replaceCollaborators(db, collaboratorRepoKey(findRepository(db, repo), repo), [...new Set(repo.collaborators)].sort());
    }
  }
  return written;
}

/**
 * A signal's page: GitHub's state now of what a delivery named, through the same rules as a sync
 * (`syncedMember`, `repositoryJoined`, tombstones), so reordered and duplicated deliveries end at it.
 */
function writeSignal(
  db: Db,
  page: Extract<SyncPage, { kind: "membership" | "repository states" }>,
  origin: ChangeOrigin,
  written: SyncPageWritten,
): void {
  if (page.kind === "membership") {
    const { githubUserId, member } = page;
    const version = member
      ? writeMember(db, githubUserId, syncedMember(getMember(db, githubUserId), member), origin).version
      : removeMember(db, githubUserId, origin);
    written.told.push({ githubUserId, member: member !== null, version });
    return;
  }
  for (const { id, name, listed } of page.repositories) {
    const known = findRepository(db, { id, name });
    if (listed) {
      putRepository(db, repositoryJoined(known, listed));
      continue;
    }
    const decision = repositoryRemoved(known, { id, name });
    if (decision.kind === "tombstone") tombstoneRepository(db, decision.repoKey);
    else putRepository(db, decision.write);
  }
}

/** `GET .../sync`: the running sync and the last finished one. */
export const syncStatus = (db: Db) => {
  const latest = latestRun(db);
  const running = latest?.state === "running" ? latest : undefined;
  const last = lastFinishedRun(db);
  return { running: running ? toSyncRun(running) : null, last: last ? toSyncRun(last) : null };
};

export const toSyncRun = (row: SyncRunRow): SyncRun => ({
  id: row.id,
  trigger: row.trigger,
  state: row.state,
  startedAt: formatInstant(row.startedAt),
  finishedAt: row.finishedAt === null ? null : formatInstant(row.finishedAt),
  steps: row.steps,
  lastError: row.lastError && {
    ...row.lastError,
    message: row.lastError.message.slice(0, 500),
    at: formatInstant(row.lastError.at),
  },
});
