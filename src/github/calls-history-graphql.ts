import { z } from "zod";
import { type GithubMergedPull, type GithubResult, parse } from "./calls";
import { type GithubInstallation, withInstallation } from "./client";
import { GithubError } from "./errors";

/** The history of merged pull requests through GraphQL (contract section 17): the default, 50 repositories a query. */

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
