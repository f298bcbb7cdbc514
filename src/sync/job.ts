import { NonRetryableError } from "cloudflare:workflows";
import { reportActivity } from "../directory/activity";
import { storeEventsAtHome } from "../directory/events";
import { organizationAt } from "../directory/resolve";
import type { GithubAccount, GithubMergedPull } from "../github/calls";
import { mergedPullRequestsPage } from "../github/calls-history";
import { mergedPullRequestsGraphql, REPOSITORIES_PER_QUERY } from "../github/calls-history-graphql";
import { getInstallation, listCollaborators, listInstallationRepositories } from "../github/calls-installation";
import { listOrganizationMembers } from "../github/calls-members";
import type { GithubInstallation } from "../github/client";
import { githubSync } from "../github/config";
import { GithubError } from "../github/errors";
import { callDurable } from "../lib/durable-call";
import { log } from "../lib/log";
import type { SyncPageAnswer } from "../organization/answers";
import type { SyncPage, SyncUpdate } from "../organization/sync-writes";
import { PullRequestEvent } from "../schemas/events";
import type { SyncStepName } from "../schemas/sync";
import type { SyncParams } from "./start";

/**
 * The steps of one installation sync (contract section 17), each a function the Workflow runs as a
 * `step.do` (`workflow.ts`): read a bounded amount from GitHub, write it with the step's progress,
 * answer a small serialisable result (the next step's input, or the cursor to continue from).
 * Every write is idempotent, so a step retried after a failure midway writes the same state again.
 */

/** GitHub requests one step may make before it stops and hands the walk to the next step. */
const REQUESTS_PER_STEP = 100;
/** Pull request events per D1 write (a GraphQL query answers up to 5,000). */
const EVENTS_PER_WRITE = 1000;
/** Members written per call of the organization's object (each tells the member's index). */
const MEMBERS_PER_WRITE = 200;

export type Repo = { id: number; name: string; private: boolean };
export type Account = { id: number; login: string; type: string };
export type Walk<C> = { next: C | null; count: number };

/** GraphQL queries one history step may send (each up to `REPOSITORIES_PER_QUERY` repositories). */
const QUERIES_PER_STEP = 10;

/**
 * Where the history walk stands. REST: the repository and the page of its closed pull requests.
 * GraphQL: the next repository not yet asked for, and the repositories with more pages to read
 * (their index and cursor). A cursor without `api` is a REST one (a sync started before GraphQL).
 */
export type HistoryCursor =
  | { api?: "rest"; repo: number; page: number }
  | { api: "graphql"; repo: number; pending: { repo: number; after: string }[] };

/** The history walk's start: GraphQL, which never costs more points than REST (docs/architecture.md). */
export const HISTORY_START: HistoryCursor = { api: "graphql", repo: 0, pending: [] };

/** GraphQL failures after which the history goes on through REST: no GraphQL API, or one that refuses the query. */
const GRAPHQL_FALLBACK = new Set(["failed", "not_found", "unexpected_shape"]);

/** GitHub's failures that no retry can mend: the step ends the sync at once. */
const PERMANENT = new Set(["not_found", "forbidden", "unexpected_shape", "unauthorized"]);

export class SyncJob {
  readonly #target: GithubInstallation;
  /** `GITHUB_BACKFILL_DAYS`: how far back the history goes. */
  readonly backfillDays: number;

  constructor(
    readonly env: Env,
    readonly params: SyncParams,
  ) {
    const sync = githubSync(env);
    if (sync.kind !== "on") throw new NonRetryableError(`GitHub sync is ${sync.kind}`);
    this.#target = { app: sync.app, installationId: params.installationId, options: params.options };
    this.backfillDays = sync.app.backfillDays;
  }

  #object() {
    return organizationAt(this.env, this.params.home);
  }

  /** Records the sync's progress, a failure or its end in its progress record. */
  record(update: SyncUpdate): Promise<void> {
    return callDurable(() => this.#object().recordSync(this.params.syncId, update), { idempotent: true });
  }

  /**
   * A failure of a step, recorded as the sync's last error. GitHub's answers no retry can mend (the
   * installation is gone, a permission is missing) end the sync: answered `true`, the run records the
   * end. Anything else is thrown for the Workflow to retry with backoff.
   */
  async failed(step: string, error: unknown): Promise<true> {
    // The failure in words, without the error's class name (an internal name, not the operator's).
    const message = error instanceof Error ? error.message : String(error);
    await this.record({ kind: "error", step, message: message.slice(0, 500) }).catch(() => undefined);
    if (error instanceof GithubError && PERMANENT.has(error.kind)) return true;
    throw error;
  }

  async #write(page: SyncPage, step: SyncStepName, done: boolean, count: number) {
    const progress = { kind: "progress" as const, step, state: done ? ("done" as const) : ("running" as const), count };
    const answer = await callDurable<SyncPageAnswer>(
      () => this.#object().writeSyncPage(this.params.installationId, page, { syncId: this.params.syncId, progress }),
      { idempotent: true },
    );
    if (answer.kind === "stale") throw new NonRetryableError("the organization's installation changed during the sync");
    return answer;
  }

  /** `GET /app/installations/{id}`: whose installation this is (an organization, or a user's personal account). */
  async installation(): Promise<Account> {
    const { data } = await getInstallation(this.#target);
    if (!data.account) throw new NonRetryableError("the installation has no account (an enterprise installation)");
    return { id: data.account.id, login: data.account.login, type: data.account.type };
  }

  /** The installation's repositories with visibility; those no longer listed leave it. Answers them as stored, and the login. */
  async repositories(): Promise<{ login: string; repositories: Repo[] }> {
    const { data } = await listInstallationRepositories(this.#target);
    const listed = data.map((r) => ({ id: r.id, name: r.name, private: r.private, updatedAt: r.updatedAt }));
    const answer = await this.#write({ kind: "repositories", repositories: listed }, "repositories", true, listed.length);
    return { login: answer.login, repositories: answer.repositories };
  }

  /**
   * The members with their roles (a personal account: its owner, as admin), a page per write; the
   * last write removes the members GitHub no longer lists.
   */
  async members(account: Account): Promise<number> {
    const listed: GithubAccountWithRole[] =
      account.type === "Organization"
        ? (await listOrganizationMembers(this.#target, account.login)).data
        : [{ ...account, role: "admin" }];
    const members = listed.map((m) => ({
      githubUserId: String(m.id),
      githubLogin: m.login,
      role: m.role,
      isBot: m.type === "Bot",
    }));
    for (let i = 0; i === 0 || i < members.length; i += MEMBERS_PER_WRITE) {
      const last = i + MEMBERS_PER_WRITE >= members.length;
      const page = members.slice(i, i + MEMBERS_PER_WRITE);
      const listedIds = last ? members.map((m) => m.githubUserId) : null;
      await this.#write(
        { kind: "members", members: page, listedIds },
        "members",
        last,
        Math.min(members.length, i + page.length),
      );
    }
    return members.length;
  }

  /** Collaborators of private repositories from `from` on, until the step's request budget is spent. */
  async collaborators(owner: string, privates: readonly Repo[], from: number, before: number): Promise<Walk<number>> {
    const written: { id: number; name: string; collaborators: string[] }[] = [];
    let calls = 0;
    let i = from;
    let count = before;
    while (i < privates.length && calls < REQUESTS_PER_STEP) {
      const repo = privates[i] as Repo;
      const { data, usage } = await listCollaborators(this.#target, owner, repo.name);
      written.push({ id: repo.id, name: repo.name, collaborators: data.map((a) => String(a.id)) });
      calls += usage.calls;
      count += data.length;
      i++;
    }
    const next = i < privates.length ? i : null;
    await this.#write({ kind: "collaborators", repositories: written }, "collaborators", next === null, count);
    return { next, count };
  }

  /**
   * Merged pull requests of the last `GITHUB_BACKFILL_DAYS` days, from the cursor on until the
   * step's budget is spent, through the versioned event write path the webhooks use
   * (`directory/events.ts`): a page written twice changes nothing the second time. GraphQL first
   * (`QUERIES_PER_STEP` queries of `REPOSITORIES_PER_QUERY` repositories); when GitHub has no
   * GraphQL API or refuses the query, the walk goes on through REST from the first repository not
   * finished, and the step records why as the sync's last error.
   */
  async pullRequests(
    at: { login: string },
    repos: readonly Repo[],
    from: HistoryCursor,
    before: number,
    since: number,
  ): Promise<Walk<HistoryCursor>> {
    let walk: Walk<HistoryCursor>;
    if (from.api === "graphql") {
      try {
        walk = await this.#pullRequestsGraphql(at, repos, from, before, since);
      } catch (error) {
        if (!(error instanceof GithubError && GRAPHQL_FALLBACK.has(error.kind))) throw error;
        const message = `GraphQL history failed (${error.kind}: ${error.message.slice(0, 300)}); continuing through REST`;
        log.warn("GraphQL history failed; continuing through REST", { installationId: this.params.installationId, message });
        await this.record({ kind: "error", step: "pull requests", message });
        // Repositories partly read through GraphQL are read again from their start: the writes are idempotent.
        const first = Math.min(from.repo, ...from.pending.map((p) => p.repo));
        walk = await this.#pullRequestsRest(at, repos, { repo: first, page: 1 }, before, since);
      }
    } else {
      walk = await this.#pullRequestsRest(at, repos, from, before, since);
    }
    const state = walk.next === null ? "done" : "running";
    await this.record({ kind: "progress", step: "pullRequests", state, count: walk.count });
    return walk;
  }

  /** GraphQL: the pending repositories' next pages first, then new repositories, a query per batch. */
  async #pullRequestsGraphql(
    at: { login: string },
    repos: readonly Repo[],
    from: Extract<HistoryCursor, { api: "graphql" }>,
    before: number,
    since: number,
  ): Promise<Walk<HistoryCursor>> {
    let next = from.repo;
    let pending = from.pending;
    let count = before;
    for (let q = 0; q < QUERIES_PER_STEP && (pending.length > 0 || next < repos.length); q++) {
      const batch = pending.slice(0, REPOSITORIES_PER_QUERY);
      pending = pending.slice(batch.length);
      const fresh = Math.min(REPOSITORIES_PER_QUERY - batch.length, repos.length - next);
      const asked = [
        ...batch.map((p) => ({ repo: p.repo, after: p.after as string | null })),
        ...Array.from({ length: fresh }, (_, i) => ({ repo: next + i, after: null })),
      ];
      next += fresh;
      const { data } = await mergedPullRequestsGraphql(
        this.#target,
        at.login,
        asked.map((a) => ({ name: (repos[a.repo] as Repo).name, after: a.after })),
        since,
      );
      const pulls: { repo: Repo; pull: GithubMergedPull }[] = [];
      data.forEach((page, i) => {
        const index = (asked[i] as { repo: number }).repo;
        const repo = repos[index] as Repo;
        for (const pull of page.pulls) pulls.push({ repo, pull });
        if (page.after !== null) pending = [...pending, { repo: index, after: page.after }];
      });
      await this.#storePulls(at, pulls);
      count += pulls.length;
    }
    const done = pending.length === 0 && next >= repos.length;
    return { next: done ? null : { api: "graphql", repo: next, pending }, count };
  }

  /** REST: a page of a repository's closed pull requests, and one request per merged one for its line counts. */
  async #pullRequestsRest(
    at: { login: string },
    repos: readonly Repo[],
    from: { repo: number; page: number },
    before: number,
    since: number,
  ): Promise<Walk<HistoryCursor>> {
    let cursor: { repo: number; page: number } | null = { repo: from.repo, page: from.page };
    let calls = 0;
    let count = before;
    while (cursor !== null && cursor.repo < repos.length && calls < REQUESTS_PER_STEP) {
      const repo = repos[cursor.repo] as Repo;
      const { data, usage } = await mergedPullRequestsPage(this.#target, at.login, repo.name, since, cursor.page);
      calls += usage.calls;
      await this.#storePulls(
        at,
        data.pulls.map((pull) => ({ repo, pull })),
      );
      count += data.pulls.length;
      if (data.more) cursor = { repo: cursor.repo, page: cursor.page + 1 };
      else cursor = { repo: cursor.repo + 1, page: 1 };
    }
    if (cursor !== null && cursor.repo >= repos.length) cursor = null;
    return { next: cursor && { api: "rest", ...cursor }, count };
  }

  /** Pull requests as the webhooks' `pull_request` events, stored at the organization's home. */
  async #storePulls(at: { login: string }, pulls: readonly { repo: Repo; pull: GithubMergedPull }[]) {
    const events = pulls.map(({ repo, pull: p }) =>
      PullRequestEvent.parse({
        type: "pull_request",
        org: at.login,
        repo: repo.name,
        prNumber: p.number,
        // A pull request whose author's account is gone: GitHub shows it as `ghost` (GraphQL: no author).
        author: p.author?.login ?? "ghost",
        createdAt: p.createdAt,
        mergedAt: p.mergedAt,
        linesAdded: p.additions,
        linesDeleted: p.deletions,
        updatedAt: p.updatedAt,
      }),
    );
    for (let i = 0; i < events.length; i += EVENTS_PER_WRITE) {
      const home = { login: at.login, home: this.params.home };
      const stored = await storeEventsAtHome(this.env, events.slice(i, i + EVENTS_PER_WRITE), home);
      // An import: activity and the pull requests learned, never an automatic seat (contract section 20).
      await reportActivity(this.env, stored.activity, { assign: false, correlationId: `sync:${this.params.home}` });
    }
  }
}

type GithubAccountWithRole = GithubAccount & { role: "admin" | "member" };
