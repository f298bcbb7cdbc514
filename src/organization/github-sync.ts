import { repoKey } from "../lib/names";
import { SYNC_STEPS, type SyncStepName, type SyncSteps, type SyncTrigger } from "../schemas/sync";
import type { InstallationRow, MemberRow, RepositoryRow, SyncRunRow } from "./schema";

/**
 * The decisions of an installation sync with GitHub's API (contract section 17) as plain functions:
 * stored rows and what GitHub listed in, a decision out; `sync-writes.ts` writes them. Table-tested
 * in test/unit/github-sync.test.ts.
 */

/** A member as GitHub lists it: its account and its organization role. */
export interface ListedMember {
  githubUserId: string;
  githubLogin: string;
  role: "admin" | "member";
  isBot: boolean;
}

export type SyncStart =
  /** Not installed: nothing to sync. */
  | { kind: "not_installed" }
  /** This trigger started a sync already (a retried webhook message or request): that one. */
  | { kind: "existing"; run: SyncRunRow }
  /** Another sync is still running: one at a time. */
  | { kind: "in_progress"; run: SyncRunRow }
  | { kind: "start"; run: SyncRunRow };

/**
 * Whether a trigger starts a sync: the compare-and-set of "one at a time" (`latest` still running
 * refuses), after the trigger's own run (`byTrigger`), so a retried trigger never starts two.
 */
export function decideSyncStart(
  installation: InstallationRow | undefined,
  latest: SyncRunRow | undefined,
  byTrigger: SyncRunRow | undefined,
  trigger: { kind: SyncTrigger; key: string },
  now: number,
): SyncStart {
  if (!installation?.installed) return { kind: "not_installed" };
  if (byTrigger) return { kind: "existing", run: byTrigger };
  if (latest?.state === "running") return { kind: "in_progress", run: latest };
  const steps = Object.fromEntries(SYNC_STEPS.map((s) => [s, { state: "pending", count: 0 }])) as SyncSteps;
  return {
    kind: "start",
    run: {
      id: (latest?.id ?? 0) + 1,
      trigger: trigger.kind,
      triggerKey: trigger.key,
      installationId: installation.installationId,
      state: "running",
      instanceCreated: false,
      startedAt: now,
      finishedAt: null,
      progressAt: now,
      steps,
      lastError: null,
    },
  };
}

/** A sync's write applies only while the installation it reads is this organization's current one. */
export const syncApplies = (installation: InstallationRow | undefined, installationId: number): boolean =>
  installation?.installed === true && installation.installationId === installationId;

/** A step's new progress; a step done stays done (a retried write of an earlier page cannot reopen it). */
export function stepProgress(steps: SyncSteps, step: SyncStepName, state: "running" | "done", count: number): SyncSteps {
  if (steps[step].state === "done" && state === "running") return steps;
  return { ...steps, [step]: { state, count } };
}

/**
 * A member as GitHub lists it, over what is stored. New: GitHub's role, no seat, no e-mail yet.
 * Known: seat and e-mail are the service's and stay; the role follows GitHub (its admins are the
 * organization's admins), except that a `viewer` the service narrowed a GitHub member to stays one
 * (GitHub has no such role to say otherwise). Login and account type are GitHub's.
 */
export function syncedMember(existing: MemberRow | undefined, listed: ListedMember): Omit<MemberRow, "githubUserId"> {
  const role = existing?.role === "viewer" && listed.role === "member" ? "viewer" : listed.role;
  return {
    githubLogin: listed.githubLogin,
    workEmail: existing?.workEmail ?? null,
    role,
    seat: existing?.seat ?? false,
    isBot: listed.isBot,
  };
}

/** GitHub is the source of truth: stored members it no longer lists leave the organization. */
export const membersLeaving = (storedIds: readonly string[], listedIds: ReadonlySet<string>): string[] =>
  storedIds.filter((id) => !listedIds.has(id));

/**
 * Stored repositories the installation no longer covers (neither its GitHub id nor its name is
 * listed), not yet removed: they leave it as `installation_repositories` removed does (tombstones).
 */
export function repositoriesLeaving(stored: readonly RepositoryRow[], listed: readonly { id: number; name: string }[]): string[] {
  const ids = new Set(listed.map((r) => r.id));
  const keys = new Set(listed.map((r) => repoKey(r.name)));
  return stored
    .filter((r) => !r.removed && !(r.githubId !== null && ids.has(r.githubId)) && !keys.has(r.repoKey))
    .map((r) => r.repoKey);
}
