import { z } from "zod";
import { Account, account, allPages, type GithubAccount, type GithubResult, parse } from "./calls";
import { type GithubInstallation, withInstallation } from "./client";

/** The organization's members and a user's account (contract section 17). */

const Membership = z.object({
  state: z.string(),
  role: z.string(),
  user: Account.nullable(),
});

export interface GithubMember extends GithubAccount {
  /** `admin` for GitHub's organization owners, else `member` (contract section 9). */
  role: "admin" | "member";
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
