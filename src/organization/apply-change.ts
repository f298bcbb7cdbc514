import type { DeliveryOwner, OrgAddress } from "../directory/identity";
import { defaultHome, followRenames } from "../directory/identity";
import { repoKey } from "../lib/names";
import type { OrganizationChange } from "../schemas/github-changes";
import type { ChangeOrigin } from "./answers";
import {
  accountIdToLearn,
  claimChange,
  collaboratorRepoKey,
  identityChange,
  installationCreated,
  installationDeleted,
  installationSuspended,
  memberAdded,
  organizationRenamed,
  repositoryJoined,
  repositoryRemoved,
  repositoryRenamed,
  sender,
} from "./github-changes";
import { startRelogin, tickMembershipClock } from "./member-index";
import { removeMember, writeMember } from "./member-writes";
import type { Db } from "./store/db";
import {
  addWaitingRename,
  deleteWaitingRenames,
  getInstallation,
  HOLD_WINDOW_MS,
  putInstallation,
  recordHold,
  updateInstallation,
  waitingRenamesSince,
} from "./store/installation";
import { DELIVERY_MEMORY_MS, deliveryApplied, rememberDelivery } from "./store/ledgers";
import { getMember } from "./store/members";
import {
  addCollaborator,
  addPendingRename,
  findRepository,
  putRepository,
  rekeyRepository,
  removeCollaborator,
  repositoryByGithubId,
  repositoryByKey,
  tombstoneRepository,
} from "./store/repositories";

/**
 * Applies one GitHub delivery's change inside the caller's transaction, with its ledger entry, if
 * it is this organization's (`claimChange`): `taken`/`elsewhere` when not; `seen` when an earlier
 * attempt applied it; else `identity` when the organization's login or account id changed (the
 * directory in D1 has to learn it, and the members' indexes the login: `startRelogin`), `applied`
 * otherwise. The organization learns its account id from a delivery of the installation it holds.
 * `signal`: GitHub's state of the entity will be read and written instead (contract section 17), so
 * the payload, which may be older than what is stored, is not applied; claim and ledger are.
 */
export function applyDelivery(
  db: Db,
  deliveryKey: string,
  at: OrgAddress,
  owner: DeliveryOwner,
  change: OrganizationChange,
  signal = false,
  receivedAt: number | null = null,
): "taken" | "elsewhere" | "seen" | "identity" | "applied" {
  const before = getInstallation(db);
  const claim = claimChange(before, at, owner, change);
  if (claim !== "here") return claim;
  const now = Date.now();
  if (deliveryApplied(db, deliveryKey)) return "seen";
  if (!signal) applyChange(db, at, change, { source: "github", correlationId: deliveryKey, actor: null, receivedAt });
  const learnt = accountIdToLearn(getInstallation(db), sender(owner, change));
  if (learnt !== null) updateInstallation(db, { accountId: learnt });
  const after = getInstallation(db);
  const identity = identityChange(before, after, at);
  // Also when the installation arrived after a rename of it: members synchronised before it told
  // their indexes the login the caller used (and that it was not installed).
  if (identity.indexes && after) startRelogin(db, after.login);
  rememberDelivery(db, deliveryKey, now);
  // The directory's version of this identity: newer than any it replaces.
  if (identity.changed) tickMembershipClock(db);
  return identity.changed ? "identity" : "applied";
}

/**
 * Applies one GitHub change inside the caller's transaction: for its kind, load the facts, ask
 * `github-changes.ts`, write the decision through the stores. Member changes go through the same
 * write as the control plane's sync (`member-writes.ts`).
 */
function applyChange(db: Db, at: OrgAddress, change: OrganizationChange, origin: ChangeOrigin): void {
  const apply = APPLY[change.kind] as Apply<OrganizationChange["kind"]>;
  apply(db, at, change, origin);
}

type Apply<K extends OrganizationChange["kind"]> = (
  db: Db,
  at: OrgAddress,
  change: Extract<OrganizationChange, { kind: K }>,
  origin: ChangeOrigin,
) => void;

const APPLY: { [K in OrganizationChange["kind"]]: Apply<K> } = {
  installation_created: (db, at, change) => {
    const decision = installationCreated(getInstallation(db), at, change);
    if (decision.kind === "first") putInstallation(db, decision.row);
    else if (decision.set) updateInstallation(db, decision.set);
    // Renames delivered before this installation (or before its reinstall) waited: they follow now.
    followWaitingRenames(db);
  },
  installation_deleted: (db, _at, change) => {
    if (installationDeleted(getInstallation(db), change)) updateInstallation(db, { installed: false });
  },
  installation_suspended: (db, _at, change) => {
    const set = installationSuspended(getInstallation(db), change);
    if (set) updateInstallation(db, set);
  },
  repositories_added: (db, _at, change) => {
    for (const repository of change.repositories) putRepository(db, repositoryJoined(findRepository(db, repository), repository));
  },
  repository_visibility: (db, _at, { repository }) =>
    putRepository(db, repositoryJoined(findRepository(db, repository), repository)),
  repositories_removed: (db, _at, change) => {
    for (const repository of change.repositories) {
      const decision = repositoryRemoved(findRepository(db, repository), repository);
      if (decision.kind === "tombstone") tombstoneRepository(db, decision.repoKey);
      else putRepository(db, decision.write);
    }
  },
  repository_renamed: (db, _at, { from, repository }) => {
    const byId = repositoryByGithubId(db, repository.id);
    const decision = repositoryRenamed(from, repository, byId, byId ? undefined : repositoryByKey(db, repoKey(from)));
    if (decision.kind === "stale") return;
    if (decision.rekey) rekeyRepository(db, decision.rekey.fromKey, decision.rekey.toKey);
    putRepository(db, decision.write);
    if (decision.pending) addPendingRename(db, decision.pending.fromKey, decision.pending.toName);
  },
  collaborator: (db, _at, change) => {
    const repoKey = collaboratorRepoKey(findRepository(db, change.repository), change.repository);
    if (change.added) addCollaborator(db, repoKey, change.githubUserId);
    else removeCollaborator(db, repoKey, change.githubUserId);
  },
  member_added: (db, _at, change, origin) => {
    writeMember(db, change.githubUserId, memberAdded(getMember(db, change.githubUserId), change), origin);
  },
  member_removed: (db, _at, change, origin) => {
    removeMember(db, change.githubUserId, origin);
  },
  organization_renamed: (db, at, change, origin) => {
    // The login this rename leaves: its stray rows are the organization's (stored under it before
    // the directory named it) until someone else takes it on GitHub, so this delivery sets them
    // apart at once (`held_logins`), also while the rename waits for its chain. Not the home's own
    // key; not for a delivery received too long ago (back from the dead-letter queue, or applied
    // again after the ledger forgot it), nor one whose age is unknown (queued before messages
    // carried `receivedAt`): the login may be another's by now.
    const leaving = defaultHome(change.from);
    const now = Date.now();
    const received = origin.receivedAt === undefined || origin.receivedAt === null ? null : Math.min(origin.receivedAt, now);
    if (leaving !== at.home && received !== null && now - received <= HOLD_WINDOW_MS)
      recordHold(db, leaving, origin.correlationId, received);
    addWaitingRename(db, organizationRenamed(change.from, at.login, Date.now()));
    followWaitingRenames(db);
  },
};

/**
 * GitHub promises no order, so organization renames wait (`waiting_renames`) and the chain is
 * followed from the current login (`followRenames`): a rename applies when its `from` is the current
 * login, then every waiting rename that continues the chain. With no installation yet they keep
 * waiting: the installation follows them once it is registered.
 */
function followWaitingRenames(db: Db): void {
  const row = getInstallation(db);
  if (!row) return;
  const { login, used } = followRenames(row.login, waitingRenamesSince(db, Date.now() - DELIVERY_MEMORY_MS));
  deleteWaitingRenames(db, used);
  if (login !== row.login) updateInstallation(db, { login });
}
