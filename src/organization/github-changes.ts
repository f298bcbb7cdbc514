import { claimOf, type DeliveryOwner } from "../directory/identity";
import { repoKey } from "../lib/names";
import type { MemberState } from "../rules/members";
import type { AuditAction } from "../schemas/audit";
import type { GithubRepository, OrganizationChange } from "../schemas/github-changes";
import type { PendingRename } from "./answers";
import type { InstallationRow, MemberRow, RepositoryRow } from "./schema";
import type { RepositoryWrite } from "./store/repositories";

/**
 * The decisions of GitHub's changes (contract section 9) as plain functions: facts (stored rows,
 * the change) in, a decision out, which `apply-change.ts` writes through the stores. No storage
 * here, so each rule is table-tested on its own (test/unit/github-changes.test.ts).
 */

type Change<K extends OrganizationChange["kind"]> = Extract<OrganizationChange, { kind: K }>;

/**
 * Who sent a change: the message's owner, and for a message queued before installation ids were
 * carried, an installation's creation names its own installation.
 */
export const sender = (owner: DeliveryOwner, change: OrganizationChange): DeliveryOwner => ({
  accountId: owner.accountId,
  installationId: owner.installationId ?? (change.kind === "installation_created" ? change.installationId : null),
});

/**
 * Whether a change delivered for `at` is this object's (`claimOf`: same account id, else same
 * login and, for a delivery naming an account id, the installation held here; a rename also
 * matches its `from`): `here`, else `taken` for an installation (the caller gives it a home of its
 * own) and `elsewhere` for anything else (retried, then parked).
 */
export function claimChange(
  installation: InstallationRow | undefined,
  at: { login: string },
  owner: DeliveryOwner,
  change: OrganizationChange,
): "here" | "taken" | "elsewhere" {
  const logins = change.kind === "organization_renamed" ? [at.login, change.from] : [at.login];
  if (claimOf(installation, logins, sender(owner, change)) !== "other") return "here";
  return change.kind === "installation_created" ? "taken" : "elsewhere";
}

/**
 * The account id to store, after the change was applied: only a delivery from the installation
 * the organization holds (its creation included) teaches it, so another organization's delivery
 * for the same login never binds this one to its account; a known one never changes.
 */
export function accountIdToLearn(installation: InstallationRow | undefined, owner: DeliveryOwner): number | null {
  if (owner.accountId === null || installation?.accountId !== null) return null;
  return owner.installationId !== null && owner.installationId === installation.installationId ? owner.accountId : null;
}

/**
 * What a change did to the organization's identity: the new login when it differs from the one
 * the members' indexes were told (the stored one, else the login the caller used before the
 * installation existed), whether the directory in D1 has to learn the identity again, and whether
 * every member's index has to be told the organization again (`indexes`: a new login, or it was
 * installed or uninstalled: the organizations list skips memberships of uninstalled ones).
 */
export function identityChange(
  before: InstallationRow | undefined,
  after: InstallationRow | undefined,
  at: { login: string },
): { newLogin: string | null; changed: boolean; indexes: boolean } {
  if (!after) return { newLogin: null, changed: false, indexes: false };
  const newLogin = after.login !== (before?.login ?? at.login) ? after.login : null;
  return {
    newLogin,
    changed: before?.login !== after.login || before?.accountId !== after.accountId,
    indexes: newLogin !== null || (before?.installed ?? false) !== after.installed,
  };
}

/**
 * `installation_created`, three cases (every one then follows the renames that waited for it):
 * - `same`: this installation again (a late retry, a redelivery, or billing registered it first):
 *   its login is as old as the installation, so the login stays and a rename applied since stays
 *   applied; only an installation marked deleted is installed again (`set`, else null);
 * - `reinstalled`: a new installation of a known organization: a plan or subscription billing has
 *   set stays, it is not suspended, and its login is the organization's login now;
 * - `first`: no installation yet: a free organization with no seats.
 */
export type InstallationCreated =
  | { kind: "same"; set: Partial<InstallationRow> | null }
  | { kind: "reinstalled"; set: Partial<InstallationRow> }
  | { kind: "first"; row: InstallationRow };

export function installationCreated(
  row: InstallationRow | undefined,
  at: { login: string; home: string },
  change: Change<"installation_created">,
): InstallationCreated {
  const { installationId, installedAt } = change;
  if (row?.installationId === installationId) {
    return { kind: "same", set: row.installed ? null : { installedAt, installed: true, blocked: false } };
  }
  if (row) {
    const set = { login: at.login, installationId, installedAt, installed: true };
    return { kind: "reinstalled", set: row.installed ? set : { ...set, blocked: false } };
  }
  return {
    kind: "first",
    row: {
      id: 1,
      login: at.login,
      homeKey: at.home,
      accountId: null,
      installationId,
      installedAt,
      blocked: false,
      plan: "free",
      subscriptionStatus: "none",
      billedThroughService: false,
      purchasedSeats: 0,
      installed: true,
      suspensionVersion: null,
    },
  };
}

/** `installation_deleted`: only this installation's deletion marks the organization uninstalled (its data stays). */
export const installationDeleted = (row: InstallationRow | undefined, change: Change<"installation_deleted">): boolean =>
  row !== undefined && row.installationId === change.installationId;

/**
 * `installation` suspend / unsuspend apply only to the installation they name (an organization's
 * earlier installation may still be suspended or unsuspended at GitHub), and only when not older
 * than the one applied last (GitHub's time of it, `at`): suspend and unsuspend delivered in reverse
 * end at the later one. Equal times apply in arrival order (GitHub's times have one-second
 * resolution). A message without an id or a time (queued before they were carried) applies as
 * before. Answers what to write, or null.
 */
export function installationSuspended(
  row: InstallationRow | undefined,
  change: Change<"installation_suspended">,
): Pick<InstallationRow, "blocked" | "suspensionVersion"> | null {
  if (row === undefined || (change.installationId !== undefined && row.installationId !== change.installationId)) return null;
  const at = change.at ?? null;
  if (at !== null && row.suspensionVersion !== null && at < row.suspensionVersion) return null;
  return { blocked: change.blocked, suspensionVersion: at ?? row.suspensionVersion };
}

/**
 * `repositories_added` and `repository_visibility` (and what a sync or a signal read from GitHub):
 * GitHub's numeric id is the identity, so a repository known by id keeps its stored name (only a
 * rename changes names: a late delivery carrying an old name cannot undo one); it is back in the
 * installation. Its visibility is ordered by GitHub's `updated_at`: one older than the stored
 * version keeps the stored visibility (publicized at :03 delivered before privatized at :02 stays
 * public). One without a time (`installation_repositories` lists carry none) is applied and keeps
 * the stored version.
 */
export function repositoryJoined(known: RepositoryRow | undefined, repository: GithubRepository): RepositoryWrite {
  const stored = known?.visibilityVersion ?? null;
  const at = repository.updatedAt ?? null;
  const older = known !== undefined && at !== null && stored !== null && at < stored;
  return {
    name: known?.name ?? repository.name,
    private: older ? known.private : repository.private,
    githubId: repository.id,
    visibilityVersion: older || at === null ? stored : at,
  };
}

/**
 * `repositories_removed`: tombstoning. A known repository keeps its row, marked removed; an unknown
 * one (its D1 rows came from reviewer events) is stored as a private tombstone, so those rows are
 * not exported either.
 */
export type RepositoryRemoved = { kind: "tombstone"; repoKey: string } | { kind: "tombstone-new"; write: RepositoryWrite };

export function repositoryRemoved(known: RepositoryRow | undefined, repository: { id: number; name: string }): RepositoryRemoved {
  if (known) return { kind: "tombstone", repoKey: known.repoKey };
  return { kind: "tombstone-new", write: { name: repository.name, private: true, githubId: repository.id, removed: true } };
}

/**
 * `repository_renamed`: the row and its collaborators move to the new key (`rekey`, when the key
 * changes and the repository is known), the row takes the new name, and D1's rows follow through
 * the outbox (`pending`). `stale`: the repository known by this id is not called `from` any more (a
 * later rename was applied first), so nothing changes. `byId`: the stored repository with the
 * renamed one's id; `byFromKey`: the one stored under `from`.
 */
export type RepositoryRenamed =
  | { kind: "stale" }
  | {
      kind: "renamed";
      rekey: { fromKey: string; toKey: string } | null;
      write: RepositoryWrite;
      pending: Omit<PendingRename, "seq"> | null;
    };

export function repositoryRenamed(
  from: string,
  repository: GithubRepository,
  byId: RepositoryRow | undefined,
  byFromKey: RepositoryRow | undefined,
): RepositoryRenamed {
  const fromKey = repoKey(from);
  const toKey = repoKey(repository.name);
  if (byId && byId.repoKey !== fromKey) return { kind: "stale" };
  const current = byId ?? byFromKey;
  return {
    kind: "renamed",
    rekey: current && fromKey !== toKey ? { fromKey, toKey } : null,
    write: { name: repository.name, private: repository.private, githubId: repository.id, removed: current?.removed },
    pending: fromKey !== toKey || current?.name !== repository.name ? { fromKey, toName: repository.name } : null,
  };
}

/** `collaborator`: the key of the repository as stored (known by id, it keeps its stored name). */
export const collaboratorRepoKey = (known: RepositoryRow | undefined, repository: { name: string }): string =>
  repoKey(known?.name ?? repository.name);

/**
 * `member_added`: role, seat and e-mail of a known member are the service's (PATCH, sync), so a
 * redelivered or late member_added must not reset them; GitHub's login and account type are kept
 * current. A new member gets GitHub's role, no seat and no e-mail yet.
 */
export function memberAdded(existing: MemberRow | undefined, change: Change<"member_added">): Omit<MemberRow, "githubUserId"> {
  if (existing) {
    const { githubUserId: _, ...kept } = existing;
    return { ...kept, githubLogin: change.githubLogin, isBot: change.isBot };
  }
  return { githubLogin: change.githubLogin, workEmail: null, role: change.role, seat: false, isBot: change.isBot };
}

/** `organization_renamed`: the rename waits to be followed from the current login (`followRenames`). */
export const organizationRenamed = (from: string, to: string, now: number) => ({
  fromKey: repoKey(from),
  toLogin: to,
  receivedAt: now,
});

/**
 * Which audit action a synchronised member write produces: `member.added` for a new member,
 * `member.removed` for a removed one, `member.updated` when seat or role changed, and none when
 * neither did (or nobody was removed).
 */
export function auditAction(before: MemberState | undefined, after: MemberState | null): AuditAction | null {
  if (!before) return after ? "member.added" : null;
  if (!after) return "member.removed";
  return before.seat !== after.seat || before.role !== after.role ? "member.updated" : null;
}
