import { describe, expect, it } from "vitest";
import {
  decideSyncStart,
  membersLeaving,
  repositoriesLeaving,
  stepProgress,
  syncApplies,
  syncedMember,
} from "../../src/organization/github-sync";
import type { InstallationRow, MemberRow, RepositoryRow, SyncRunRow } from "../../src/organization/schema";
import type { SyncSteps } from "../../src/schemas/sync";
import { stallMs } from "../../src/sync/start";

/** The decisions of an installation sync (contract section 17) as tables: facts in, decision out, no storage. */

const installation = (over: Partial<InstallationRow> = {}): InstallationRow => ({
  id: 1,
  login: "Acme",
  homeKey: "acme",
  accountId: 7,
  installationId: 41,
  installedAt: 1_000,
  blocked: false,
  plan: "free",
  subscriptionStatus: "none",
  billedThroughService: false,
  purchasedSeats: 0,
  installed: true,
  suspensionVersion: null,
  ...over,
});

const pending = { state: "pending", count: 0 } as const;
const steps: SyncSteps = { repositories: pending, members: pending, collaborators: pending, pullRequests: pending };
const run = (over: Partial<SyncRunRow> = {}): SyncRunRow => ({
  id: 3,
  trigger: "api",
  triggerKey: "k-3",
  installationId: 41,
  state: "complete",
  instanceCreated: true,
  startedAt: 1,
  finishedAt: 2,
  progressAt: 2,
  steps,
  lastError: null,
  ...over,
});
const trigger = { kind: "installation" as const, key: "delivery:0" };

describe("decideSyncStart: one sync at a time, a retried trigger finds its own", () => {
  it.each([
    ["no installation", undefined, undefined, undefined, "not_installed"],
    ["uninstalled", installation({ installed: false }), undefined, undefined, "not_installed"],
    [
      "the trigger's own run, even finished",
      installation(),
      run({ state: "running" }),
      run({ triggerKey: trigger.key }),
      "existing",
    ],
    ["another still running", installation(), run({ state: "running" }), undefined, "in_progress"],
    ["the last one finished", installation(), run({ state: "failed" }), undefined, "start"],
    ["the first", installation(), undefined, undefined, "start"],
  ] as const)("%s → %s", (_, inst, latest, byTrigger, kind) => {
    expect(decideSyncStart(inst, latest, byTrigger, trigger, 5).kind).toBe(kind);
  });

  it("a new run is numbered after the last, running, not yet created, every step pending", () => {
    const d = decideSyncStart(installation(), run({ id: 3 }), undefined, trigger, 5);
    expect(d).toEqual({
      kind: "start",
      run: run({
        id: 4,
        trigger: "installation",
        triggerKey: trigger.key,
        state: "running",
        instanceCreated: false,
        startedAt: 5,
        finishedAt: null,
        progressAt: 5,
      }),
    });
  });
});

describe("syncApplies: only while the installation read is the organization's current one", () => {
  it.each([
    [installation(), 41, true],
    [installation({ installationId: 42 }), 41, false],
    [installation({ installed: false }), 41, false],
    [undefined, 41, false],
  ] as const)("%#", (inst, id, expected) => expect(syncApplies(inst, id)).toBe(expected));
});

describe("stepProgress: a step done stays done", () => {
  it.each([
    ["pending → running", "pending", "running", 5, { state: "running", count: 5 }],
    ["running → done", "running", "done", 9, { state: "done", count: 9 }],
    ["done, a retried earlier page", "done", "running", 3, { state: "done", count: 9 }],
    ["done, written again", "done", "done", 9, { state: "done", count: 9 }],
  ] as const)("%s", (_, from, state, count, expected) => {
    const before = { ...steps, members: { state: from, count: from === "pending" ? 0 : 9 } };
    expect(stepProgress(before, "members", state, count).members).toEqual(expected);
  });
});

const member = (over: Partial<MemberRow> = {}): MemberRow => ({
  githubUserId: "5",
  githubLogin: "old",
  workEmail: "a@example.com",
  role: "member",
  seat: true,
  isBot: false,
  ...over,
});

describe("syncedMember: GitHub's role and account, the service's seat and e-mail", () => {
  const listed = { githubUserId: "5", githubLogin: "new", role: "admin" as const, isBot: false };
  it.each([
    ["new: GitHub's role, no seat, no e-mail", undefined, listed, { role: "admin", seat: false, workEmail: null }],
    [
      "known: keeps seat and e-mail, takes GitHub's role and login",
      member(),
      listed,
      { role: "admin", seat: true, githubLogin: "new" },
    ],
    ["known admin GitHub demoted", member({ role: "admin" }), { ...listed, role: "member" as const }, { role: "member" }],
    [
      "a viewer GitHub lists as member stays a viewer",
      member({ role: "viewer" }),
      { ...listed, role: "member" as const },
      { role: "viewer" },
    ],
    ["a viewer GitHub made admin is admin", member({ role: "viewer" }), listed, { role: "admin" }],
    ["a bot by GitHub's type", undefined, { ...listed, role: "member" as const, isBot: true }, { isBot: true }],
  ] as const)("%s", (_, existing, github, expected) => {
    expect(syncedMember(existing, github)).toMatchObject(expected);
  });
});

const repo = (over: Partial<RepositoryRow>): RepositoryRow => ({
  repoKey: "api",
  name: "api",
  private: false,
  githubId: 1,
  removed: false,
  visibilityVersion: null,
  ...over,
});

describe("leaving: GitHub is the source of truth", () => {
  it("members not listed leave", () => {
    expect(membersLeaving(["1", "2", "3"], new Set(["2"]))).toEqual(["1", "3"]);
  });
  it.each([
    [
      "listed by id (renamed at GitHub, name not followed yet)",
      repo({ repoKey: "old", name: "old" }),
      [{ id: 1, name: "new" }],
      [],
    ],
    ["listed by name (registered by the control plane)", repo({ githubId: null }), [{ id: 9, name: "API" }], []],
    ["not listed", repo({}), [{ id: 2, name: "web" }], ["api"]],
    ["already removed", repo({ removed: true }), [], []],
  ] as const)("repositories: %s", (_, stored, listed, expected) => {
    expect(repositoriesLeaving([stored], listed)).toEqual(expected);
  });
});

describe("SYNC_STALL_SECONDS: how long a running sync may report nothing before a trigger nudges it", () => {
  it.each([
    [undefined, 1_800_000],
    ["", 1_800_000],
    [" 600 ", 600_000],
    ["0", 0],
    ["999999", 999_999_000],
  ])("%j → %d ms", (value, ms) => {
    expect(stallMs({ SYNC_STALL_SECONDS: value })).toBe(ms);
  });

  it.each([["-1"], ["1.5"], ["30m"], ["1000000"]])("%j is refused, naming the setting", (value) => {
    expect(() => stallMs({ SYNC_STALL_SECONDS: value })).toThrow("SYNC_STALL_SECONDS");
  });
});
