import { DurableObject } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import type { DeliveryOwner, Hold, OrgAddress } from "../directory/identity";
import { claimOf } from "../directory/identity";
import { type DurableResult, ok } from "../lib/durable-call";
import { foldName, repoKey, repoKeyList } from "../lib/names";
import { DAY_MS } from "../lib/time";
import { UntilWrite } from "../lib/until-write";
import { type AnalyticsAccess, decideAnalyticsAccess, type PlacedAccess } from "../rules/analytics-access";
import { decideMemberChanges, isChange, type MemberChange, memberAccess } from "../rules/members";
import type { QuotaPolicy } from "../rules/quota";
import type { OrganizationChange } from "../schemas/github-changes";
import type { Member, MemberInput } from "../schemas/member";
import type { OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import type { OrganizationSettings, SeatRequestList, SettingsChangeResult, SettingsPatch } from "../schemas/settings";
import type { SyncStatus, SyncTrigger } from "../schemas/sync";
import { type ActivityOrigin, type PullRequestActivity, recordActivity } from "./activity-writes";
import type * as A from "./answers";
import { applyDelivery } from "./apply-change";
import { identityChange } from "./github-changes";
import * as index from "./member-index";
import { removeMember, writeMember, writeMemberChanges } from "./member-writes";
import { OrgKeyUsage } from "./org-key-usage";
import {
  callerOf,
  createOrgKey,
  judgeOrgKey,
  type KeyActor,
  keyManager,
  type OrgKeySpec,
  type OrgKeyVerdict,
  type OrgKeyView,
  revokeOrgKey,
  toOrgKeyView,
} from "./org-keys";
import * as present from "./present";
import { decideRegistration } from "./registration";
import type { OrgApiKeyRow } from "./schema";
import * as schema from "./schema";
import { readSeatRequests, readSettings, updateSettings } from "./settings-writes";
import { activityOf } from "./store/activity";
import * as keys from "./store/api-keys";
import { auditPage } from "./store/audit-log";
import type { Db } from "./store/db";
import {
  claimHold,
  gatherableHolds,
  getInstallation,
  holdsGathered,
  openHolds,
  putInstallation,
  setHoldState,
} from "./store/installation";
import { operationApplied } from "./store/ledgers";
import * as members from "./store/members";
import * as repos from "./store/repositories";
import * as shards from "./store/shard";
import { beginSync, type PageWriter, recordSync, type SyncPage, type SyncUpdate, syncStatus, writeSyncPage } from "./sync-writes";

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
  /** Organization keys' quota counts and last use, in memory and written shortly after (`org-key-usage.ts`). */
  readonly #keyUsage: OrgKeyUsage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage, { schema });
    this.#keyUsage = new OrgKeyUsage(ctx.storage, this.#db);
    // Weighed by the names an answer holds (thousands of repositories: at most about 1 MB in all).
    this.#access = new UntilWrite(ctx.storage.sql, {
      budget: 20_000,
      weigh: (answer) =>
        1 + (answer.ok ? (answer.value.accessibleRepoKeys?.length ?? 0) + answer.value.excludedRepoKeys.length : 0),
    });
    ctx.blockConcurrencyWhile(() => migrate(this.#db, migrations));
  }

  /**
   * Control plane: registers the installation, plan and subscription (`registration.ts`); members'
   * indexes learn an install, the first page before the answer, the alarm the rest.
   */
  async putOrganization(at: OrgAddress, input: OrganizationInput, create: boolean): Promise<A.PutOrganizationResult> {
    const db = this.#db;
    const { decision, tell } = this.ctx.storage.transactionSync(() => {
      const before = getInstallation(db);
      const decided = decideRegistration(before, at, input, create);
      if (decided.kind !== "store") return { decision: decided, tell: false };
      putInstallation(db, decided.row);
      const indexes = identityChange(before, decided.row, at).indexes;
      if (indexes) index.startRelogin(db, decided.row.login);
      return { decision: decided, tell: indexes };
    });
    if (decision.kind !== "store") return decision;
    if (tell) {
      await index.scheduleRelogin(this.ctx.storage, db);
      await index.runRelogin(this.env, this.ctx.storage, db, getInstallation(db));
    }
    return {
      kind: "stored",
      organization: present.toOrganization(decision.row),
      directory: present.toDirectoryIdentity(decision.row, index.membershipVersion(db)),
    };
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(at: OrgAddress, name: string, input: RepositoryInput, adopt: boolean): DurableResult<Repository> {
    if (!this.#writable(at, adopt)) return present.orgNotFound();
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      repos.putRepository(this.#db, { name, private: input.private, githubId: null });
      repos.replaceCollaborators(this.#db, repoKey(name), collaborators);
    });
    return ok({ org: at.login, name, private: input.private, collaborators });
  }

  /** Member sync (control plane, GitHub): no guards, audited; then the member's index learns it (retry-safe). */
  async putMember(
    at: OrgAddress,
    githubUserId: string,
    input: MemberInput,
    origin: A.ChangeOrigin,
    adopt: boolean,
  ): Promise<DurableResult<Member>> {
    if (!this.#writable(at, adopt)) return present.orgNotFound();
    const { row, version } = this.ctx.storage.transactionSync(() => writeMember(this.#db, githubUserId, input, origin));
    await index.tellIndex(this.env, getInstallation(this.#db), at, githubUserId, true, version);
    return ok(present.toMember({ ...row, lastActivityAt: activityOf(this.#db, foldName(row.githubLogin)) }));
  }

  /** The person left the GitHub organization. Idempotent; the member's index is told after the commit. */
  async deleteMember(at: OrgAddress, githubUserId: string, origin: A.ChangeOrigin, adopt: boolean): Promise<DurableResult<null>> {
    if (!this.#writable(at, adopt)) return present.orgNotFound();
    const version = this.ctx.storage.transactionSync(() => removeMember(this.#db, githubUserId, origin));
    await index.tellIndex(this.env, getInstallation(this.#db), at, githubUserId, false, version);
    return ok(null);
  }

  /** A control-plane write for `at.login` belongs here: that login's installation, or none yet and `adopt` (members may come first). */
  #writable(at: OrgAddress, adopt: boolean): boolean {
    const claim = claimOf(getInstallation(this.#db), [at.login]);
    return claim === "own" || (claim === "absent" && adopt);
  }

  /** For the organizations list: whether the user is a member, and their entry when installed (by home key). */
  membershipOf(githubUserId: string): A.MembershipAnswer {
    const installation = getInstallation(this.#db);
    const member = this.#caller(installation, githubUserId).member;
    const version = index.membershipVersion(this.#db);
    if (!member) return { member: false, version, entry: null };
    return { member: true, version, entry: installation?.installed ? present.toOrganizationEntry(installation, member) : null };
  }

  /** A page of members after the cursor's keyset position (`store/members.ts`), and the seats, in one read. */
  listMembers(
    login: string,
    callerUserId: string,
    filters: Omit<members.MemberFilters, "inactiveBefore"> & { inactiveDays?: number },
  ): DurableResult<A.MemberRows> {
    const installation = this.#installation(login);
    const refused = memberAccess(installation, this.#caller(installation, callerUserId).member, "read");
    if (refused || !installation) return refused ?? present.unreachable();
    const { inactiveDays, ...rest } = filters;
    const inactiveBefore = inactiveDays === undefined ? undefined : Date.now() - inactiveDays * DAY_MS;
    const rows = members.memberPageQuery(this.#db, { ...rest, inactiveBefore }).all();
    return ok(
      present.toMemberRows(rows, filters.limit, { purchased: installation.purchasedSeats, used: members.seatsUsed(this.#db) }),
    );
  }

  /** The audit log for admins of the organization, newest first, filtered, below the cursor's id. */
  readAuditLog(login: string, callerUserId: string, query: A.AuditQuery): DurableResult<A.AuditRows> {
    const installation = this.#installation(login);
    const refused = memberAccess(installation, this.#caller(installation, callerUserId).member, "admin");
    if (refused) return refused;
    return ok(present.toAuditRows(auditPage(this.#db, Date.now(), query), query.limit));
  }

  /**
   * Webhook consumer: one change (`apply-change.ts`) with its ledger entry in one transaction, if it
   * is this organization's (`claimChange`); `signal`: ledger only, GitHub's state follows. See `GithubChangeResult`.
   */
  async applyGithubChange(
    deliveryKey: string,
    at: OrgAddress,
    owner: DeliveryOwner,
    change: OrganizationChange,
    signal = false,
    receivedAt: number | null = null,
  ): Promise<A.GithubChangeResult> {
    const db = this.#db;
    const outcome = this.ctx.storage.transactionSync(() => applyDelivery(db, deliveryKey, at, owner, change, signal, receivedAt));
    if (outcome === "taken" || outcome === "elsewhere") return { kind: outcome };
    // Also for "applied": an installation or uninstallation changes no identity, yet every member's index learns it.
    await index.scheduleRelogin(this.ctx.storage, db);
    // After the commit, also on a retry that finds it applied (the first attempt may have failed here).
    if (change.kind === "member_added" || change.kind === "member_removed")
      await index.tellMembership(this.env, db, at, change.githubUserId);
    const row = getInstallation(db);
    return {
      kind: "applied",
      applied: outcome !== "seen",
      renames: repos.listPendingRenames(db),
      holds: this.#openHolds(),
      installation: row?.installed ? { id: row.installationId, login: row.login } : null,
      // A retry ("seen") cannot know whether the first attempt reached D1: it writes the directory again.
      directory: row && outcome !== "applied" ? present.toDirectoryIdentity(row, index.membershipVersion(db)) : null,
    };
  }

  /** The current name of a repository known by GitHub id, when this object is the delivery's organization (`claimOf`). */
  repositoryName(login: string, owner: DeliveryOwner, githubId: number): { here: boolean; name: string | null } {
    if (claimOf(getInstallation(this.#db), [login], owner) === "other") return { here: false, name: null };
    return { here: true, name: repos.repositoryByGithubId(this.#db, githubId)?.name ?? null };
  }

  /** Whether an installation was registered here (installed or not): the consumer moves stray D1 rows only from a key no one's home. */
  isHome(): boolean {
    return getInstallation(this.#db) !== undefined;
  }

  /** Logins left by a rename whose stray rows are still to be set apart or gathered (`held_logins`). */
  holds(): Hold[] {
    return this.#openHolds();
  }

  /** Claims entry `seq` for its hold (`to_hold` → `holding`, within the window): whether its rows may be moved. */
  claimHold(seq: number): boolean {
    return this.ctx.storage.transactionSync(() => claimHold(this.#db, seq, Date.now()));
  }

  /** Entry `seq` was set apart (`holding` → `held`) or had nothing to set apart (→ `done`). */
  holdDone(seq: number, to: "held" | "done"): void {
    // Moved rows are always gathered: a gather that closed the entry meanwhile (its claim past the
    // window while the rows were still on their way) sees it again.
    if (to === "held") setHoldState(this.#db, [seq], ["holding", "done"], "held");
    else setHoldState(this.#db, [seq], ["holding"], "done");
  }

  /** The entries whose holding keys may be gathered now (`held`, and `holding` past the window). */
  gatherableHolds(): Hold[] {
    return gatherableHolds(this.#db, Date.now()).map(toHold);
  }

  /** Their holding keys were gathered. */
  holdsGathered(seqs: number[]): void {
    holdsGathered(this.#db, seqs, Date.now());
  }

  #openHolds(): Hold[] {
    return openHolds(this.#db, Date.now()).map(toHold);
  }

  /** The webhook consumer moved the D1 rows of the rename recorded as `seq`. */
  renameFollowed(seq: number): void {
    repos.deletePendingRename(this.#db, seq);
  }

  /** Tells the members' organizations indexes a new login, a page per run (`member-index.ts`). */
  override async alarm(): Promise<void> {
    await index.runRelogin(this.env, this.ctx.storage, this.#db, getInstallation(this.#db));
  }

  /** Installation sync (`sync-writes.ts`): starts one unless one runs, or answers the trigger's own; `login` null: by home. */
  beginSync(login: string | null, trigger: { kind: SyncTrigger; key: string }): DurableResult<A.SyncBegin> {
    if (login !== null && !this.#installation(login)) return present.orgNotFound();
    return ok(this.ctx.storage.transactionSync(() => beginSync(this.#db, trigger, Date.now())));
  }

  /** A sync's progress record: its Workflow instance exists, a step's progress, a failure, the end. */
  recordSync(syncId: number, update: SyncUpdate): void {
    this.ctx.storage.transactionSync(() => recordSync(this.#db, syncId, update, Date.now()));
  }

  /** A page of what GitHub listed (a sync's step with its progress, or a signal), in one transaction; then the members' indexes learn it. */
  async writeSyncPage(installationId: number, page: SyncPage, by: PageWriter): Promise<A.SyncPageAnswer> {
    const written = this.ctx.storage.transactionSync(() => writeSyncPage(this.#db, installationId, page, by));
    const installation = getInstallation(this.#db);
    if (!written || !installation) return { kind: "stale" };
    await index.tellMembers(this.env, installation, written.told);
    return { kind: "written", login: installation.login, repositories: written.repositories };
  }

  /** `GET .../sync`: the running sync and the last finished one. */
  readSync(login: string): DurableResult<SyncStatus> {
    return this.#installation(login) ? ok(syncStatus(this.#db)) : present.orgNotFound();
  }

  /** Whether and what the caller may export (`analytics/access.ts`). */
  analyticsAccess(login: string, callerUserId: string, repoNames: readonly string[] | null): DurableResult<PlacedAccess> {
    // The decision folds every name and its answer repeats none: one entry whatever their case and order.
    const key = JSON.stringify([foldName(login), callerUserId, repoNames === null ? null : repoKeyList(repoNames)]);
    const answer = this.#access.get(key, () => {
      const installation = this.#installation(login);
      // An organization key limited to repositories sees exactly those (contract section 18).
      const caller = this.#caller(installation, callerUserId);
      return decideAnalyticsAccess(
        {
          installation,
          caller: caller.member,
          repository: (repoKey) => repos.repositoryByKey(this.#db, repoKey),
          visibleRepoKeys: () => caller.repositories ?? repos.reposVisibleTo(this.#db, callerUserId),
          removedRepoKeys: () => repos.removedRepoKeys(this.#db),
        },
        repoNames,
      );
    });
    return answer.ok ? ok({ ...answer.value, shard: shards.recordedShard(this.ctx.storage) }) : answer;
  }

  /** The analytics shard (`store/shard.ts`): the directory records the placement (`from` null), a move switches it. */
  placeShard(shard: string, from: string | null): string {
    return from === null ? shards.recordShard(this.ctx.storage, shard) : shards.switchShard(this.ctx.storage, from, shard);
  }

  /** Reads one member; any member of the organization may read any member. */
  readMember(login: string, callerUserId: string, githubUserId: string): DurableResult<Member> {
    const installation = this.#installation(login);
    const refused = memberAccess(installation, this.#caller(installation, callerUserId).member, "read");
    if (refused) return refused;
    const target = members.getMemberWithActivity(this.#db, githubUserId);
    if (!target) return { ok: false, code: "member_not_found", message: "No member with this githubUserId in the organization." };
    return ok(present.toMember(target));
  }

  /** Guarded changes (`rules/members.ts`), atomic and audited; a retried `operationId` answers "unchanged". */
  updateMembers(
    login: string,
    callerUserId: string,
    changes: MemberChange[],
    operationId: string,
    pathPrefix: string | null,
    request: A.ChangeRequest,
  ): DurableResult<A.MemberChangesResult> {
    const db = this.#db;
    return this.ctx.storage.transactionSync(() => {
      const installation = this.#installation(login);
      const { member: caller, isKey } = this.#caller(installation, callerUserId);
      const refused = memberAccess(installation, caller, "write");
      if (refused || !installation || !caller) return refused ?? present.unreachable();
      const facts = members.changeFacts(db, installation.purchasedSeats);
      if (operationApplied(db, operationId)) {
        const states = changes.map((c) => facts.member(c.githubUserId)).filter((m) => m !== undefined);
        const available = Math.max(0, facts.purchasedSeats - facts.seatsUsed);
        return ok({ results: present.toReplayedResults(states, available), availableSeats: available });
      }
      const decision = decideMemberChanges(facts, changes, (i, field) =>
        pathPrefix === null ? field : `${pathPrefix}.${i}.${field}`,
      );
      if (!decision.ok) return decision;
      // An organization key is nobody: its changes carry actor null and the key (contract section 18).
      const actor = isKey ? null : { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin };
      writeMemberChanges(db, decision.updates.filter(isChange), { operationId, actor, ...request }, Date.now());
      const { updates, availableSeats } = decision;
      return ok({ results: updates.map((u) => present.toResult(u, availableSeats)), availableSeats });
    });
  }

  /** A member of this organization by GitHub user id, or one of its own keys (`org-keys.ts`). */
  #caller(installation: schema.InstallationRow | undefined, principal: string) {
    return callerOf(this.#db, installation ?? getInstallation(this.#db), principal, Date.now());
  }

  /** Organization keys (contract section 18): create, or regenerate by kind and name; admins, or the control plane (`actor` null). */
  createKey(login: string, actor: KeyActor, spec: OrgKeySpec, request: A.KeyRequest): DurableResult<A.OrgKeyCreated> {
    return this.ctx.storage.transactionSync(() => {
      const manager = keyManager(this.#db, this.#installation(login), actor);
      if (!manager.ok) return manager;
      return createOrgKey(this.#db, spec, { actor: manager.actor, ...request }, Date.now());
    });
  }

  /** Revokes one organization key (idempotent); answers its hash (null: there was none) so its lookup can go. */
  revokeKey(login: string, actor: KeyActor, keyId: string, request: A.KeyRequest): DurableResult<string | null> {
    return this.ctx.storage.transactionSync(() => {
      const manager = keyManager(this.#db, this.#installation(login), actor);
      if (!manager.ok) return manager;
      return ok(revokeOrgKey(this.#db, keyId, { actor: manager.actor, ...request }, Date.now()));
    });
  }

  /** The organization's keys, never a secret (admins, or the control plane). */
  listKeys(login: string, actor: KeyActor): DurableResult<OrgKeyView[]> {
    const manager = keyManager(this.#db, this.#installation(login), actor);
    if (!manager.ok) return manager;
    this.#keyUsage.persist(); // "last used" as memory knows it
    return ok(keys.allOrgKeys(this.#db).map(toOrgKeyView));
  }

  /** The verdict on one of this organization's keys, its network and its own quota, in one call (`org-keys.ts`). */
  verifyKey(kind: OrgApiKeyRow["kind"], keyHash: string, address: string | null, now: number, policy: QuotaPolicy | null) {
    return this.ctx.storage.transactionSync(
      (): OrgKeyVerdict => judgeOrgKey(this.#db, this.#keyUsage, getInstallation(this.#db), kind, keyHash, address, now, policy),
    );
  }

  /** Pull requests the write paths stored (section 20): activity, learned, automatic seats (`activity-writes.ts`); by home. */
  recordActivity(items: PullRequestActivity[], origin: ActivityOrigin): { assigned: string[]; waiting: string[] } {
    return this.ctx.storage.transactionSync(() => recordActivity(this.#db, items, origin, Date.now()));
  }

  /** `GET .../settings` (any member). */
  readSettings(login: string, callerUserId: string): DurableResult<OrganizationSettings> {
    const installation = this.#installation(login);
    return readSettings(this.#db, installation, this.#caller(installation, callerUserId));
  }

  /** `PATCH .../settings`: guarded, audited, in one transaction; a retried `operationId` answers unchanged. */
  updateSettings(login: string, callerId: string, change: SettingsPatch, operationId: string, request: A.ChangeRequest) {
    return this.ctx.storage.transactionSync((): DurableResult<SettingsChangeResult> => {
      const at = this.#installation(login);
      return updateSettings(this.#db, at, this.#caller(at, callerId), change, { operationId, ...request }, Date.now());
    });
  }

  /** `GET .../seat-requests` (admins): the waiting list. */
  listSeatRequests(login: string, callerUserId: string): DurableResult<SeatRequestList> {
    const installation = this.#installation(login);
    return readSeatRequests(this.#db, installation, this.#caller(installation, callerUserId));
  }

  /** The installation when installed and `login` is its current login (else 404: an old login never reaches this data). */
  #installation(login: string): schema.InstallationRow | undefined {
    const row = getInstallation(this.#db);
    return row?.installed && foldName(row.login) === foldName(login) ? row : undefined;
  }
}

/** An entry of `held_logins` as the Worker reads it. */
const toHold = ({ seq, loginKey, deliveryKey, state }: schema.HeldLogin): Hold => ({ seq, loginKey, deliveryKey, state });
