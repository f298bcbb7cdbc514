import { describe, expect, it } from "vitest";
import { type AnalyticsFacts, decideAnalyticsAccess, REPO_DENIED } from "../../src/rules/analytics-access";
import type { InstallationFacts, MemberState } from "../../src/rules/members";

/**
 * Who may export analytics (contract section 3, src/analytics/access.ts), as a table. The HTTP
 * tests keep one case per check; the order of the checks and the repository rules live here.
 */

const installation = (over: Partial<InstallationFacts> = {}) => ({
  blocked: false,
  plan: "pro" as const,
  subscriptionStatus: "active" as const,
  billedThroughService: true,
  purchasedSeats: 5,
  installedAt: 1_700_000_000_000,
  homeKey: "acme",
  ...over,
});

/** Repositories: `api` public, `infra` private with the caller as collaborator, `billing` private, `old` removed. */
function facts(caller: MemberState | undefined, over: Partial<AnalyticsFacts> = {}): AnalyticsFacts {
  const registered: Record<string, { removed: boolean }> = {
    api: { removed: false },
    infra: { removed: false },
    billing: { removed: false },
    old: { removed: true },
  };
  return {
    installation: installation(),
    caller,
    repository: (key) => registered[key],
    visibleRepoKeys: () => ["api", "infra"],
    removedRepoKeys: () => ["old"],
    ...over,
  };
}

const admin: MemberState = { seat: true, role: "admin" };
const member: MemberState = { seat: true, role: "member" };
const viewer: MemberState = { seat: false, role: "viewer" };

describe("decideAnalyticsAccess: 404 installation, 403 blocked, 403 not Pro, 403 not a member, 403 repository, in that order", () => {
  it.each([
    ["no installation", facts(admin, { installation: undefined }), null, "org_not_found"],
    ["no installation beats not a member", facts(undefined, { installation: undefined }), "nope", "org_not_found"],
    ["blocked", facts(admin, { installation: installation({ blocked: true }) }), null, "installation_blocked"],
    [
      "blocked beats not on Pro",
      facts(admin, { installation: installation({ blocked: true, plan: "team" }) }),
      null,
      "installation_blocked",
    ],
    ["the Team plan", facts(admin, { installation: installation({ plan: "team" }) }), null, "plan_required"],
    ["the free plan", facts(admin, { installation: installation({ plan: "free" }) }), null, "plan_required"],
    ["not on Pro beats not a member", facts(undefined, { installation: installation({ plan: "free" }) }), null, "plan_required"],
    ["not a member", facts(undefined), null, "org_access_denied"],
    ["not a member beats the repository check", facts(undefined), "nope", "org_access_denied"],
    [
      "Pro without an active subscription still exports",
      facts(member, { installation: installation({ subscriptionStatus: "canceled" }) }),
      null,
      null,
    ],
    ["a member, every repository", facts(member), null, null],
    ["a viewer, every repository", facts(viewer), null, null],
    ["a member, a public repository", facts(member), "api", null],
    ["a member, a private repository listing them as collaborator", facts(member), "infra", null],
    ["a member, a private repository not listing them", facts(member), "billing", "repo_access_denied"],
    ["a member, a repository the organization does not have", facts(member), "nope", "repo_access_denied"],
    ["a member, a removed repository", facts(member), "old", "repo_access_denied"],
    ["an admin, a private repository", facts(admin), "billing", null],
    ["an admin, a removed repository", facts(admin), "old", "repo_access_denied"],
    ["an admin, an unregistered repository (events decide)", facts(admin), "nope", null],
    ["names match case-insensitively", facts(member), "InFra", null],
  ] as const)("%s (repo %s) → %s", (_name, f, repo, expected) => {
    const decision = decideAnalyticsAccess(f, repo === null ? null : [repo]);
    expect(decision.ok ? null : decision.code).toBe(expected);
  });

  it("the repository refusal does not tell a hidden repository from a missing one", () => {
    for (const repo of ["billing", "nope", "old"]) {
      expect(decideAnalyticsAccess(facts(member), [repo])).toEqual({
        ok: false,
        code: "repo_access_denied",
        message: REPO_DENIED,
        details: [],
      });
    }
  });

  it("an admin reads every repository except removed ones; a member the visible ones", () => {
    expect(decideAnalyticsAccess(facts(admin), null)).toEqual({
      ok: true,
      value: {
        homeKey: "acme",
        installedAt: 1_700_000_000_000,
        accessibleRepoKeys: null,
        reposMustHaveEvents: [],
        excludedRepoKeys: ["old"],
      },
    });
    expect(decideAnalyticsAccess(facts(member), null)).toEqual({
      ok: true,
      value: {
        homeKey: "acme",
        installedAt: 1_700_000_000_000,
        accessibleRepoKeys: ["api", "infra"],
        reposMustHaveEvents: [],
        excludedRepoKeys: [],
      },
    });
  });

  it("only an admin's repositories that are not registered must be known from events", () => {
    const must = (caller: MemberState, repos: string[]) => {
      const d = decideAnalyticsAccess(facts(caller), repos);
      return d.ok ? d.value.reposMustHaveEvents : d.code;
    };
    expect(must(admin, ["Nope"])).toEqual(["nope"]);
    expect(must(admin, ["api"])).toEqual([]);
    expect(must(member, ["api"])).toEqual([]);
    expect(must(member, ["nope"])).toBe("repo_access_denied");
    expect(must(admin, ["api", "Nope", "billing", "other", "NOPE"])).toEqual(["nope", "other"]);
  });

  // Contract section 21: each name of a list is judged as a single name would be.
  it.each([
    ["a member, two visible repositories", facts(member), ["api", "InFra"], null],
    ["a member, one hidden repository among visible ones", facts(member), ["api", "billing", "infra"], "repo_access_denied"],
    ["a member, one missing repository among visible ones", facts(member), ["api", "nope"], "repo_access_denied"],
    ["an admin, one removed repository among others", facts(admin), ["api", "old"], "repo_access_denied"],
    ["an admin, private and unregistered repositories", facts(admin), ["billing", "nope"], null],
    ["not a member beats a list's repository check", facts(undefined), ["api", "nope"], "org_access_denied"],
  ] as const)("%s (repo %s) → %s", (_name, f, repos, expected) => {
    const decision = decideAnalyticsAccess(f, repos);
    expect(decision.ok ? null : decision.code).toBe(expected);
  });

  it("the messages are the contract's", () => {
    const message = (f: AnalyticsFacts) => {
      const d = decideAnalyticsAccess(f, null);
      return d.ok ? null : d.message;
    };
    expect(message(facts(admin, { installation: undefined }))).toBe("The organization cannot be resolved to an installation.");
    expect(message(facts(admin, { installation: installation({ blocked: true }) }))).toBe(
      "The installation of this organization is blocked.",
    );
    expect(message(facts(admin, { installation: installation({ plan: "team" }) }))).toBe(
      "The analytics export requires the organization to be on the Pro plan.",
    );
    expect(message(facts(undefined))).toBe("You do not have access to this organization.");
  });
});
