import { DurableObject } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import type { OrgAddress } from "../directory/identity";
import { claimOf } from "../directory/identity";
import { type DurableResult, ok } from "../lib/durable-call";
import { foldName } from "../lib/names";
import { UntilWrite } from "../lib/until-write";
import { type AnalyticsAccess, decideAnalyticsAccess } from "../rules/analytics-access";
import { decideMemberChanges, isChange, type MemberChange, memberAccess } from "../rules/members";
import type { OrganizationChange } from "../schemas/github-changes";
import type { Member, MemberInput } from "../schemas/member";
import type { OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import type { SyncStatus, SyncTrigger } from "../schemas/sync";
import type * as A from "./answers";
import { applyDelivery } from "./apply-change";
import { syncApplies } from "./github-sync";
import { membershipVersion, runRelogin, scheduleRelogin, tellIndex, tellMembers, tellMembership } from "./member-index";
import { removeMember, writeMember, writeMemberChanges } from "./member-writes";
import {
  orgNotFound,
  toAuditRows,
  toDirectoryIdentity,
  toMember,
  toMemberRows,
  toOrganization,
  toOrganizationEntry,
  toReplayedResults,
  toResult,
  unreachable,
} from "./present";
import { decideRegistration } from "./registration";
import * as schema from "./schema";
import { auditPage } from "./store/audit-log";
import type { Db } from "./store/db";
import { getInstallation, putInstallation } from "./store/installation";
import { operationApplied } from "./store/ledgers";
import * as members from "./store/members";
import * as repos from "./store/repositories";
import { beginSync, recordSync, type SyncPage, type SyncUpdate, syncStatus, toSyncRun, writeSyncPage } from "./sync-writes";

/**
 * One object per organization, named by its home key (`directory/resolve.ts`): its installation,
 * plan, seats, members and repositories. A call naming the organization by login is answered only
 * for its current login, so an old login or a stale directory entry never reaches another
 * organization's data. Each method loads facts (`store/`), asks a rule (`members/rules.ts`,
 * `analytics/access.ts`, `identity.ts`, `registration.ts`, `github-changes.ts`) and writes the
 * outcome in one synchronous transaction, so concurrent writes are serialised and never half applied.
 */
export class OrganizationObject extends DurableObject<Env> {
  readonly #db: Db;
  /** The export's access answers (asked on every export request), until the next write. */
  readonly #access: UntilWrite<DurableResult<AnalyticsAccess>>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage, { schema });
    // Weighed by the names an answer holds: a member of an organization with thousands of
    // repositories holds a list of them per entry (at most about 1 MB in all).
    this.#access = new UntilWrite(ctx.storage.sql, {
      budget: 20_000,
      weigh: (answer) =>
        1 + (answer.ok ? (answer.value.accessibleRepoKeys?.length ?? 0) + answer.value.excludedRepoKeys.length : 0),
    });
    ctx.blockConcurrencyWhile(async () => {
      await migrate(this.#db, migrations);
    });
  }

  /** Control plane: registers or updates the installation, plan and subscription (`registration.ts`). */
  putOrganization(at: OrgAddress, input: OrganizationInput, create: boolean): A.PutOrganizationResult {
    const decision = decideRegistration(getInstallation(this.#db), at, input, create);
    if (decision.kind !== "store") return decision;
    putInstallation(this.#db, decision.row);
    return { kind: "stored", organization: toOrganization(decision.row), directory: this.#directoryIdentity(decision.row) };
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(at: OrgAddress, name: string, input: RepositoryInput, adopt: boolean): DurableResult<Repository> {
    if (!this.#writable(at, adopt)) return orgNotFound();
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      repos.putRepository(this.#db, { name, private: input.private, githubId: null });
      repos.replaceCollaborators(this.#db, foldName(name), collaborators);
    });
    return ok({ org: at.login, name, private: input.private, collaborators });
  }

  /**
   * Member sync from the source of truth (the control plane, or GitHub): no guards, no seat
   * capacity check; written with its audit entry (`member-writes.ts`). Then the member's
   * organizations index (their `UserObject`) learns the membership, after the commit: if that
   * fails the call fails, and a retry (the write is idempotent) tells it again. `adopt`: see `#writable`.
   */
  async putMember(
    at: OrgAddress,
    githubUserId: string,
    input: MemberInput,
    origin: A.ChangeOrigin,
    adopt: boolean,
  ): Promise<DurableResult<Member>> {
    if (!this.#writable(at, adopt)) return orgNotFound();
    const { row, version } = this.ctx.storage.transactionSync(() => writeMember(this.#db, githubUserId, input, origin));
    await tellIndex(this.env, getInstallation(this.#db), at, githubUserId, true, version);
    return ok(toMember(row));
  }

  /** The person left the GitHub organization. Idempotent; the member's index is told after the commit. */
  async deleteMember(at: OrgAddress, githubUserId: string, origin: A.ChangeOrigin, adopt: boolean): Promise<DurableResult<null>> {
    if (!this.#writable(at, adopt)) return orgNotFound();
    const version = this.ctx.storage.transactionSync(() => removeMember(this.#db, githubUserId, origin));
    await tellIndex(this.env, getInstallation(this.#db), at, githubUserId, false, version);
    return ok(null);
  }

  /**
   * A control-plane write for `at.login` belongs here when the installation is that login's, or
   * with none yet when the caller checked the directory (`adopt`: members may come first).
   */
  #writable(at: OrgAddress, adopt: boolean): boolean {
    const claim = claimOf(getInstallation(this.#db), [at.login]);
    return claim === "own" || (claim === "absent" && adopt);
  }

  /**
   * For `GET /api/v1/organizations`: whether the user is a member (the authority the user's index
   * defers to), and their entry when the organization is also installed. Asked by home key (the
   * index's), so no login is checked; the entry carries the current login.
   */
  membershipOf(githubUserId: string): A.MembershipAnswer {
    const installation = getInstallation(this.#db);
    const member = members.getMember(this.#db, githubUserId);
    const version = membershipVersion(this.#db);
    if (!member) return { member: false, version, entry: null };
    return { member: true, version, entry: installation?.installed ? toOrganizationEntry(installation, member) : null };
  }

  /**
   * A page of members for any member (contract section 8) after the cursor's keyset position
   * (`store/members.ts`): a walk returns every member present throughout it exactly once.
   * One read, so the page and the seats agree.
   */
  listMembers(login: string, callerUserId: string, filters: members.MemberFilters): DurableResult<A.MemberRows> {
    const installation = this.#installation(login);
    const refused = memberAccess(installation, members.getMember(this.#db, callerUserId), "read");
    if (refused || !installation) return refused ?? unreachable();
    const rows = members.memberPageQuery(this.#db, filters).all();
    return ok(toMemberRows(rows, filters.limit, { purchased: installation.purchasedSeats, used: members.seatsUsed(this.#db) }));
  }

  /** The audit log for admins of the organization, newest first, below the cursor's id. */
  readAuditLog(
    login: string,
    callerUserId: string,
    query: { githubUserId?: string; before?: number; limit: number },
  ): DurableResult<A.AuditRows> {
    const refused = memberAccess(this.#installation(login), members.getMember(this.#db, callerUserId), "admin");
    if (refused) return refused;
    return ok(toAuditRows(auditPage(this.#db, Date.now(), query), query.limit));
  }

  /**
   * GitHub webhook consumer: applies one change (contract section 9, `apply-change.ts`) in one
   * transaction with the delivery's ledger entry, so a delivery applied twice changes nothing the
   * second time. `at` is where the consumer resolved the delivery (by account id, else by login)
   * and the login it carries; the object applies it only if it is that organization's
   * (`claimChange`), and learns the account id on the way. See `GithubChangeResult` for the answer.
   */
  async applyGithubChange(
    deliveryKey: string,
    at: OrgAddress,
    accountId: number | null,
    change: OrganizationChange,
  ): Promise<A.GithubChangeResult> {
    const db = this.#db;
    const outcome = this.ctx.storage.transactionSync(() => applyDelivery(db, deliveryKey, at, accountId, change));
    if (outcome === "taken" || outcome === "elsewhere") return { kind: outcome };
    if (outcome !== "applied") await scheduleRelogin(this.ctx.storage, db);
    // The member's organizations index learns the current membership after the commit, also when
    // a retry finds the delivery already applied (the first attempt may have failed right here).
    if (change.kind === "member_added" || change.kind === "member_removed")
      await tellMembership(this.env, db, at, change.githubUserId);
    const row = getInstallation(db);
    return {
      kind: "applied",
      applied: outcome !== "seen",
      renames: repos.listPendingRenames(db),
      // A retry ("seen") cannot know whether the first attempt reached D1: it writes the directory again.
      directory: row && outcome !== "applied" ? this.#directoryIdentity(row) : null,
    };
  }

  /**
   * The current name of a repository known by GitHub id (a pull request follows its repository's
   * renames), when this object is the organization the delivery names (`claimOf`; `here` false
   * otherwise). An organization with no installation yet keeps its pull requests too.
   */
  repositoryName(login: string, accountId: number | null, githubId: number): { here: boolean; name: string | null } {
    if (claimOf(getInstallation(this.#db), [login], accountId) === "other") return { here: false, name: null };
    return { here: true, name: repos.repositoryByGithubId(this.#db, githubId)?.name ?? null };
  }

  /**
   * Whether this object is an organization's home: an installation was registered here (installed
   * or not). The webhook consumer moves the D1 rows stored under a login's folded key to the home of
   * the organization that now holds the login only when that key is no other organization's home.
   */
  isHome(): boolean {
    return getInstallation(this.#db) !== undefined;
  }

  /** The webhook consumer moved a rename's D1 rows. */
  renameFollowed(fromKey: string): void {
    repos.deletePendingRename(this.#db, fromKey);
  }

  /** Tells the members' organizations indexes a new login, a page per run (`member-index.ts`). */
  override async alarm(): Promise<void> {
    await runRelogin(this.env, this.ctx.storage, this.#db, getInstallation(this.#db));
  }

  /**
   * Installation sync (contract section 17, `sync-writes.ts`): starts one unless one runs (the
   * compare-and-set), or answers the one this trigger started. `login` null: the caller resolved this
   * home itself (the webhook consumer); else it must be the current login.
   */
  beginSync(login: string | null, trigger: { kind: SyncTrigger; key: string }): DurableResult<A.SyncBegin> {
    if (login !== null && !this.#installation(login)) return orgNotFound();
    const d = this.ctx.storage.transactionSync(() => beginSync(this.#db, trigger, Date.now()));
    if (d.kind === "not_installed") return ok(d);
    if (d.kind === "in_progress") return ok({ kind: d.kind, run: toSyncRun(d.run) });
    const { homeKey: home } = getInstallation(this.#db) as schema.InstallationRow;
    const { installationId, instanceCreated: created } = d.run;
    return ok({ kind: "started", run: toSyncRun(d.run), home, installationId, created });
  }

  /** A sync's progress record: its Workflow instance exists, a step's progress, a failure, the end. */
  recordSync(syncId: number, update: SyncUpdate): void {
    this.ctx.storage.transactionSync(() => recordSync(this.#db, syncId, update, Date.now()));
  }

  /** A page of what GitHub listed and the step's progress, in one transaction; then the members' indexes learn it. */
  async writeSyncPage(installationId: number, syncId: number, page: SyncPage, progress: SyncUpdate): Promise<A.SyncPageAnswer> {
    const db = this.#db;
    const written = this.ctx.storage.transactionSync(() => {
      if (!syncApplies(getInstallation(db), installationId)) return null;
      recordSync(db, syncId, progress, Date.now());
      return writeSyncPage(db, page, { source: "github", correlationId: `sync-${syncId}` });
    });
    const installation = getInstallation(db);
    if (!written || !installation) return { kind: "stale" };
    await tellMembers(this.env, installation, written.told);
    return { kind: "written", login: installation.login, repositories: written.repositories };
  }

  /** `GET .../sync`: the running sync and the last finished one. */
  readSync(login: string): DurableResult<SyncStatus> {
    return this.#installation(login) ? ok(syncStatus(this.#db)) : orgNotFound();
  }

  /** Whether and what the caller may export (`analytics/access.ts`). */
  analyticsAccess(login: string, callerUserId: string, repoName: string | null): DurableResult<AnalyticsAccess> {
    // The decision folds both names and its answer repeats neither: one entry whatever their case.
    const key = JSON.stringify([foldName(login), callerUserId, repoName === null ? null : foldName(repoName)]);
    return this.#access.get(key, () =>
      decideAnalyticsAccess(
        {
          installation: this.#installation(login),
          caller: members.getMember(this.#db, callerUserId),
          repository: (repoKey) => repos.repositoryByKey(this.#db, repoKey),
          visibleRepoKeys: () => repos.reposVisibleTo(this.#db, callerUserId),
          removedRepoKeys: () => repos.removedRepoKeys(this.#db),
        },
        repoName,
      ),
    );
  }

  /** Reads one member; any member of the organization may read any member. */
  readMember(login: string, callerUserId: string, githubUserId: string): DurableResult<Member> {
    const refused = memberAccess(this.#installation(login), members.getMember(this.#db, callerUserId), "read");
    if (refused) return refused;
    const target = members.getMember(this.#db, githubUserId);
    if (!target) return { ok: false, code: "member_not_found", message: "No member with this githubUserId in the organization." };
    return ok(toMember(target));
  }

  /**
   * Applies a list of guarded changes (`members/rules.ts`) atomically, audited (`member-writes.ts`).
   * `pathPrefix` names the list in `details` (`changes` for a batch; none for a single PATCH).
   * `operationId` identifies the HTTP request: a retry that finds it already applied is answered
   * "desired equals current" (changed false), not a guard mismatch against its own earlier write.
   */
  updateMembers(
    login: string,
    callerUserId: string,
    changes: MemberChange[],
    operationId: string,
    pathPrefix: string | null,
    correlationId: string,
  ): DurableResult<A.MemberChangesResult> {
    const db = this.#db;
    return this.ctx.storage.transactionSync(() => {
      const installation = this.#installation(login);
      const caller = members.getMember(db, callerUserId);
      const refused = memberAccess(installation, caller, "write");
      if (refused || !installation || !caller) return refused ?? unreachable();
      const facts = members.changeFacts(db, installation.purchasedSeats);
      if (operationApplied(db, operationId)) {
        const states = changes.map((c) => facts.member(c.githubUserId)).filter((m) => m !== undefined);
        const available = Math.max(0, facts.purchasedSeats - facts.seatsUsed);
        return ok({ results: toReplayedResults(states, available), availableSeats: available });
      }
      const decision = decideMemberChanges(facts, changes, (i, field) =>
        pathPrefix === null ? field : `${pathPrefix}.${i}.${field}`,
      );
      if (!decision.ok) return decision;
      const actor = { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin };
      writeMemberChanges(db, decision.updates.filter(isChange), { operationId, correlationId, actor }, Date.now());
      const { updates, availableSeats } = decision;
      return ok({ results: updates.map((u) => toResult(u, availableSeats)), availableSeats });
    });
  }

  /**
   * The installation when it answers for `login`: installed (GitHub did not delete it) and `login`
   * is its current login, case-insensitively. Otherwise the organization answers 404: an old login
   * after a rename, or a directory entry gone stale, never reaches this organization's data.
   */
  #installation(login: string): schema.InstallationRow | undefined {
    const row = getInstallation(this.#db);
    return row?.installed && foldName(row.login) === foldName(login) ? row : undefined;
  }

  #directoryIdentity(row: schema.InstallationRow): A.DirectoryIdentity {
    return toDirectoryIdentity(row, membershipVersion(this.#db));
  }
}
