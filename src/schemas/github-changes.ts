import { z } from "zod";
import { GithubId, GithubOrgName, GithubRepoName, GithubUserLogin } from "../schemas/common";
import { PullRequestEvent } from "../schemas/events";

/**
 * What the service keeps of a verified GitHub delivery: one or more changes, each sent as one
 * queue message (at most 128 KB; a long repository list is split into parts). The consumer parses
 * every message with these schemas before applying it, so a message from an older or newer
 * Worker version that does not fit is parked, never half applied.
 */

export const GithubRepository = z.object({
  id: z.number().int().min(1),
  name: GithubRepoName,
  private: z.boolean(),
  /**
   * GitHub's `repository.updated_at` (epoch ms) when the payload carries it: orders visibility
   * writes (an older one never overwrites a newer state). Absent in `installation_repositories`
   * lists and in messages queued before it was carried.
   */
  updatedAt: z.number().int().optional(),
});
export type GithubRepository = z.output<typeof GithubRepository>;

/** A change of an organization's state, applied by its Durable Object. */
export const OrganizationChange = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("installation_created"),
    installationId: z.number().int().min(1),
    /** The installation's creation time at GitHub, epoch ms. */
    installedAt: z.number().int(),
  }),
  z.object({ kind: z.literal("installation_deleted"), installationId: z.number().int().min(1) }),
  z.object({
    kind: z.literal("installation_suspended"),
    blocked: z.boolean(),
    /** The installation suspended or unsuspended; optional so that messages queued before it still parse. */
    installationId: z.number().int().min(1).optional(),
    /**
     * GitHub's time of it (epoch ms): `installation.suspended_at` for a suspend, `updated_at` for
     * an unsuspend. Orders them: an older one never overwrites a newer one. Optional (older messages).
     */
    at: z.number().int().optional(),
  }),
  /** Repositories join (or stay in) the installation with their visibility. */
  z.object({ kind: z.literal("repositories_added"), repositories: z.array(GithubRepository) }),
  /** Repositories leave the installation (removed, deleted, transferred away). */
  z.object({ kind: z.literal("repositories_removed"), repositories: z.array(GithubRepository.pick({ id: true, name: true })) }),
  z.object({ kind: z.literal("repository_visibility"), repository: GithubRepository }),
  z.object({ kind: z.literal("repository_renamed"), from: GithubRepoName, repository: GithubRepository }),
  z.object({
    kind: z.literal("collaborator"),
    added: z.boolean(),
    repository: GithubRepository.pick({ id: true, name: true }),
    githubUserId: GithubId,
  }),
  z.object({
    kind: z.literal("member_added"),
    githubUserId: GithubId,
    githubLogin: GithubUserLogin,
    role: z.enum(["admin", "member"]),
    isBot: z.boolean(),
  }),
  z.object({
    kind: z.literal("member_removed"),
    githubUserId: GithubId,
    /** The login, to ask GitHub for the membership (section 17 signals); optional (older messages). */
    githubLogin: GithubUserLogin.optional(),
  }),
  /** The organization's login changed from `from` to the message's `org`. */
  z.object({ kind: z.literal("organization_renamed"), from: GithubOrgName }),
]);
export type OrganizationChange = z.output<typeof OrganizationChange>;

export const Change = z.union([
  OrganizationChange,
  /** A pull request's state, stored through the same versioned write path as reviewer events. */
  z.object({
    kind: z.literal("pull_request"),
    /** GitHub's repository id: the consumer stores the pull request under the repository's current name. */
    repositoryId: z.number().int().min(1),
    event: PullRequestEvent,
  }),
]);
export type Change = z.output<typeof Change>;
/** A change as it travels (dates of a pull request still as text). */
export type ChangeInput = z.input<typeof Change>;

/** The longest event name a message carries (`X-GitHub-Event` and the action, cut to it: contract section 9). */
export const EVENT_NAME_MAX = 100;

export const QueueMessage = z.object({
  v: z.literal(1),
  /** `X-GitHub-Delivery`. */
  delivery: z.string().min(1).max(128),
  /** Which part of the delivery (0 for most; a long repository list is split). */
  part: z.number().int().min(0),
  /** `X-GitHub-Event` and the payload's action, for logs and the parked list. */
  event: z.string().max(EVENT_NAME_MAX),
  org: GithubOrgName,
  /**
   * GitHub's id of the owner account (the organization): its identity across renames. Optional so
   * that messages queued before it existed still parse; they are resolved by login.
   */
  accountId: z.number().int().min(1).optional(),
  /**
   * The payload's `installation.id`: the GitHub App installation that sent the delivery (GitHub sets
   * it; another organization's deliveries carry its own). Only a delivery of the installation an
   * organization holds may teach it its account id. Optional: messages queued before it existed
   * still parse.
   */
  installationId: z.number().int().min(1).optional(),
  /**
   * When the service received the delivery (epoch ms; a kept payload replayed: when it was
   * parked). Kept through the queue's retries, a wait for a move and a replay: how old the
   * delivery is, whatever the attempt (`held_logins`). Optional: messages queued before it existed
   * still parse.
   */
  receivedAt: z.number().int().min(0).optional(),
  change: Change,
});
export type QueueMessage = z.output<typeof QueueMessage>;
export type QueueMessageInput = z.input<typeof QueueMessage>;

/** The key of one message in the consumer's ledger and the parked list. */
export const messageKey = (m: { delivery: string; part: number }): string => `${m.delivery}:${m.part}`;
