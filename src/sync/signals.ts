import { organizationAt } from "../directory/resolve";
import { listCollaborators, listInstallationRepositories } from "../github/calls-installation";
import { getOrganizationMembership } from "../github/calls-members";
import type { GithubInstallation } from "../github/client";
import { githubSync } from "../github/config";
import { GithubError } from "../github/errors";
import { callDurable } from "../lib/durable-call";
import type { SyncPageAnswer } from "../organization/answers";
import type { SyncPage } from "../organization/sync-writes";
import { messageKey, type QueueMessage } from "../schemas/github-changes";

/**
 * Webhooks as signals (contract section 17). GitHub keeps no order between deliveries of
 * memberships, collaborators and repositories, and their payloads carry no version (or, for
 * `installation_repositories`, none at all), so with sync on such a delivery is not applied from
 * its payload: it says "this entity changed", and the service reads the entity's state now from
 * GitHub's API and stores that. Reordered or duplicated deliveries then end at GitHub's state.
 */

/** The deliveries whose order cannot be trusted (`event.action`, as the message names it). */
const SIGNAL_EVENTS = new Set([
  "member.added",
  "member.removed",
  "organization.member_added",
  "organization.member_removed",
  "repository.publicized",
  "repository.privatized",
  "repository.created",
  "repository.transferred",
  "installation_repositories.added",
  "installation_repositories.removed",
]);

/**
 * A signal's GitHub calls wait out a rate limit in place only this long; a longer one fails the
 * message, which the queue retries with backoff (a consumer invocation should not sit for minutes).
 */
const SIGNAL_MAX_WAIT_SECONDS = 30;

/**
 * Whether the message is a signal: sync is on and its entity can be read back. A `member_removed`
 * queued before messages carried the login cannot be asked about: applied from its payload as before.
 */
export function isSignal(env: Env, m: QueueMessage): boolean {
  if (!SIGNAL_EVENTS.has(m.event) || githubSync(env).kind !== "on") return false;
  const { change } = m;
  switch (change.kind) {
    case "collaborator":
    case "member_added":
    case "repository_visibility":
    case "repositories_added":
    case "repositories_removed":
      return true;
    case "member_removed":
      return change.githubLogin !== undefined;
    default:
      return false;
  }
}

/**
 * Reads the state of the entity the message named from GitHub, as the installation the
 * organization holds (`installation`, from the object that applied the message's ledger entry),
 * and writes it through the object's GitHub write path. A GitHub failure throws: the message is
 * retried like a store failure, never applied from its payload.
 */
export async function applySignal(
  env: Env,
  home: string,
  installation: { id: number; login: string },
  m: QueueMessage,
): Promise<void> {
  const sync = githubSync(env);
  if (sync.kind !== "on") return;
  const target: GithubInstallation = {
    app: sync.app,
    installationId: installation.id,
    options: { maxWaitSeconds: SIGNAL_MAX_WAIT_SECONDS },
  };
  const page = await readState(target, installation.login, m.change);
  if (page === null) return;
  await callDurable<SyncPageAnswer>(
    () => organizationAt(env, home).writeSyncPage(installation.id, page, { deliveryKey: messageKey(m) }),
    { idempotent: true },
  );
}

/** GitHub's state now of what the change names, as a page for the object; null: nothing GitHub can say. */
async function readState(target: GithubInstallation, owner: string, change: QueueMessage["change"]): Promise<SyncPage | null> {
  switch (change.kind) {
    case "member_added":
    case "member_removed": {
      if (change.kind === "member_removed" && change.githubLogin === undefined) return null;
      const login = change.kind === "member_added" ? change.githubLogin : (change.githubLogin as string);
      const { data } = await getOrganizationMembership(target, owner, login);
      // The login now names another account (a rename since the delivery): this person's
      // membership cannot be asked by login; the reconciliation reads the member list.
      if (data !== null && String(data.id) !== change.githubUserId) return null;
      const member = data && {
        githubUserId: change.githubUserId,
        githubLogin: data.login,
        role: data.role,
        isBot: data.type === "Bot",
      };
      return { kind: "membership", githubUserId: change.githubUserId, member };
    }
    case "collaborator": {
      try {
        const { data } = await listCollaborators(target, owner, change.repository.name);
        const repository = { ...change.repository, collaborators: data.map((a) => String(a.id)) };
        return { kind: "collaborators", repositories: [repository] };
      } catch (error) {
        // Not visible to the installation (removed from it, deleted): its removal is a delivery of its own.
        if (error instanceof GithubError && error.kind === "not_found") return null;
        throw error;
      }
    }
    case "repository_visibility":
    case "repositories_added":
    case "repositories_removed": {
      const named = change.kind === "repository_visibility" ? [change.repository] : change.repositories;
      const { data } = await listInstallationRepositories(target);
      const byId = new Map(data.map((r) => [r.id, r]));
      return {
        kind: "repository states",
        repositories: named.map(({ id, name }) => {
          const listed = byId.get(id);
          return {
            id,
            name,
            listed: listed ? { id, name: listed.name, private: listed.private, updatedAt: listed.updatedAt } : null,
          };
        }),
      };
    }
    default:
      return null;
  }
}
