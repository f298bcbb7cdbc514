import { repoKey } from "../lib/names";
import type { InstallationFacts, MemberState, Refusal } from "./members";

/** What the analytics export may read of an organization. */
export interface AnalyticsAccess {
  /** The organization's home key: the `org_key` of its rows in D1 (`directory/resolve.ts`). */
  homeKey: string;
  installedAt: number;
  /** Lower-cased repository names the caller may read; null for every repository (an admin). */
  accessibleRepoKeys: string[] | null;
  /**
   * The requested repositories (lower-cased) that are not registered, asked for by an admin: each
   * exists only if reviewer events know it, which the read checks in D1 (403 otherwise). Usually empty.
   */
  reposMustHaveEvents: string[];
  /** Lower-cased names of repositories that left the installation: never exported, whoever asks. */
  excludedRepoKeys: string[];
}

export interface AnalyticsFacts {
  installation: (InstallationFacts & { installedAt: number; homeKey: string }) | undefined;
  caller: MemberState | undefined;
  /** A registered repository (lower-cased name), with whether it left the installation. */
  repository: (repoKey: string) => { removed: boolean } | undefined;
  /** Lower-cased names of the repositories a non-admin caller may read. */
  visibleRepoKeys: () => string[];
  /** Lower-cased names of the repositories that left the installation (GitHub). */
  removedRepoKeys: () => string[];
}

/**
 * Who may export analytics (contract section 3), in the contract's order: installation exists
 * (404), not blocked, Pro plan, caller is a member, caller can access the requested repository
 * (403s). Admins see every repository; other members public ones and private ones that list them
 * as collaborators. A repository the organization does not have is 403 for every caller; one
 * known only from reviewer events counts as private until it is registered. A repository that
 * left the installation (contract section 9) is 403 and its rows are never exported. A list of
 * repositories (contract section 21) is judged name by name: one refused name refuses the request.
 */
export function decideAnalyticsAccess(
  facts: AnalyticsFacts,
  repoNames: readonly string[] | null,
): { ok: true; value: AnalyticsAccess } | Refusal {
  const { installation, caller } = facts;
  const refuse = (code: Refusal["code"], message: string): Refusal => ({ ok: false, code, message, details: [] });
  if (!installation) return refuse("org_not_found", "The organization cannot be resolved to an installation.");
  if (installation.blocked) return refuse("installation_blocked", "The installation of this organization is blocked.");
  if (installation.plan !== "pro")
    return refuse("plan_required", "The analytics export requires the organization to be on the Pro plan.");
  if (!caller) return refuse("org_access_denied", "You do not have access to this organization.");
  const keys = repoNames === null ? [] : [...new Set(repoNames.map(repoKey))];
  const registered = keys.map((key) => ({ key, registered: facts.repository(key) }));
  if (registered.some((r) => r.registered?.removed)) return refuse("repo_access_denied", REPO_DENIED);
  const accessible = caller.role === "admin" ? null : facts.visibleRepoKeys();
  if (accessible !== null && keys.some((key) => !accessible.includes(key))) {
    return refuse("repo_access_denied", REPO_DENIED);
  }
  return {
    ok: true,
    value: {
      homeKey: installation.homeKey,
      installedAt: installation.installedAt,
      accessibleRepoKeys: accessible,
      reposMustHaveEvents: accessible === null ? registered.filter((r) => r.registered === undefined).map((r) => r.key) : [],
      excludedRepoKeys: accessible === null ? facts.removedRepoKeys() : [],
    },
  };
}

export const REPO_DENIED = "You do not have access to this repository, or it does not exist.";

/** The access with the analytics shard its object recorded (`directory/shards.ts`; null until told). */
export type PlacedAccess = AnalyticsAccess & { shard: string | null };
