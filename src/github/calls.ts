import { z } from "zod";
import { type GithubInstallation, type GithubUsage, type InstallationOctokit, withInstallation } from "./client";
import { GithubError } from "./errors";

/**
 * The calls of contract section 17, each reduced to the fields the service keeps (parsed with zod,
 * so a change on GitHub's side is an `unexpected_shape` error, not a silent `undefined`).
 * Every function answers `{ data, usage }`: the usage is what the call cost (for the benchmark
 * that chooses between REST and GraphQL for the history).
 */

export type GithubResult<T> = { data: T; usage: GithubUsage };

const Account = z.object({ id: z.number().int(), login: z.string(), type: z.string() });
/** A user as the service keeps it: GitHub's `type` is `User`, `Bot` or `Organization`. */
export type GithubAccount = z.infer<typeof Account>;

const Installation = z.object({
  id: z.number().int(),
  // null for an enterprise installation; this App is installed on organizations and users.
  account: Account.nullable(),
  created_at: z.string(),
  suspended_at: z.string().nullable().optional(),
});
export interface GithubInstallationInfo {
  id: number;
  account: GithubAccount | null;
  createdAt: string;
  suspendedAt: string | null;
}

const Repository = z.object({
  id: z.number().int(),
  name: z.string(),
  owner: z.object({ id: z.number().int(), login: z.string() }),
  private: z.boolean(),
  updated_at: z.string().nullable().optional(),
});
export interface GithubRepository {
  id: number;
  name: string;
  owner: { id: number; login: string };
  private: boolean;
  /** GitHub's `updated_at` (epoch ms), which orders visibility writes; absent when GitHub sends none. */
  updatedAt?: number;
}

const Membership = z.object({
  state: z.string(),
  role: z.string(),
  user: Account.nullable(),
});

export interface GithubMember extends GithubAccount {
  /** `admin` for GitHub's organization owners, else `member` (contract section 9). */
  role: "admin" | "member";
}

const PullListed = z.object({
  number: z.number().int(),
  user: Account.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  merged_at: z.string().nullable(),
});
const PullCounts = z.object({ additions: z.number().int(), deletions: z.number().int() });
export interface GithubMergedPull {
  number: number;
  /** null when GitHub no longer knows the author (a deleted account shows as `ghost`, not null). */
  author: GithubAccount | null;
  createdAt: string;
  mergedAt: string;
  updatedAt: string;
  additions: number;
  deletions: number;
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new GithubError("unexpected_shape", `${what}: ${z.prettifyError(result.error)}`, { calls: 0, points: 0 });
  }
  return result.data;
}

const account = (a: GithubAccount): GithubAccount => ({ id: a.id, login: a.login, type: a.type });

async function allPages<T>(octokit: InstallationOctokit, route: string, params: Record<string, unknown>, item: z.ZodType<T>) {
  const rows: T[] = [];
  for await (const page of octokit.paginate.iterator(route, { ...params, per_page: 100 })) {
    rows.push(...parse(z.array(item), page.data, route));
  }
  return rows;
}

/** `GET /app/installations/{id}` with the App JWT: the account (id, login, type) the installation belongs to. */
export function getInstallation(target: GithubInstallation): Promise<GithubResult<GithubInstallationInfo>> {
  return withInstallation(target, async (octokit) => {
    const { data } = await octokit.request("GET /app/installations/{installation_id}", {
      installation_id: target.installationId,
    });
    const i = parse(Installation, data, "GET /app/installations/{installation_id}");
    return {
      id: i.id,
      account: i.account && account(i.account),
      createdAt: i.created_at,
      suspendedAt: i.suspended_at ?? null,
    };
  });
}

/** `GET /installation/repositories`, every page: the repositories the installation covers, with visibility. */
export function listInstallationRepositories(target: GithubInstallation): Promise<GithubResult<GithubRepository[]>> {
  return withInstallation(target, async (octokit) => {
    const rows = await allPages(octokit, "GET /installation/repositories", {}, Repository);
    return rows.map((r) => {
      const updatedAt = r.updated_at ? Date.parse(r.updated_at) : Number.NaN;
      return {
        id: r.id,
        name: r.name,
        owner: { id: r.owner.id, login: r.owner.login },
        private: r.private,
        ...(Number.isFinite(updatedAt) ? { updatedAt } : {}),
      };
    });
  });
}

/**
 * `GET /orgs/{org}/memberships/{username}`: the user's membership now, or null when GitHub says
 * they are not a member (404) or have only been invited (`pending`). GitHub's `billing_manager` is
 * no member role of the service's: treated as `member`.
 */
export function getOrganizationMembership(
  target: GithubInstallation,
  org: string,
  username: string,
): Promise<GithubResult<GithubMember | null>> {
  return withInstallation(target, async (octokit) => {
    const route = "GET /orgs/{org}/memberships/{username}";
    let data: unknown;
    try {
      data = (await octokit.request(route, { org, username })).data;
    } catch (error) {
      if (typeof error === "object" && error && "status" in error && error.status === 404) return null;
      throw error;
    }
    const m = parse(Membership, data, route);
    if (m.state !== "active" || m.user === null) return null;
    return { ...account(m.user), role: m.role === "admin" ? "admin" : "member" };
  });
}

/**
 * `GET /orgs/{org}/members?role=admin`, then `?role=member`, every page: the organization's members
 * with their role. Someone listed in both (promoted between the two lists) is an admin.
 */
export function listOrganizationMembers(target: GithubInstallation, org: string): Promise<GithubResult<GithubMember[]>> {
  return withInstallation(target, async (octokit) => {
    const members = new Map<number, GithubMember>();
    for (const role of ["admin", "member"] as const) {
      for (const a of await allPages(octokit, "GET /orgs/{org}/members", { org, role }, Account)) {
        if (!members.has(a.id)) members.set(a.id, { ...account(a), role });
      }
    }
    return [...members.values()];
  });
}

/** `GET /users/{login}`: the account's id and type (`User`, `Bot`, `Organization`). */
export function getUser(target: GithubInstallation, login: string): Promise<GithubResult<GithubAccount>> {
  return withInstallation(target, async (octokit) => {
    const { data } = await octokit.request("GET /users/{username}", { username: login });
    return account(parse(Account, data, "GET /users/{username}"));
  });
}

/** `GET /repos/{owner}/{repo}/collaborators?affiliation=all`, every page. */
export function listCollaborators(
  target: GithubInstallation,
  owner: string,
  repo: string,
): Promise<GithubResult<GithubAccount[]>> {
  return withInstallation(target, async (octokit) => {
    const rows = await allPages(octokit, "GET /repos/{owner}/{repo}/collaborators", { owner, repo, affiliation: "all" }, Account);
    return rows.map(account);
  });
}

/**
 * The pull requests of a repository merged at or after `since` (epoch ms): closed pull requests by
 * `updated_at`, newest first, page by page until one was last updated before `since` (a pull request
 * merged since then was updated since then too), and for each merged one
 * `GET /repos/{owner}/{repo}/pulls/{n}` for its line counts, which the list does not carry.
 */
export function listMergedPullRequests(
  target: GithubInstallation,
  owner: string,
  repo: string,
  since: number,
): Promise<GithubResult<GithubMergedPull[]>> {
  return withInstallation(target, async (octokit) => {
    const merged: z.infer<typeof PullListed>[] = [];
    const route = "GET /repos/{owner}/{repo}/pulls";
    const params = { owner, repo, state: "closed", sort: "updated", direction: "desc", per_page: 100 } as const;
    pages: for await (const page of octokit.paginate.iterator(route, params)) {
      for (const pull of parse(z.array(PullListed), page.data, route)) {
        if (Date.parse(pull.updated_at) < since) break pages;
        if (pull.merged_at !== null && Date.parse(pull.merged_at) >= since) merged.push(pull);
      }
    }
    const pulls: GithubMergedPull[] = [];
    // One at a time: GitHub's secondary limits punish bursts of concurrent requests.
    for (const pull of merged) {
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
        owner,
        repo,
        pull_number: pull.number,
      });
      const counts = parse(PullCounts, data, "GET /repos/{owner}/{repo}/pulls/{pull_number}");
      pulls.push({
        number: pull.number,
        author: pull.user && account(pull.user),
        createdAt: pull.created_at,
        mergedAt: pull.merged_at as string,
        updatedAt: pull.updated_at,
        additions: counts.additions,
        deletions: counts.deletions,
      });
    }
    return pulls;
  });
}

/**
 * One page (100) of a repository's closed pull requests by `updated_at`, newest first, reduced to
 * those merged at or after `since` (epoch ms), each with its line counts
 * (`GET /repos/{owner}/{repo}/pulls/{n}`): at most 101 requests, so a durable sync can walk a long
 * history a page per step. `more`: a next page may still hold pull requests merged since `since`.
 */
export function mergedPullRequestsPage(
  target: GithubInstallation,
  owner: string,
  repo: string,
  since: number,
  page: number,
): Promise<GithubResult<{ pulls: GithubMergedPull[]; more: boolean }>> {
  return withInstallation(target, async (octokit) => {
    const route = "GET /repos/{owner}/{repo}/pulls";
    const params = { owner, repo, state: "closed", sort: "updated", direction: "desc", per_page: 100, page } as const;
    const listed = parse(z.array(PullListed), (await octokit.request(route, params)).data, route);
    const recent = listed.filter((p) => Date.parse(p.updated_at) >= since);
    const pulls: GithubMergedPull[] = [];
    // One at a time: GitHub's secondary limits punish bursts of concurrent requests.
    for (const pull of recent) {
      if (pull.merged_at === null || Date.parse(pull.merged_at) < since) continue;
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/pulls/{pull_number}", {
        owner,
        repo,
        pull_number: pull.number,
      });
      const counts = parse(PullCounts, data, "GET /repos/{owner}/{repo}/pulls/{pull_number}");
      pulls.push({
        number: pull.number,
        author: pull.user && account(pull.user),
        createdAt: pull.created_at,
        mergedAt: pull.merged_at,
        updatedAt: pull.updated_at,
        additions: counts.additions,
        deletions: counts.deletions,
      });
    }
    return { pulls, more: listed.length === 100 && recent.length === listed.length };
  });
}

/** How far one repository's history has been read through GraphQL: its name and the cursor to continue after. */
export interface HistoryRepository {
  name: string;
  /** `endCursor` of the page read last; null for the first page. */
  after: string | null;
}
/** One repository's page: its pull requests merged since the window's start, and the cursor to go on from, if any. */
export interface HistoryPage {
  pulls: GithubMergedPull[];
  /** Set while a next page may still hold pull requests merged within the window; null when the walk is done. */
  after: string | null;
  /** GitHub answered NOT_FOUND for the repository (deleted, transferred or removed since it was listed). */
  gone?: boolean;
}

/**
 * Repositories per GraphQL query. GitHub's cost is the connections' requests over 100, rounded, at
 * least 1 point: one `pullRequests(first: 100)` per repository makes 50 requests, so the query costs
 * 1 point (0.02 a repository, against at least 1 request a repository through REST). 50, not the
 * 149 that would still cost 1: an answer holds at most 5,000 pull requests, well within GitHub's
 * 10-second query time and the Worker's memory.
 */
export const REPOSITORIES_PER_QUERY = 50;

const GraphqlAuthor = z.object({
  __typename: z.string(),
  login: z.string(),
  databaseId: z.number().int().nullable().optional(),
});
const GraphqlPull = z.object({
  number: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  mergedAt: z.string().nullable(),
  additions: z.number().int(),
  deletions: z.number().int(),
  author: GraphqlAuthor.nullable(),
});
const GraphqlRepository = z
  .object({
    pullRequests: z.object({
      pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
      nodes: z.array(GraphqlPull.nullable()),
    }),
  })
  .nullable();
const RateLimit = z.object({ cost: z.number().int(), remaining: z.number().int(), resetAt: z.string() });

/** GitHub's `Actor` types that carry a `databaseId` (an `EnterpriseUserAccount` authors no pull request). */
const MERGED_PULL = `fragment MergedPull on PullRequest {
  number
  createdAt
  updatedAt
  mergedAt
  additions
  deletions
  author {
    __typename
    login
    ... on User { databaseId }
    ... on Bot { databaseId }
    ... on Organization { databaseId }
    ... on Mannequin { databaseId }
  }
}`;

/** The history query for `n` repositories of one owner: one aliased `repository` each, newest update first. */
export function historyQuery(n: number): string {
  const variables = ["$owner: String!"];
  const fields: string[] = [];
  for (let i = 0; i < n; i++) {
    variables.push(`$name${i}: String!`, `$after${i}: String`);
    fields.push(
      `  r${i}: repository(owner: $owner, name: $name${i}) {
    pullRequests(first: 100, after: $after${i}, states: [MERGED], orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes { ...MergedPull }
    }
  }`,
    );
  }
  return `query MergedPullRequests(${variables.join(", ")}) {
  rateLimit { cost remaining resetAt }
${fields.join("\n")}
}
${MERGED_PULL}`;
}

/**
 * The pull requests merged at or after `since` (epoch ms) of up to `REPOSITORIES_PER_QUERY`
 * repositories of `owner`, one GraphQL query (`POST /graphql`) for all of them: per repository the
 * next page of its merged pull requests by `updated_at`, newest first, with line counts and author
 * (a pull request merged since `since` was updated since then too, so a page whose last pull
 * request was updated before `since` ends that repository's walk). Usage points are the cost GitHub
 * reports. A repository GitHub no longer resolves (NOT_FOUND) answers no pull requests and `gone`;
 * any other GraphQL error fails the call (`failed`, with GitHub's messages).
 */
export function mergedPullRequestsGraphql(
  target: GithubInstallation,
  owner: string,
  repositories: readonly HistoryRepository[],
  since: number,
): Promise<GithubResult<HistoryPage[]>> {
  return withInstallation(target, async (octokit, usage) => {
    const variables: Record<string, string | null> = { owner };
    repositories.forEach((r, i) => {
      variables[`name${i}`] = r.name;
      variables[`after${i}`] = r.after;
    });
    let data: Record<string, unknown>;
    const missing = new Set<string>();
    try {
      data = await octokit.graphql<Record<string, unknown>>(historyQuery(repositories.length), variables);
    } catch (error) {
      const partial = notFoundOnly(error);
      if (!partial) throw rateLimitedAnswer(error, usage) ?? error;
      data = partial.data;
      for (const alias of partial.aliases) missing.add(alias);
    }
    const rate = parse(RateLimit, data.rateLimit, "GraphQL rateLimit");
    usage.points += rate.cost;
    return repositories.map((_, i): HistoryPage => {
      const alias = `r${i}`;
      const repo = parse(GraphqlRepository, data[alias], `GraphQL repository ${alias}`);
      if (repo === null) {
        if (missing.has(alias)) return { pulls: [], after: null, gone: true };
        throw new GithubError("unexpected_shape", `GraphQL repository ${alias}: null without an error`, { calls: 0, points: 0 });
      }
      const { nodes, pageInfo } = repo.pullRequests;
      const listed = nodes.filter((p) => p !== null);
      const recent = listed.filter((p) => Date.parse(p.updatedAt) >= since);
      const pulls = recent
        .filter((p) => p.mergedAt !== null && Date.parse(p.mergedAt) >= since)
        .map(
          (p): GithubMergedPull => ({
            number: p.number,
            author: p.author && {
              id: p.author.databaseId ?? 0,
              login: p.author.login,
              type: p.author.__typename,
            },
            createdAt: p.createdAt,
            mergedAt: p.mergedAt as string,
            updatedAt: p.updatedAt,
            additions: p.additions,
            deletions: p.deletions,
          }),
        );
      const more = pageInfo.hasNextPage && recent.length === listed.length && pageInfo.endCursor !== null;
      return { pulls, after: more ? pageInfo.endCursor : null };
    });
  });
}

/**
 * A GraphQL answer whose only errors are NOT_FOUND for top-level aliases (a repository deleted or
 * transferred since it was listed): its partial data and those aliases. Anything else: undefined.
 */
function notFoundOnly(error: unknown): { data: Record<string, unknown>; aliases: string[] } | undefined {
  if (typeof error !== "object" || error === null || !("errors" in error) || !("data" in error)) return undefined;
  const { errors, data } = error as { errors: unknown; data: unknown };
  if (!Array.isArray(errors) || errors.length === 0 || typeof data !== "object" || data === null) return undefined;
  const aliases: string[] = [];
  for (const e of errors as { type?: unknown; path?: unknown }[]) {
    if (e.type !== "NOT_FOUND" || !Array.isArray(e.path) || e.path.length !== 1) return undefined;
    aliases.push(String(e.path[0]));
  }
  return { data: data as Record<string, unknown>, aliases };
}

/**
 * GitHub's GraphQL primary limit (200 with a `RATE_LIMITED` error) that reached the call: the
 * throttling plugin waits it out for `/graphql` but does not recognise a GHES's `/api/graphql`.
 * Answered as `rate_limited` until the announced reset, so the sync waits instead of falling back.
 */
function rateLimitedAnswer(error: unknown, usage: { calls: number; points: number }): GithubError | undefined {
  if (typeof error !== "object" || error === null || !("errors" in error) || !Array.isArray(error.errors)) return undefined;
  if (!error.errors.some((e: { type?: unknown }) => e?.type === "RATE_LIMITED")) return undefined;
  const headers =
    "headers" in error && typeof error.headers === "object" && error.headers ? (error.headers as Record<string, unknown>) : {};
  const reset = Number(headers["x-ratelimit-reset"]);
  const retryAfterSeconds = Number.isFinite(reset) ? Math.max(1, Math.ceil(reset - Date.now() / 1000) + 1) : 60;
  return new GithubError("rate_limited", `GitHub GraphQL rate limit: retry in ${retryAfterSeconds} s`, {
    retryAfterSeconds,
    calls: usage.calls,
    points: usage.points,
  });
}
