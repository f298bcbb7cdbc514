import { z } from "zod";
import { Account, account, type GithubMergedPull, type GithubResult, parse } from "./calls";
import { type GithubInstallation, withInstallation } from "./client";

/** The history of merged pull requests through REST (contract section 17): the fallback when GraphQL fails. */

const PullListed = z.object({
  number: z.number().int(),
  user: Account.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  merged_at: z.string().nullable(),
});
const PullCounts = z.object({ additions: z.number().int(), deletions: z.number().int() });

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
