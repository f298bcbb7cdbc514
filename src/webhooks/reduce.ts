import { z } from "zod";
import { GithubOrgName } from "../schemas/common";
import { type ChangeInput, EVENT_NAME_MAX, QueueMessage, type QueueMessageInput } from "../schemas/github-changes";

/**
 * Contract section 9, first half: which deliveries the service uses, reduced to the changes it
 * applies. Pure (payload in, messages out) so every rule is testable without a queue. What the
 * service does not use is `ignored`; so is a payload whose fields do not have the shape GitHub
 * documents, or whose values no message could carry (a repository name with a space, pull request
 * 0): queued, such a delivery would only be parked by the consumer. Those are `warn`: a used event
 * GitHub should not have sent like that, logged as a warning by the caller.
 */

export type Reduced = { status: "ignored"; reason: string; warn: boolean } | { status: "queued"; messages: QueueMessageInput[] };

/** Repositories per message: names are at most 100 characters, so 500 stay far below 128 KB. */
export const REPOSITORIES_PER_MESSAGE = 500;

const Login = z.object({ login: z.string() });
/** An owner account: its login and GitHub's numeric id (the identity that survives a rename). */
const Account = z.object({ login: z.string(), id: z.number().int().min(1).optional() });
const Repo = z.object({ id: z.number().int(), name: z.string(), private: z.boolean() });
const RepoWithOwner = Repo.extend({ owner: Account });
/** GitHub sends `created_at` of an installation as epoch seconds or as an ISO 8601 string. */
const GithubTime = z.union([z.number().transform((s) => s * 1000), z.string().transform((s) => Date.parse(s))]);

/** A time GitHub may send; one that does not parse is left out rather than refusing the delivery. */
const OptionalTime = GithubTime.nullable()
  .optional()
  .transform((t) => (t === null || t === undefined || !Number.isFinite(t) ? undefined : t));

const InstallationPayload = z.object({
  action: z.string(),
  installation: z.object({
    id: z.number().int(),
    /** `type`: `Organization`, or `User` for a personal account (whose owner is the account). */
    account: Account.extend({ type: z.string().optional() }),
    created_at: GithubTime,
    suspended_at: OptionalTime,
    updated_at: OptionalTime,
  }),
  repositories: z.array(Repo).optional(),
});
const InstallationRepositoriesPayload = z.object({
  action: z.string(),
  installation: z.object({ account: Account }),
  repositories_added: z.array(Repo).default([]),
  repositories_removed: z.array(Repo.partial({ private: true })).default([]),
});
const RepositoryPayload = z.object({
  action: z.string(),
  repository: RepoWithOwner.extend({ updated_at: OptionalTime }),
  changes: z
    .object({
      repository: z.object({ name: z.object({ from: z.string() }) }).optional(),
      owner: z.object({ from: z.object({ organization: Account.optional(), user: Login.optional() }) }).optional(),
    })
    .optional(),
});
const MemberPayload = z.object({
  action: z.string(),
  repository: RepoWithOwner,
  member: z.object({ id: z.number().int() }),
});
const OrganizationPayload = z.object({
  action: z.string(),
  organization: Account,
  changes: z.object({ login: z.object({ from: z.string() }).optional() }).optional(),
  membership: z
    .object({ role: z.string(), user: z.object({ id: z.number().int(), login: z.string(), type: z.string() }) })
    .optional(),
});
const PullRequestPayload = z.object({
  action: z.string(),
  repository: RepoWithOwner,
  pull_request: z.object({
    number: z.number().int(),
    user: Login,
    created_at: z.string(),
    updated_at: z.string(),
    merged_at: z.string().nullable().optional(),
    additions: z.number().int().optional(),
    deletions: z.number().int().optional(),
  }),
});

/** The installation that sent a delivery: every GitHub App payload names it at the top level. */
const SentBy = z.object({ installation: z.object({ id: z.number().int().min(1) }) });

const ignored = (reason: string, warn = false): Reduced => ({ status: "ignored", reason, warn });

/** The messages to enqueue for one verified delivery, or why it is ignored. */
export function reduceDelivery(event: string, delivery: string, payload: unknown): Reduced {
  const reducer = REDUCERS.get(event);
  if (!reducer) return ignored(`event ${event} is not used`);
  const result = reducer(payload);
  if (result === null) return ignored(`${event} action is not used`);
  if ("invalid" in result) return ignored(`${event} payload does not have the expected shape: ${result.invalid}`, true);
  const reductions = Array.isArray(result) ? result : [result];
  if (reductions.some((r) => !GithubOrgName.safeParse(r.org).success)) {
    return ignored(`${event}: the owner login is not a GitHub login`, true);
  }
  const name = eventName(event, payload);
  const sentBy = SentBy.safeParse(payload);
  const messages = reductions
    .flatMap((r) => r.changes.map((change) => ({ r, change })))
    .map(
      ({ r, change }, part): QueueMessageInput => ({
        v: 1,
        delivery,
        part,
        event: name,
        org: r.org,
        ...(r.accountId === undefined ? {} : { accountId: r.accountId }),
        ...(sentBy.success && !r.notSentByOwner ? { installationId: sentBy.data.installation.id } : {}),
        change,
      }),
    );
  // The consumer parses every message with the same schema; what it would refuse is refused here.
  for (const message of messages) {
    const parsed = QueueMessage.safeParse(message);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      return ignored(`${name} can never apply: ${problems}`, true);
    }
  }
  return { status: "queued", messages };
}

/**
 * The owner's login and, when the payload names it, GitHub's account id; then the changes.
 * `notSentByOwner`: the sending installation is another account's (a repository transferred
 * away is announced to its new owner), so it proves nothing about `org`.
 */
type Reduction = { org: string; accountId?: number; notSentByOwner?: true; changes: ChangeInput[] };
/** One organization's changes, or several (a transfer concerns two owners). */
type Result = Reduction | Reduction[] | { invalid: string } | null;

/** Parses with `schema`, then maps; a payload that does not fit is `invalid`. */
const using =
  <S extends z.ZodType>(schema: S, map: (p: z.output<S>) => Result) =>
  (payload: unknown): Result => {
    const parsed = schema.safeParse(payload);
    if (!parsed.success) return { invalid: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
    return map(parsed.data);
  };

const chunks = <T>(list: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
};

const added = (repositories: (z.output<typeof Repo> & { updatedAt?: number })[]): ChangeInput[] =>
  chunks(repositories, REPOSITORIES_PER_MESSAGE).map((part) => ({
    kind: "repositories_added" as const,
    repositories: part.map(({ id, name, private: p, updatedAt }) => ({
      id,
      name,
      private: p,
      ...(updatedAt === undefined ? {} : { updatedAt }),
    })),
  }));

const removed = (repositories: { id: number; name: string }[]): ChangeInput[] =>
  chunks(repositories, REPOSITORIES_PER_MESSAGE).map((part) => ({
    kind: "repositories_removed" as const,
    repositories: part.map(({ id, name }) => ({ id, name })),
  }));

/**
 * A personal account's installation has one member, its owner (the account), as admin (contract
 * section 17): from the payload too, so that without sync the owner is not outside their own
 * organization. An organization's members come from `organization` deliveries and the sync.
 */
function owner(account: { login: string; id?: number | undefined; type?: string | undefined }): ChangeInput[] {
  if (account.type !== "User" || account.id === undefined) return [];
  return [{ kind: "member_added", githubUserId: String(account.id), githubLogin: account.login, role: "admin", isBot: false }];
}

/**
 * The delivery's event and action (`pull_request.closed`) for logs and the parked list, cut to
 * EVENT_NAME_MAX: the action is whatever the signed payload carries, of any length.
 */
export function eventName(event: string, payload: unknown): string {
  const action = (payload as { action?: unknown } | null)?.action;
  return (typeof action === "string" ? `${event}.${action}` : event).slice(0, EVENT_NAME_MAX);
}

/**
 * A Map, not a plain object: the event name comes from a header the signature does not cover, and
 * an object would answer `constructor` or `__proto__` with something that is not a reducer.
 */
const REDUCERS = new Map<string, (payload: unknown) => Result>(
  Object.entries({
    installation: using(InstallationPayload, (p) => {
      const { login: org, id: accountId } = p.installation.account;
      const installationId = p.installation.id;
      switch (p.action) {
        case "created":
          if (!Number.isFinite(p.installation.created_at)) return null;
          return {
            org,
            accountId,
            changes: [
              { kind: "installation_created", installationId, installedAt: p.installation.created_at },
              ...owner(p.installation.account),
              ...added(p.repositories ?? []),
            ],
          };
        case "deleted":
          return { org, accountId, changes: [{ kind: "installation_deleted", installationId }] };
        case "suspend":
        case "unsuspend": {
          // A suspend's time is `suspended_at`; an unsuspend clears it, and `updated_at` is its time.
          const at =
            p.action === "suspend" ? (p.installation.suspended_at ?? p.installation.updated_at) : p.installation.updated_at;
          return {
            org,
            accountId,
            changes: [
              {
                kind: "installation_suspended",
                blocked: p.action === "suspend",
                installationId,
                ...(at === undefined ? {} : { at }),
              },
            ],
          };
        }
        default:
          return null;
      }
    }),
    installation_repositories: using(InstallationRepositoriesPayload, (p) => {
      const { login: org, id: accountId } = p.installation.account;
      if (p.action === "added") return { org, accountId, changes: added(p.repositories_added) };
      if (p.action === "removed") return { org, accountId, changes: removed(p.repositories_removed) };
      return null;
    }),
    repository: using(RepositoryPayload, (p) => {
      const { id, name, private: isPrivate, owner, updated_at: updatedAt } = p.repository;
      const repository = { id, name, private: isPrivate, ...(updatedAt === undefined ? {} : { updatedAt }) };
      const org = owner.login;
      const accountId = owner.id;
      switch (p.action) {
        case "privatized":
        case "publicized":
          return { org, accountId, changes: [{ kind: "repository_visibility", repository }] };
        case "renamed": {
          const from = p.changes?.repository?.name.from;
          return from === undefined ? null : { org, accountId, changes: [{ kind: "repository_renamed", from, repository }] };
        }
        case "created":
          return { org, accountId, changes: added([repository]) };
        case "deleted":
          return { org, accountId, changes: removed([{ id, name }]) };
        case "transferred": {
          // The payload names the new owner, whose installation sent it: the repository joins it and
          // leaves the previous owner (for whom the sending installation proves nothing).
          const from = p.changes?.owner?.from;
          const previous = from?.organization?.login ?? from?.user?.login;
          if (previous === undefined) return null;
          return [
            { org: previous, accountId: from?.organization?.id, notSentByOwner: true, changes: removed([{ id, name }]) },
            { org, accountId, changes: added([repository]) },
          ];
        }
        default:
          return null;
      }
    }),
    member: using(MemberPayload, (p) => {
      if (p.action !== "added" && p.action !== "removed") return null;
      const { id, name, owner } = p.repository;
      return {
        org: owner.login,
        accountId: owner.id,
        changes: [
          { kind: "collaborator", added: p.action === "added", repository: { id, name }, githubUserId: String(p.member.id) },
        ],
      };
    }),
    organization: using(OrganizationPayload, (p) => {
      const user = p.membership?.user;
      const { login: org, id: accountId } = p.organization;
      if (p.action === "member_added" && user) {
        return {
          org,
          accountId,
          changes: [
            {
              kind: "member_added",
              githubUserId: String(user.id),
              githubLogin: user.login,
              role: p.membership?.role === "admin" ? "admin" : "member",
              isBot: user.type === "Bot",
            },
          ],
        };
      }
      if (p.action === "member_removed" && user) {
        return { org, accountId, changes: [{ kind: "member_removed", githubUserId: String(user.id), githubLogin: user.login }] };
      }
      // `organization.login` is already the new login; the account id is what stays.
      const from = p.changes?.login?.from;
      if (p.action === "renamed" && from !== undefined) {
        if (!GithubOrgName.safeParse(from).success) return { invalid: "changes.login.from: not a GitHub login" };
        return { org, accountId, changes: [{ kind: "organization_renamed", from }] };
      }
      return null;
    }),
    pull_request: using(PullRequestPayload, (p) => {
      const pr = p.pull_request;
      return {
        org: p.repository.owner.login,
        accountId: p.repository.owner.id,
        changes: [
          {
            kind: "pull_request",
            repositoryId: p.repository.id,
            event: {
              type: "pull_request",
              org: p.repository.owner.login,
              repo: p.repository.name,
              prNumber: pr.number,
              author: pr.user.login,
              createdAt: pr.created_at,
              mergedAt: pr.merged_at ?? null,
              linesAdded: pr.additions ?? null,
              linesDeleted: pr.deletions ?? null,
              updatedAt: pr.updated_at,
            },
          },
        ],
      };
    }),
  }),
);
