import { DurableObject } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import { type AnalyticsAccess, decideAnalyticsAccess } from "../analytics/access";
import type { OrgAddress } from "../durable/directory";
import { claimOf } from "../durable/identity";
import { UntilWrite } from "../durable/until-write";
import { type DurableResult, ok } from "../lib/durable-call";
import { foldName } from "../lib/names";
import { decideMemberChanges, isChange, type MemberChange, memberAccess } from "../members/rules";
import type { Member, MemberInput } from "../schemas/member";
import type { OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import type { OrganizationChange } from "../webhooks/changes";
import type * as A from "./answers";
import { applyChange } from "./apply-change";
import { accountIdToLearn, claimChange, identityChange } from "./github-changes";
import { membershipVersion, runRelogin, scheduleRelogin, startRelogin, tellIndex, tickMembershipClock } from "./member-index";
import { removeMember, writeMember } from "./member-sync";
import { toAuditEntry, toDirectoryIdentity, toMember, toOrganization, toOrganizationEntry, toResult } from "./present";
import * as schema from "./schema";
import { appendAudit, auditPage } from "./store/audit-log";
import type { Db } from "./store/db";
import { getInstallation, putInstallation, updateInstallation } from "./store/installation";
import { deliveryApplied, operationApplied, rememberDelivery, rememberOperation } from "./store/ledgers";
import * as members from "./store/members";
import * as repos from "./store/repositories";

const notHere = <T>(): DurableResult<T> => ({
  ok: false,
  code: "org_not_found",
  message: "The organization cannot be resolved to an installation.",
});

/** Unreachable: memberAccess refuses a missing installation. */
const fail = (): DurableResult<never> => ({ ok: false, code: "internal_error", message: "An unexpected error occurred." });

/**
 * One object per organization, named by its home key (the lower-cased login it was installed
 * under, which survives renames: `durable/directory.ts`). It owns the organization's installation,
 * plan, subscription and seats, its members and its repositories with their access lists. Every
 * call that names the organization by login passes that login, and the object answers only for
 * its current login (else "organization not found"), so an old login or a stale directory entry
 * never reaches another organization's data. Each method loads facts (`store/`), asks the rules
 * (`members/rules.ts`, `analytics/access.ts`, `identity.ts`, `github-changes.ts`) and writes their
 * outcome in one synchronous transaction, so a member sync and a PATCH of the same organization are
 * serialised and never half applied. Only the public methods are reachable over RPC.
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

  /**
   * Control plane: registers or updates the installation, plan and subscription. The installation
   * this object holds is its own whatever login the call names: billing and subscription change,
   * the login does not (only GitHub's renames change it; a call naming an old login, or a new one
   * not applied yet, must neither move it nor copy the organization). An installation registered
   * for another login is `taken` (left alone); with none, the organization is created only when
   * `create` says the caller checked the directory.
   */
  putOrganization(at: OrgAddress, input: OrganizationInput, create: boolean): A.PutOrganizationResult {
    const existing = getInstallation(this.#db);
    const same = existing !== undefined && existing.installationId === input.installationId;
    const claim = same ? "own" : claimOf(existing, [at.login]);
    if (claim === "other") return { kind: "taken" };
    if (claim === "absent" && !create) return { kind: "absent" };
    const row: schema.InstallationRow = {
      id: 1,
      login: same ? existing.login : at.login,
      homeKey: existing?.homeKey ?? at.home,
      accountId: existing?.accountId ?? null,
      installationId: input.installationId,
      installedAt: input.installedAt,
      blocked: input.blocked,
      plan: input.plan,
      subscriptionStatus: input.subscription.status,
      billedThroughService: input.subscription.billedThroughService,
      purchasedSeats: input.subscription.purchasedSeats,
      installed: true,
    };
    putInstallation(this.#db, row);
    return { kind: "stored", organization: toOrganization(row), directory: this.#directoryIdentity(row) };
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(at: OrgAddress, name: string, input: RepositoryInput, adopt: boolean): DurableResult<Repository> {
    if (!this.#writable(at, adopt)) return notHere();
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      repos.putRepository(this.#db, { name, private: input.private, githubId: null });
      repos.replaceCollaborators(this.#db, foldName(name), collaborators);
    });
    return ok({ org: at.login, name, private: input.private, collaborators });
  }

  /**
   * Member sync from the source of truth (the control plane, or GitHub): no guards, no seat
   * capacity check; written with its audit entry (`member-sync.ts`). Then the member's
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
    if (!this.#writable(at, adopt)) return notHere();
    const { row, version } = this.ctx.storage.transactionSync(() => writeMember(this.#db, githubUserId, input, origin));
    await tellIndex(this.env, getInstallation(this.#db), at, githubUserId, true, version);
    return ok(toMember(row));
  }

  /** The person left the GitHub organization. Idempotent; the member's index is told after the commit. */
  async deleteMember(at: OrgAddress, githubUserId: string, origin: A.ChangeOrigin, adopt: boolean): Promise<DurableResult<null>> {
    if (!this.#writable(at, adopt)) return notHere();
    const version = this.ctx.storage.transactionSync(() => removeMember(this.#db, githubUserId, origin));
    await tellIndex(this.env, getInstallation(this.#db), at, githubUserId, false, version);
    return ok(null);
  }

  /**
   * Whether a control-plane write for `at.login` belongs here: the installation is that login's;
   * or there is none yet and the caller has checked that the directory names no other home for the
   * login (`adopt`: members and repositories may be synchronised before the installation).
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
   * A page of members for any member of the organization (contract section 8), in
   * `members_by_login` order after the cursor's position (`store/members.ts`). The keyset (not an
   * offset) makes a walk return every member present throughout it exactly once, whatever is added
   * or removed meanwhile. One read, so the page and the seats agree.
   */
  listMembers(login: string, callerUserId: string, filters: members.MemberFilters): DurableResult<A.MemberRows> {
    const installation = this.#installation(login);
    const refused = memberAccess(installation, members.getMember(this.#db, callerUserId), "read");
    if (refused || !installation) return refused ?? fail();
    const rows = members.memberPageQuery(this.#db, filters).all();
    const page = rows.slice(0, filters.limit);
    const last = page.at(-1);
    const used = members.seatsUsed(this.#db);
    return ok({
      data: page.map(toMember),
      next: rows.length > filters.limit && last ? { loginKey: last.loginKey, githubUserId: last.githubUserId } : null,
      seats: { purchased: installation.purchasedSeats, used, available: Math.max(0, installation.purchasedSeats - used) },
    });
  }

  /** The audit log for admins of the organization, newest first, below the cursor's id. */
  readAuditLog(
    login: string,
    callerUserId: string,
    query: { githubUserId?: string; before?: number; limit: number },
  ): DurableResult<A.AuditRows> {
    const refused = memberAccess(this.#installation(login), members.getMember(this.#db, callerUserId), "admin");
    if (refused) return refused;
    const rows = auditPage(this.#db, Date.now(), query);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return ok({ data: page.map(toAuditEntry), next: rows.length > query.limit && last ? last.id : null });
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
    const outcome = this.ctx.storage.transactionSync(() => {
      const before = getInstallation(db);
      const claim = claimChange(before, at, accountId, change);
      if (claim !== "here") return claim;
      const now = Date.now();
      if (deliveryApplied(db, deliveryKey)) return "seen" as const;
      applyChange(db, at, change, { source: "github", correlationId: deliveryKey, actor: null });
      const learnt = accountIdToLearn(getInstallation(db), accountId);
      if (learnt !== null) updateInstallation(db, { accountId: learnt });
      const identity = identityChange(before, getInstallation(db), at);
      // Also when the installation arrived after a rename of it: members synchronised before it told
      // their indexes the login the caller used.
      if (identity.newLogin !== null) startRelogin(db, identity.newLogin);
      rememberDelivery(db, deliveryKey, now);
      // The directory's version of this identity: newer than any it replaces.
      if (identity.changed) tickMembershipClock(db);
      return identity.changed ? ("identity" as const) : ("applied" as const);
    });
    if (outcome === "taken" || outcome === "elsewhere") return { kind: outcome };
    if (outcome !== "applied") await scheduleRelogin(this.ctx.storage, db);
    // The member's organizations index learns the current membership after the commit, also when
    // a retry finds the delivery already applied (the first attempt may have failed right here).
    if (change.kind === "member_added" || change.kind === "member_removed") {
      const member = members.getMember(db, change.githubUserId) !== undefined;
      await tellIndex(this.env, getInstallation(db), at, change.githubUserId, member, membershipVersion(db));
    }
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
   * Applies a list of guarded changes (`members/rules.ts`) atomically: preconditions, every guard,
   * the state rules, the writes and the results are one synchronous transaction. `pathPrefix` names
   * the list in `details` (`changes` for a batch; none for a single PATCH). `operationId`
   * identifies the HTTP request: a retry that finds it already applied is answered "desired equals
   * current" (changed false), not a guard mismatch against its own earlier write. Every change that
   * changed something is audited (`member.updated`, source `api`, the caller as actor); a refusal,
   * a no-op or a retry writes nothing.
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
      if (refused || !installation || !caller) return refused ?? fail();
      const member = (id: string) => members.getMember(db, id);
      const facts = {
        member,
        purchasedSeats: installation.purchasedSeats,
        seatsUsed: members.seatsUsed(db),
        adminCount: members.adminCount(db),
      };
      if (operationApplied(db, operationId)) {
        const available = Math.max(0, facts.purchasedSeats - facts.seatsUsed);
        const states = changes.map((c) => member(c.githubUserId)).filter((m) => m !== undefined);
        const results = states.map(({ githubUserId, seat, role }) =>
          toResult({ githubUserId, before: { seat, role }, after: { seat, role } }, available),
        );
        return ok({ results, availableSeats: available });
      }
      const decision = decideMemberChanges(facts, changes, (i, field) =>
        pathPrefix === null ? field : `${pathPrefix}.${i}.${field}`,
      );
      if (!decision.ok) return decision;
      const now = Date.now();
      const changed = decision.updates.filter(isChange);
      for (const update of changed) members.setMemberState(db, update.githubUserId, update.after);
      if (changed.length > 0) {
        rememberOperation(db, operationId, now);
        const actor = { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin };
        appendAudit(
          db,
          now,
          { source: "api", correlationId, actor },
          changed.map((u) => ({ action: "member.updated" as const, ...u })),
        );
      }
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
