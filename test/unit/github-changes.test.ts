import { describe, expect, it } from "vitest";
import {
  accountIdToLearn,
  auditAction,
  claimChange,
  collaboratorRepoKey,
  identityChange,
  installationCreated,
  installationDeleted,
  installationSuspended,
  memberAdded,
  organizationRenamed,
  repositoryJoined,
  repositoryRemoved,
  repositoryRenamed,
  sender,
} from "../../src/organization/github-changes";
import type { InstallationRow, MemberRow, RepositoryRow } from "../../src/organization/schema";

/** The decisions of GitHub's changes (contract section 9) as tables: facts in, decision out, no storage. */

const installation = (over: Partial<InstallationRow> = {}): InstallationRow => ({
  id: 1,
  login: "Acme",
  homeKey: "acme",
  accountId: null,
  installationId: 41,
  installedAt: 1_000,
  blocked: false,
  plan: "pro",
  subscriptionStatus: "active",
  billedThroughService: true,
  purchasedSeats: 10,
  installed: true,
  suspensionVersion: null,
  ...over,
});

const repo = (over: Partial<RepositoryRow> = {}): RepositoryRow => ({
  repoKey: "api",
  name: "API",
  private: false,
  githubId: 7,
  removed: false,
  visibilityVersion: null,
  ...over,
});

const at = { login: "acme", home: "acme" };

describe("installation_created: the three cases", () => {
  it("the same installation, still installed, changes nothing (the login stays, a rename applied since stays)", () => {
    expect(installationCreated(installation(), at, { kind: "installation_created", installationId: 41, installedAt: 5 })).toEqual(
      {
        kind: "same",
        set: null,
      },
    );
  });

  it("the same installation marked deleted is installed again and unblocked, its login untouched", () => {
    const row = installation({ installed: false, blocked: true, login: "Renamed" });
    expect(installationCreated(row, at, { kind: "installation_created", installationId: 41, installedAt: 5 })).toEqual({
      kind: "same",
      set: { installedAt: 5, installed: true, blocked: false },
    });
  });

  it.each([
    ["installed: a suspension stays", true, { login: "acme", installationId: 42, installedAt: 5, installed: true }],
    ["deleted: it is unblocked", false, { login: "acme", installationId: 42, installedAt: 5, installed: true, blocked: false }],
  ])(
    "a new installation of a known organization, %s; plan and billing stay, the caller's login is its login",
    (_, installed, set) => {
      const row = installation({ installed, blocked: true, login: "Old" });
      expect(installationCreated(row, at, { kind: "installation_created", installationId: 42, installedAt: 5 })).toEqual({
        kind: "reinstalled",
        set,
      });
    },
  );

  it("no installation yet: a free, unblocked organization with no seats, at the caller's login and home", () => {
    const decision = installationCreated(
      undefined,
      { login: "NewCo", home: "newco~3" },
      {
        kind: "installation_created",
        installationId: 9,
        installedAt: 5,
      },
    );
    expect(decision).toEqual({
      kind: "first",
      row: {
        id: 1,
        login: "NewCo",
        homeKey: "newco~3",
        accountId: null,
        installationId: 9,
        installedAt: 5,
        blocked: false,
        plan: "free",
        subscriptionStatus: "none",
        billedThroughService: false,
        purchasedSeats: 0,
        installed: true,
        suspensionVersion: null,
      },
    });
  });
});

const owner = (accountId: number | null, installationId: number | null = null) => ({ accountId, installationId });

describe("which deliveries are this organization's", () => {
  it.each([
    ["no installation: anything applies here", undefined, "acme", owner(5), "installation_deleted", "here"],
    ["same login, case-insensitively (no account id named)", installation(), "ACME", owner(null), "installation_deleted", "here"],
    ["another login: elsewhere", installation(), "other", owner(null), "installation_deleted", "elsewhere"],
    ["another login's installation: taken", installation(), "other", owner(null), "installation_created", "taken"],
    ["same account id under a new login", installation({ accountId: 5 }), "other", owner(5), "installation_deleted", "here"],
    [
      "another account id under the same login",
      installation({ accountId: 5 }),
      "acme",
      owner(6),
      "installation_deleted",
      "elsewhere",
    ],
    ["account unknown here, sent by the installation held", installation(), "acme", owner(5, 41), "member_removed", "here"],
    ["account unknown here, sent by another installation", installation(), "acme", owner(5, 42), "member_removed", "elsewhere"],
    ["account unknown here, no installation named", installation(), "acme", owner(5), "member_removed", "elsewhere"],
    [
      "account unknown here, another installation's creation",
      installation(),
      "acme",
      owner(5, 42),
      "installation_created",
      "taken",
    ],
  ] as const)("%s", (_, row, login, sender, kind, expected) => {
    const change =
      kind === "installation_created"
        ? { kind, installationId: sender.installationId ?? 41, installedAt: 1 }
        : kind === "member_removed"
          ? ({ kind, githubUserId: "1" } as const)
          : ({ kind, installationId: 41 } as const);
    expect(claimChange(row, { login }, sender, change)).toBe(expected);
  });

  it("a rename also matches its from: the organization under its old login receives it", () => {
    const rename = (from: string) => ({ kind: "organization_renamed", from }) as const;
    expect(claimChange(installation(), { login: "NewName" }, owner(null), rename("acme"))).toBe("here");
    expect(claimChange(installation(), { login: "NewName" }, owner(null), rename("x"))).toBe("elsewhere");
    expect(claimChange(installation(), { login: "NewName" }, owner(5, 41), rename("acme"))).toBe("here");
  });

  it("an installation's creation queued before installation ids were carried names its own installation", () => {
    const created = { kind: "installation_created", installationId: 41, installedAt: 1 } as const;
    expect(sender(owner(5), created)).toEqual(owner(5, 41));
    expect(sender(owner(5, 9), created)).toEqual(owner(5, 9));
    expect(sender(owner(5), { kind: "member_removed", githubUserId: "1" })).toEqual(owner(5));
    expect(claimChange(installation(), { login: "acme" }, owner(5), created)).toBe("here");
  });

  it("the account id is learnt once, only from a delivery of the installation the organization holds", () => {
    expect(accountIdToLearn(installation(), owner(5, 41))).toBe(5);
    expect(accountIdToLearn(installation(), owner(5, 42))).toBeNull();
    expect(accountIdToLearn(installation(), owner(5))).toBeNull();
    expect(accountIdToLearn(installation({ accountId: 4 }), owner(5, 41))).toBeNull();
    expect(accountIdToLearn(installation(), owner(null, 41))).toBeNull();
    expect(accountIdToLearn(undefined, owner(5, 41))).toBeNull();
  });
});

describe("identity after a change", () => {
  it.each([
    ["nothing changed", installation(), installation(), { newLogin: null, changed: false, indexes: false }],
    ["renamed", installation(), installation({ login: "NewName" }), { newLogin: "NewName", changed: true, indexes: true }],
    ["account id learnt", installation(), installation({ accountId: 5 }), { newLogin: null, changed: true, indexes: false }],
    ["first installation", undefined, installation({ login: "acme" }), { newLogin: null, changed: true, indexes: true }],
    [
      "installed after a waiting rename",
      undefined,
      installation({ login: "Later" }),
      { newLogin: "Later", changed: true, indexes: true },
    ],
    ["still no installation", undefined, undefined, { newLogin: null, changed: false, indexes: false }],
    // The members' indexes list only installed organizations: they learn both ways.
    ["uninstalled", installation(), installation({ installed: false }), { newLogin: null, changed: false, indexes: true }],
    ["installed again", installation({ installed: false }), installation(), { newLogin: null, changed: false, indexes: true }],
    [
      "registered uninstalled",
      undefined,
      installation({ login: "acme", installed: false }),
      { newLogin: null, changed: true, indexes: false },
    ],
  ])("%s", (_, before, after, expected) => {
    expect(identityChange(before, after, { login: "acme" })).toEqual(expected);
  });
});

describe("installation_deleted: only this installation's deletion uninstalls", () => {
  it.each([
    [installation(), 41, true],
    [installation(), 42, false],
    [undefined, 41, false],
  ])("%#", (row, installationId, expected) => {
    expect(installationDeleted(row, { kind: "installation_deleted", installationId })).toBe(expected);
  });
});

describe("installation suspend / unsuspend: only the installation they name (issue 18)", () => {
  it.each([
    [installation(), 41, true],
    [installation(), 42, false],
    [installation(), undefined, true], // queued before messages carried the id
    [undefined, 41, false],
  ])("%#", (row, installationId, expected) => {
    const set = installationSuspended(row, { kind: "installation_suspended", blocked: true, installationId });
    expect(set !== null).toBe(expected);
  });
});

describe("suspend / unsuspend ordered by GitHub's time (sync off: contract section 17)", () => {
  const T = 1_700_000_000_000;
  it.each([
    ["first with a time: applied, version stored", null, false, T, { blocked: false, suspensionVersion: T }],
    ["newer than stored: applied", T, true, T + 1000, { blocked: true, suspensionVersion: T + 1000 }],
    ["older than stored (unsuspend delivered after a later suspend): nothing", T, true, T - 1000, null],
    ["same second: arrival order", T, true, T, { blocked: true, suspensionVersion: T }],
    ["no time (older message): applied, stored version kept", T, true, undefined, { blocked: true, suspensionVersion: T }],
  ])("%s", (_, stored, blocked, at, expected) => {
    const row = installation({ suspensionVersion: stored });
    const change = { kind: "installation_suspended" as const, blocked, installationId: 41, ...(at === undefined ? {} : { at }) };
    expect(installationSuspended(row, change)).toEqual(expected);
  });
});

describe("repositories: a known repository keeps its stored name", () => {
  it.each([
    [
      "known by id: stored name kept, visibility and id from GitHub",
      repo(),
      { name: "API", private: true, githubId: 7, visibilityVersion: null },
    ],
    ["unknown: GitHub's name", undefined, { name: "api", private: true, githubId: 7, visibilityVersion: null }],
  ])("%s", (_, known, expected) => {
    expect(repositoryJoined(known, { id: 7, name: "api", private: true })).toEqual(expected);
  });

  // The repro: publicized (updated_at 15:21:03) delivered before privatized (15:21:02).
  const T3 = Date.parse("2019-05-15T15:21:03Z");
  const T2 = Date.parse("2019-05-15T15:21:02Z");
  it.each([
    ["older than stored: stored visibility kept", repo({ visibilityVersion: T3 }), T2, { private: false, visibilityVersion: T3 }],
    ["newer than stored: applied", repo({ visibilityVersion: T2 }), T3, { private: true, visibilityVersion: T3 }],
    ["same second: applied (arrival order)", repo({ visibilityVersion: T3 }), T3, { private: true, visibilityVersion: T3 }],
    ["no stored time: applied", repo(), T2, { private: true, visibilityVersion: T2 }],
    [
      "no time (an installation's list): applied, stored time kept",
      repo({ visibilityVersion: T3 }),
      undefined,
      { private: true, visibilityVersion: T3 },
    ],
    ["unknown repository with a time", undefined, T2, { private: true, visibilityVersion: T2 }],
  ])("visibility by GitHub's updated_at: %s", (_, known, updatedAt, expected) => {
    const listed = { id: 7, name: "api", private: true, ...(updatedAt === undefined ? {} : { updatedAt }) };
    expect(repositoryJoined(known, listed)).toMatchObject(expected);
  });

  it("collaborators are keyed by the stored name, folded", () => {
    expect(collaboratorRepoKey(repo({ name: "Stored-Name" }), { name: "late-name" })).toBe("stored-name");
    expect(collaboratorRepoKey(undefined, { name: "Late-Name" })).toBe("late-name");
  });
});

describe("tombstoning: a removed repository stays, marked removed", () => {
  it("a known one is tombstoned under its stored key", () => {
    expect(repositoryRemoved(repo({ repoKey: "stored" }), { id: 7, name: "other" })).toEqual({
      kind: "tombstone",
      repoKey: "stored",
    });
  });

  it("an unknown one is stored as a private tombstone with its GitHub id", () => {
    expect(repositoryRemoved(undefined, { id: 8, name: "Gone" })).toEqual({
      kind: "tombstone-new",
      write: { name: "Gone", private: true, githubId: 8, removed: true },
    });
  });
});

describe("repository renames, stale ones included", () => {
  const renamed = { id: 7, name: "Service", private: false };

  it("known by id under from: moves to the new key, takes the name, D1 follows", () => {
    expect(repositoryRenamed("API", renamed, repo(), undefined)).toEqual({
      kind: "renamed",
      rekey: { fromKey: "api", toKey: "service" },
      write: { name: "Service", private: false, githubId: 7, removed: false },
      pending: { fromKey: "api", toName: "Service" },
    });
  });

  it("stale: the repository with this id is not called from any more (a later rename came first)", () => {
    expect(repositoryRenamed("api", renamed, repo({ repoKey: "later" }), undefined)).toEqual({ kind: "stale" });
  });

  it("known only by the old name (registered by the control plane): moves too, a tombstone stays one", () => {
    const decision = repositoryRenamed("api", renamed, undefined, repo({ githubId: null, removed: true }));
    expect(decision).toMatchObject({ rekey: { fromKey: "api", toKey: "service" }, write: { removed: true } });
  });

  it("unknown: nothing to move, the repository is stored under the new name and D1 follows", () => {
    expect(repositoryRenamed("api", renamed, undefined, undefined)).toEqual({
      kind: "renamed",
      rekey: null,
      write: { name: "Service", private: false, githubId: 7, removed: undefined },
      pending: { fromKey: "api", toName: "Service" },
    });
  });

  it("a change of case only: same key, new name, D1 still follows; the same name again writes no outbox entry", () => {
    expect(repositoryRenamed("api", { ...renamed, name: "Api" }, repo({ name: "api" }), undefined)).toMatchObject({
      rekey: null,
      pending: { fromKey: "api", toName: "Api" },
    });
    expect(repositoryRenamed("api", { ...renamed, name: "api" }, repo({ name: "api" }), undefined)).toMatchObject({
      rekey: null,
      pending: null,
    });
  });
});

describe("member_added: what a redelivered or late one may overwrite", () => {
  const existing: MemberRow = {
    githubUserId: "1002",
    githubLogin: "old-login",
    workEmail: "max@acme.test",
    role: "viewer",
    seat: true,
    isBot: false,
  };
  const change = { kind: "member_added", githubUserId: "1002", githubLogin: "new-login", role: "admin", isBot: true } as const;

  it("a known member keeps role, seat and e-mail (the service's); GitHub's login and account type are current", () => {
    expect(memberAdded(existing, change)).toEqual({
      githubLogin: "new-login",
      workEmail: "max@acme.test",
      role: "viewer",
      seat: true,
      isBot: true,
    });
  });

  it("a new member gets GitHub's role, no seat and no e-mail yet", () => {
    expect(memberAdded(undefined, change)).toEqual({
      githubLogin: "new-login",
      workEmail: null,
      role: "admin",
      seat: false,
      isBot: true,
    });
  });
});

describe("organization_renamed waits under the folded from", () => {
  it("keeps the new login as sent", () => {
    expect(organizationRenamed("Old-Name", "New-Name", 9)).toEqual({ fromKey: "old-name", toLogin: "New-Name", receivedAt: 9 });
  });
});

describe("which audit action a member write produces", () => {
  const member = { seat: false, role: "member" } as const;
  it.each([
    ["a new member", undefined, member, "member.added"],
    ["seat changed", member, { ...member, seat: true }, "member.updated"],
    ["role changed", member, { ...member, role: "admin" }, "member.updated"],
    ["neither changed", member, { ...member }, null],
    ["removed", member, null, "member.removed"],
    ["nobody removed", undefined, null, null],
  ] as const)("%s", (_, before, after, expected) => {
    expect(auditAction(before, after)).toBe(expected);
  });
});
