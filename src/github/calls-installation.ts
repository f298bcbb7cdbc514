import { z } from "zod";
import { Account, account, allPages, type GithubAccount, type GithubResult, parse } from "./calls";
import { type GithubInstallation, withInstallation } from "./client";

/** The installation and its repositories (contract section 17): what a sync reads first. */

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
