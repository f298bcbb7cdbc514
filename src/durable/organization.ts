import { DurableObject } from "cloudflare:workers";
import { and, count, desc, eq, isNotNull, lt, or, type SQL, sql } from "drizzle-orm";
import { type DrizzleSqliteDODatabase, drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import { type AnalyticsAccess, decideAnalyticsAccess } from "../analytics/access";
import { claimOf, followRenames, type Identity, type OrgAddress } from "../directory/identity";
import { callDurable, type DurableResult, ok } from "../lib/durable-call";
import { foldName } from "../lib/names";
import { formatInstant } from "../lib/time";
import { UntilWrite } from "../lib/until-write";
import type { MemberCursor } from "../members/query";
import {
  capabilities,
  decideMemberChanges,
  isChange,
  type MemberChange,
  type MemberState,
  type MemberUpdate,
  memberAccess,
} from "../members/rules";
import type { AuditAction, AuditActor, AuditEntry, AuditSource } from "../schemas/audit";
import type { Role } from "../schemas/common";
import type { Member, MemberInput, MemberUpdateResult, SeatSummary } from "../schemas/member";
import type { Organization, OrganizationEntry, OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import type { GithubRepository, OrganizationChange } from "../webhooks/changes";
import { type MemberFilters, memberPageQuery } from "./member-queries";
import * as schema from "./organization-schema";

/** How long a changing PATCH is remembered for its retries. */
const OPERATION_MEMORY_MS = 3_600_000;

/** How long audit entries are kept: older ones are deleted by every write that adds an entry. */
export const AUDIT_RETENTION_MS = 400 * 24 * 3_600_000;

/**
 * Who and what made a member sync (control plane or, later, a GitHub webhook): recorded in the
 * audit log as `source` with the request's correlation id. `actor` is the person behind it when
 * one is known (a webhook's sender), else null.
 */
export interface ChangeOrigin {
  source: Exclude<AuditSource, "api">;
  correlationId: string;
  actor?: AuditActor | null;
}

/** A page of members in list order, the position after its last one, and the seats. */
export interface MemberRows {
  data: Member[];
  next: MemberCursor | null;
  seats: SeatSummary;
}

export interface AuditRows {
  data: AuditEntry[];
  /** The id to continue below, or null on the last page. */
  next: number | null;
}

/**
 * What this organization says about one user, for the organizations list: the entry when the
 * user is a member of an installed organization, and `member`/`version` for repairing that user's
 * index when it claims a membership that is gone.
 */
export interface MembershipAnswer {
  member: boolean;
  version: number;
  entry: OrganizationEntry | null;
}

/** How long an applied webhook delivery is remembered: past the receiver's 7-day dedupe marker. */
const DELIVERY_MEMORY_MS = 8 * 24 * 3_600_000;

/** A repository rename whose D1 rows still have to follow (see `pendingRenames`). */
export interface PendingRename {
  fromKey: string;
  toName: string;
}

/** What the directory in D1 learns of this object: `storage/directory.ts` `recordHome`. */
export type DirectoryIdentity = Identity & { home: string; installationId: number; version: number };

/** `putOrganization`: stored; or not here (no installation, and the caller did not say to create one); or another organization's. */
export type PutOrganizationResult =
  | { kind: "stored"; organization: Organization; directory: DirectoryIdentity }
  | { kind: "absent" }
  | { kind: "taken" };

/**
 * `applyGithubChange`: applied (now, or by an earlier attempt: `applied` false), with the repository
 * renames still to follow in D1 and, when the directory in D1 may need to learn this object's
 * identity (it changed now, or an earlier attempt may have failed before writing D1), that
 * identity. `taken`: an installation for an organization this object is not (the caller allocates
 * it a home of its own). `elsewhere`: any other change of an organization this object is not.
 */
export type GithubChangeResult =
  | {
      kind: "applied";
      applied: boolean;
      renames: PendingRename[];
      /** `version`: the membership clock, raised by every change of identity (`recordHome` keeps the newest). */
      directory: DirectoryIdentity | null;
    }
  | { kind: "taken" }
  | { kind: "elsewhere" };

/** Members told per alarm run that the organization's login changed. */
const RELOGIN_PAGE = 100;
/** When telling them failed: try again a minute later. */
const RELOGIN_RETRY_MS = 60_000;

const notHere = <T>(): DurableResult<T> => ({
  ok: false,
  code: "org_not_found",
  message: "The organization cannot be resolved to an installation.",
});

/** The answer to a list of member changes: one result per change, in order, and the seats left after all of them. */
export interface MemberChangesResult {
  results: MemberUpdateResult[];
  availableSeats: number;
}

const toResult = (u: MemberUpdate, availableSeats: number): MemberUpdateResult => ({
  ...u,
  changed: isChange(u),
  availableSeats,
  // This operation never buys seats.
  purchasedQuantityChanged: false,
});

type Db = DrizzleSqliteDODatabase<typeof schema>;
type InstallationRow = typeof schema.installation.$inferSelect;
type MemberRow = typeof schema.members.$inferSelect;

export const toOrganization = (row: InstallationRow): Organization => ({
  login: row.login,
  installationId: row.installationId,
  installedAt: formatInstant(row.installedAt),
  blocked: row.blocked,
  plan: row.plan,
  subscription: {
    status: row.subscriptionStatus,
    billedThroughService: row.billedThroughService,
    purchasedSeats: row.purchasedSeats,
  },
});

const stateOf = (row: { seat: boolean; role: Role }): MemberState => ({ seat: row.seat, role: row.role });

type AuditRow = typeof schema.auditLog.$inferSelect;

const stateOrNull = (seat: boolean | null, role: Role | null): MemberState | null =>
  seat === null || role === null ? null : { seat, role };

export const toAuditEntry = (row: AuditRow): AuditEntry => ({
  id: String(row.id),
  at: formatInstant(row.at),
  action: row.action,
  actor: row.actorUserId === null ? null : { githubUserId: row.actorUserId, githubLogin: row.actorLogin ?? "" },
  source: row.source,
  githubUserId: row.githubUserId,
  before: stateOrNull(row.beforeSeat, row.beforeRole),
  after: stateOrNull(row.afterSeat, row.afterRole),
  correlationId: row.correlationId,
});

/** `workEmail` is omitted while unknown (a member GitHub announced, before a sync provides it). */
export const toMember = (row: MemberRow): Member => ({
  githubUserId: row.githubUserId,
  githubLogin: row.githubLogin,
  ...(row.workEmail === null ? {} : { workEmail: row.workEmail }),
  role: row.role,
  seat: row.seat,
  isBot: row.isBot,
});

/**
 * One object per organization, named by its home key (the lower-cased login it was installed
 * under, which survives renames: `durable/directory.ts`). It owns the organization's installation,
 * plan, subscription and seats, its members and its repositories with their access lists. Every
 * call that names the organization by login passes that login, and the object answers only for
 * its current login (else "organization not found"), so an old login or a stale directory entry
 * never reaches another organization's data. It loads facts, asks the rules (`members/rules.ts`,
 * `analytics/access.ts`, `identity.ts`) and writes their outcome, each write in one synchronous
 * transaction, so a member sync and a PATCH of the same organization are serialised and never half
 * applied. Only the public methods are reachable
 * over RPC; everything else is `#private`.
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
  putOrganization(at: OrgAddress, input: OrganizationInput, create: boolean): PutOrganizationResult {
    const existing = this.#installationRow();
    const same = existing !== undefined && existing.installationId === input.installationId;
    const claim = same ? "own" : claimOf(existing, [at.login]);
    if (claim === "other") return { kind: "taken" };
    if (claim === "absent" && !create) return { kind: "absent" };
    const row: InstallationRow = {
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
    this.#db.insert(schema.installation).values(row).onConflictDoUpdate({ target: schema.installation.id, set: row }).run();
    return {
      kind: "stored",
      organization: toOrganization(row),
      directory: this.#directoryIdentity(row),
    };
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(at: OrgAddress, name: string, input: RepositoryInput, adopt: boolean): DurableResult<Repository> {
    if (!this.#writable(at, adopt)) return notHere();
    const repoKey = foldName(name);
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      this.#writeRepository({ name, private: input.private, githubId: null });
      this.#db.delete(schema.collaborators).where(eq(schema.collaborators.repoKey, repoKey)).run();
      for (const githubUserId of collaborators) {
        this.#db.insert(schema.collaborators).values({ repoKey, githubUserId }).run();
      }
    });
    return ok({ org: at.login, name, private: input.private, collaborators });
  }

  /**
   * Member sync from the source of truth (the control plane today, GitHub webhooks later): no
   * guards, no seat capacity check. A member added, or a seat or role changed, is written to the
   * audit log in the same transaction; a sync that changes neither writes none. Then the member's
   * organizations index (their `UserObject`) learns the membership, after the commit: if that
   * fails the call fails, and a retry (the write is idempotent) tells it again. `adopt`: see `#writable`.
   */
  async putMember(
    at: OrgAddress,
    githubUserId: string,
    input: MemberInput,
    origin: ChangeOrigin,
    adopt: boolean,
  ): Promise<DurableResult<Member>> {
    if (!this.#writable(at, adopt)) return notHere();
    const { row, version } = this.ctx.storage.transactionSync(() => this.#writeMember(githubUserId, input, origin));
    await this.#tellIndex(at, githubUserId, true, version);
    return ok(toMember(row));
  }

  /**
   * The person left the GitHub organization. Idempotent. Removing a member writes
   * `member.removed`; removing nobody writes nothing. The member's index is told after the commit.
   */
  async deleteMember(at: OrgAddress, githubUserId: string, origin: ChangeOrigin, adopt: boolean): Promise<DurableResult<null>> {
    if (!this.#writable(at, adopt)) return notHere();
    const version = this.ctx.storage.transactionSync(() => this.#removeMember(githubUserId, origin));
    await this.#tellIndex(at, githubUserId, false, version);
    return ok(null);
  }

  /**
   * Whether a control-plane write for `at.login` belongs here: the installation is that login's;
   * or there is none yet and the caller has checked that the directory names no other home for the
   * login (`adopt`: members and repositories may be synchronised before the installation).
   */
  #writable(at: OrgAddress, adopt: boolean): boolean {
    const claim = claimOf(this.#installationRow(), [at.login]);
    return claim === "own" || (claim === "absent" && adopt);
  }

  /**
   * For `GET /api/v1/organizations`: whether the user is a member (the authority the user's index
   * defers to), and their entry when the organization is also installed. Asked by home key (the
   * index's), so no login is checked; the entry carries the current login.
   */
  membershipOf(githubUserId: string): MembershipAnswer {
    const row = this.#installationRow();
    const installation = row?.installed ? row : undefined;
    const member = this.#member(githubUserId);
    const version = this.#membershipClock();
    if (!member) return { member: false, version, entry: null };
    if (!installation) return { member: true, version, entry: null };
    return {
      member: true,
      version,
      entry: {
        org: installation.login,
        plan: installation.plan,
        role: member.role,
        seat: member.seat,
        ...capabilities(installation, member),
      },
    };
  }

  /**
   * A page of members for any member of the organization (contract section 8), in
   * `members_by_login` order: lower(githubLogin), then githubUserId, after the cursor's position.
   * The keyset (not an offset) makes a walk return every member present throughout it exactly
   * once, whatever is added or removed meanwhile. One read, so the page and the seats agree.
   */
  listMembers(login: string, callerUserId: string, filters: MemberFilters): DurableResult<MemberRows> {
    const installation = this.#installation(login);
    const refused = memberAccess(installation, this.#member(callerUserId), "read");
    if (refused || !installation) return refused ?? fail();
    const rows = memberPageQuery(this.#db, filters).all();
    const page = rows.slice(0, filters.limit);
    const last = page.at(-1);
    const used = this.#count(eq(schema.members.seat, true));
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
  ): DurableResult<AuditRows> {
    const refused = memberAccess(this.#installation(login), this.#member(callerUserId), "admin");
    if (refused) return refused;
    const a = schema.auditLog;
    const rows = this.#db
      .select()
      .from(a)
      .where(
        and(
          query.githubUserId === undefined ? undefined : eq(a.githubUserId, query.githubUserId),
          query.before === undefined ? undefined : lt(a.id, query.before),
          // Past the retention even before the next write prunes it.
          sql`${a.at} >= ${Date.now() - AUDIT_RETENTION_MS}`,
        ),
      )
      .orderBy(desc(a.id))
      .limit(query.limit + 1)
      .all();
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return ok({ data: page.map(toAuditEntry), next: rows.length > query.limit && last ? last.id : null });
  }

  /**
   * GitHub webhook consumer: applies one change (contract section 9) through the same write paths
   * as the control plane, in one transaction with the delivery's ledger entry, so a delivery
   * applied twice changes nothing the second time. `at` is where the consumer resolved the
   * delivery (by account id, else by login) and the login it carries; the object applies it only
   * if it is that organization's (`claimOf`: same account id, else same login), and learns the
   * account id on the way. See `GithubChangeResult` for the answer.
   */
  async applyGithubChange(
    deliveryKey: string,
    at: OrgAddress,
    accountId: number | null,
    change: OrganizationChange,
  ): Promise<GithubChangeResult> {
    const origin: ChangeOrigin = { source: "github", correlationId: deliveryKey, actor: null };
    const logins = change.kind === "organization_renamed" ? [at.login, change.from] : [at.login];
    const outcome = this.ctx.storage.transactionSync(() => {
      const before = this.#installationRow();
      const installationId = change.kind === "installation_created" ? change.installationId : null;
      if (claimOf(before, logins, accountId, installationId) === "other") {
        return change.kind === "installation_created" ? ("taken" as const) : ("elsewhere" as const);
      }
      const now = Date.now();
      const seen = this.#db
        .select()
        .from(schema.appliedDeliveries)
        .where(eq(schema.appliedDeliveries.deliveryKey, deliveryKey))
        .get();
      if (seen) return "seen" as const;
      this.#applyChange(at, change, origin);
      // The organization learns its account id from the first delivery that names it.
      if (accountId !== null && this.#installationRow()?.accountId === null) {
        this.#db.update(schema.installation).set({ accountId }).where(eq(schema.installation.id, 1)).run();
      }
      const after = this.#installationRow();
      // Also when the installation arrived after a rename of it: members synchronised before it told
      // their indexes the login the caller used.
      if (after && after.login !== (before?.login ?? at.login)) this.#loginChanged(after.login);
      this.#db.insert(schema.appliedDeliveries).values({ deliveryKey, appliedAt: now }).run();
      this.#db
        .delete(schema.appliedDeliveries)
        .where(lt(schema.appliedDeliveries.appliedAt, now - DELIVERY_MEMORY_MS))
        .run();
      const changed = after !== undefined && (before?.login !== after.login || before?.accountId !== after.accountId);
      // The directory's version of this identity: newer than any it replaces.
      if (changed) this.#tickMembershipClock();
      return changed ? ("identity" as const) : ("applied" as const);
    });
    if (outcome === "taken" || outcome === "elsewhere") return { kind: outcome };
    if (outcome !== "applied") await this.#scheduleRelogin();
    // The member's organizations index learns the current membership after the commit, also when
    // a retry finds the delivery already applied (the first attempt may have failed right here).
    if (change.kind === "member_added" || change.kind === "member_removed") {
      const member = this.#member(change.githubUserId) !== undefined;
      await this.#tellIndex(at, change.githubUserId, member, this.#membershipClock());
    }
    const row = this.#installationRow();
    return {
      kind: "applied",
      applied: outcome !== "seen",
      renames: this.#db.select().from(schema.pendingRenames).all(),
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
    if (claimOf(this.#installationRow(), [login], accountId) === "other") return { here: false, name: null };
    const row = this.#db.select().from(schema.repositories).where(eq(schema.repositories.githubId, githubId)).get();
    return { here: true, name: row?.name ?? null };
  }

  /**
   * Whether this object is an organization's home: an installation was registered here (installed
   * or not). The webhook consumer moves the D1 rows stored under a login's folded key to the home of
   * the organization that now holds the login only when that key is no other organization's home.
   */
  isHome(): boolean {
    return this.#installationRow() !== undefined;
  }

  /** The webhook consumer moved a rename's D1 rows. */
  renameFollowed(fromKey: string): void {
    this.#db.delete(schema.pendingRenames).where(eq(schema.pendingRenames.fromKey, fromKey)).run();
  }

  #applyChange(at: OrgAddress, change: OrganizationChange, origin: ChangeOrigin): void {
    switch (change.kind) {
      case "installation_created": {
        const row = this.#installationRow();
        if (row?.installationId === change.installationId) {
          // The same installation again (a late retry, a redelivery, or billing registered it first):
          // its login is as old as the installation, so the login stays; a rename applied since stays
          // applied. Only an organization marked deleted is installed again.
          if (!row.installed) {
            this.#db
              .update(schema.installation)
              .set({ installedAt: change.installedAt, installed: true, blocked: false })
              .where(eq(schema.installation.id, 1))
              .run();
          }
          this.#followRenames();
        } else if (row) {
          // A new installation (a reinstall): a plan or subscription billing has set stays; it is not
          // suspended. Its login is the organization's login now: renames that waited for it follow.
          const set = {
            login: at.login,
            installationId: change.installationId,
            installedAt: change.installedAt,
            installed: true,
          };
          this.#db
            .update(schema.installation)
            .set(row.installed ? set : { ...set, blocked: false })
            .where(eq(schema.installation.id, 1))
            .run();
          this.#followRenames();
        } else {
          this.#db
            .insert(schema.installation)
            .values({
              id: 1,
              login: at.login,
              homeKey: at.home,
              accountId: null,
              installationId: change.installationId,
              installedAt: change.installedAt,
              blocked: false,
              plan: "free",
              subscriptionStatus: "none",
              billedThroughService: false,
              purchasedSeats: 0,
              installed: true,
            })
            .run();
          // Renames delivered before the installation waited here: they follow now.
          this.#followRenames();
        }
        return;
      }
      case "installation_deleted":
        this.#db
          .update(schema.installation)
          .set({ installed: false })
          .where(and(eq(schema.installation.id, 1), eq(schema.installation.installationId, change.installationId)))
          .run();
        return;
      case "installation_suspended":
        this.#db.update(schema.installation).set({ blocked: change.blocked }).where(eq(schema.installation.id, 1)).run();
        return;
      case "repositories_added":
        for (const repository of change.repositories) this.#writeGithubRepository(repository);
        return;
      case "repository_visibility":
        this.#writeGithubRepository(change.repository);
        return;
      case "repositories_removed":
        for (const repository of change.repositories) {
          const row = this.#repository(repository);
          if (row)
            this.#db.update(schema.repositories).set({ removed: true }).where(eq(schema.repositories.repoKey, row.repoKey)).run();
          else this.#writeRepository({ name: repository.name, private: true, githubId: repository.id, removed: true });
        }
        return;
      case "repository_renamed":
        this.#renameRepository(change.from, change.repository);
        return;
      case "collaborator": {
        const repoKey = (this.#repository(change.repository)?.name ?? change.repository.name).toLowerCase();
        if (change.added) {
          this.#db
            .insert(schema.collaborators)
            .values({ repoKey, githubUserId: change.githubUserId })
            .onConflictDoNothing()
            .run();
        } else {
          this.#db
            .delete(schema.collaborators)
            .where(and(eq(schema.collaborators.repoKey, repoKey), eq(schema.collaborators.githubUserId, change.githubUserId)))
            .run();
        }
        return;
      }
      case "member_added": {
        const existing = this.#member(change.githubUserId);
        // Role, seat and e-mail of a known member are the service's (PATCH, sync): a redelivered
        // or late member_added must not reset them. GitHub's login and account type are kept current.
        this.#writeMember(
          change.githubUserId,
          existing
            ? { ...existing, githubLogin: change.githubLogin, isBot: change.isBot }
            : { githubLogin: change.githubLogin, workEmail: null, role: change.role, seat: false, isBot: change.isBot },
          origin,
        );
        return;
      }
      case "member_removed":
        this.#removeMember(change.githubUserId, origin);
        return;
      case "organization_renamed":
        this.#renameOrganization(change.from, at.login);
        return;
    }
  }

  /**
   * GitHub's `organization` renamed (`from` → `to`). GitHub promises no order, so the rename waits
   * in `waiting_renames` and the chain is followed from the current login (`followRenames`): a
   * rename applies when its `from` is the current login, and then every waiting rename that
   * continues the chain. A rename that arrives before the installation (its delivery failed and
   * waits for a retry) waits too: the installation follows it once it is registered.
   */
  #renameOrganization(from: string, to: string): void {
    this.#db
      .insert(schema.waitingRenames)
      .values({ fromKey: foldName(from), toLogin: to, receivedAt: Date.now() })
      .run();
    this.#followRenames();
  }

  /** Applies the waiting renames that continue from the current login (inside the caller's transaction). */
  #followRenames(): void {
    const row = this.#installationRow();
    if (!row) return;
    const w = schema.waitingRenames;
    this.#db
      .delete(w)
      .where(lt(w.receivedAt, Date.now() - DELIVERY_MEMORY_MS))
      .run();
    const { login, used } = followRenames(row.login, this.#db.select().from(w).all());
    for (const id of used) this.#db.delete(w).where(eq(w.id, id)).run();
    if (login !== row.login) this.#db.update(schema.installation).set({ login }).where(eq(schema.installation.id, 1)).run();
  }

  /**
   * The login changed (inside the transaction of the change): every member's organizations index
   * has to learn it, for the order of `GET /api/v1/organizations`. The membership clock moves on, so
   * what the alarm tells them is newer than anything told before; a membership write after this
   * tells the new login itself. The alarm is set after the commit (`#scheduleRelogin`).
   */
  #loginChanged(login: string): void {
    this.#tickMembershipClock();
    const job = { id: 1, login, after: "" };
    this.#db.insert(schema.indexRelogin).values(job).onConflictDoUpdate({ target: schema.indexRelogin.id, set: job }).run();
  }

  async #scheduleRelogin(): Promise<void> {
    if (this.#db.select().from(schema.indexRelogin).get()) await this.ctx.storage.setAlarm(Date.now());
  }

  /**
   * Tells the members' organizations indexes the current login, a page of members per run, until
   * every member has been told; a failure tries the same page again a minute later (the writes are
   * versioned, so telling twice is harmless).
   */
  override async alarm(): Promise<void> {
    const job = this.#db.select().from(schema.indexRelogin).get();
    const row = this.#installationRow();
    if (!job) return;
    if (!row) {
      this.#db.delete(schema.indexRelogin).run();
      return;
    }
    const version = this.#membershipClock();
    const m = schema.members;
    const page = this.#db
      .select({ githubUserId: m.githubUserId })
      .from(m)
      .where(sql`${m.githubUserId} > ${job.after}`)
      .orderBy(m.githubUserId)
      .limit(RELOGIN_PAGE)
      .all();
    const loginKey = foldName(row.login);
    try {
      await Promise.all(
        page.map(({ githubUserId }) =>
          callDurable(() => this.env.USERS.getByName(githubUserId).recordMembership(row.homeKey, loginKey, true, version), {
            idempotent: true,
          }),
        ),
      );
    } catch (error) {
      console.error(
        JSON.stringify({ level: "warn", msg: "organizations index not told the new login; retried", error: String(error) }),
      );
      await this.ctx.storage.setAlarm(Date.now() + RELOGIN_RETRY_MS);
      return;
    }
    const last = page.at(-1);
    const more = this.ctx.storage.transactionSync(() => {
      const now = this.#db.select().from(schema.indexRelogin).get();
      // Another login change restarted the job meanwhile: it runs again from the start.
      if (!now || now.login !== job.login || now.after !== job.after) return now !== undefined;
      if (page.length < RELOGIN_PAGE || !last) {
        this.#db.delete(schema.indexRelogin).run();
        return false;
      }
      this.#db.update(schema.indexRelogin).set({ after: last.githubUserId }).run();
      return true;
    });
    if (more) await this.ctx.storage.setAlarm(Date.now());
  }

  /** The one write of a repository (control plane and GitHub): upsert by name, back in the installation. */
  #writeRepository(r: { name: string; private: boolean; githubId: number | null; removed?: boolean }): void {
    const row = { repoKey: r.name.toLowerCase(), name: r.name, private: r.private, removed: r.removed ?? false };
    const set = r.githubId === null ? row : { ...row, githubId: r.githubId };
    this.#db.insert(schema.repositories).values(set).onConflictDoUpdate({ target: schema.repositories.repoKey, set }).run();
  }

  /**
   * A repository as GitHub describes it. GitHub's numeric id is the identity: a repository known
   * by id keeps its stored name (only a `renamed` event changes names, so a late delivery carrying
   * an old name cannot undo a rename).
   */
  #writeGithubRepository(repository: GithubRepository): void {
    const known = this.#repository(repository);
    this.#writeRepository({ name: known?.name ?? repository.name, private: repository.private, githubId: repository.id });
  }

  /**
   * Renames a repository: its row, its collaborators and (through `pendingRenames`) its D1 rows
   * follow it to the new name; the old name then matches nothing. A rename whose `from` is not the
   * repository's current name is stale (a later rename was applied first) and changes nothing.
   */
  #renameRepository(from: string, repository: GithubRepository): void {
    const fromKey = from.toLowerCase();
    const toKey = repository.name.toLowerCase();
    const byId = this.#db.select().from(schema.repositories).where(eq(schema.repositories.githubId, repository.id)).get();
    const current = byId ?? this.#db.select().from(schema.repositories).where(eq(schema.repositories.repoKey, fromKey)).get();
    if (byId && byId.repoKey !== fromKey) return;
    if (current && fromKey !== toKey) {
      // Whatever stood under the new name is replaced by the renamed repository.
      this.#db.delete(schema.repositories).where(eq(schema.repositories.repoKey, toKey)).run();
      this.#db.update(schema.repositories).set({ repoKey: toKey }).where(eq(schema.repositories.repoKey, fromKey)).run();
      this.#db.delete(schema.collaborators).where(eq(schema.collaborators.repoKey, toKey)).run();
      this.#db.update(schema.collaborators).set({ repoKey: toKey }).where(eq(schema.collaborators.repoKey, fromKey)).run();
    }
    this.#writeRepository({
      name: repository.name,
      private: repository.private,
      githubId: repository.id,
      removed: current?.removed,
    });
    if (fromKey !== toKey || current?.name !== repository.name) {
      this.#db
        .insert(schema.pendingRenames)
        .values({ fromKey, toName: repository.name })
        .onConflictDoUpdate({ target: schema.pendingRenames.fromKey, set: { toName: repository.name } })
        .run();
    }
  }

  /** A repository by GitHub id, else by name. */
  #repository(r: { id: number; name: string }): typeof schema.repositories.$inferSelect | undefined {
    return (
      this.#db.select().from(schema.repositories).where(eq(schema.repositories.githubId, r.id)).get() ??
      this.#db.select().from(schema.repositories).where(eq(schema.repositories.repoKey, r.name.toLowerCase())).get()
    );
  }

  /**
   * The one write of a member's synchronised state (control plane and GitHub), inside the caller's
   * transaction: the member, its audit entry (`member.added`, or `member.updated` when seat or
   * role changed; none when neither did) and the membership clock. Returns the row and the clock.
   */
  #writeMember(
    githubUserId: string,
    input: Omit<MemberRow, "githubUserId">,
    origin: ChangeOrigin,
  ): { row: MemberRow; version: number } {
    const before = this.#member(githubUserId);
    const row: MemberRow = { githubUserId, ...input };
    this.#db.insert(schema.members).values(row).onConflictDoUpdate({ target: schema.members.githubUserId, set: row }).run();
    const action: AuditAction | null = !before
      ? "member.added"
      : before.seat !== row.seat || before.role !== row.role
        ? "member.updated"
        : null;
    if (action) {
      this.#audit(Date.now(), { ...origin, actor: origin.actor ?? null }, [
        { action, githubUserId, before: before ? stateOf(before) : null, after: stateOf(row) },
      ]);
    }
    return { row, version: this.#tickMembershipClock() };
  }

  /** The one removal of a member (control plane and GitHub), inside the caller's transaction; idempotent. */
  #removeMember(githubUserId: string, origin: ChangeOrigin): number {
    const before = this.#member(githubUserId);
    if (before) {
      this.#db.delete(schema.members).where(eq(schema.members.githubUserId, githubUserId)).run();
      this.#audit(Date.now(), { ...origin, actor: origin.actor ?? null }, [
        { action: "member.removed", githubUserId, before: stateOf(before), after: null },
      ]);
    }
    return this.#tickMembershipClock();
  }

  /** Whether and what the caller may export (`analytics/access.ts`). */
  analyticsAccess(login: string, callerUserId: string, repoName: string | null): DurableResult<AnalyticsAccess> {
    // The decision folds both names and its answer repeats neither: one entry whatever their case.
    const key = JSON.stringify([foldName(login), callerUserId, repoName === null ? null : foldName(repoName)]);
    return this.#access.get(key, () => this.#decideAnalyticsAccess(login, callerUserId, repoName));
  }

  #decideAnalyticsAccess(login: string, callerUserId: string, repoName: string | null): DurableResult<AnalyticsAccess> {
    return decideAnalyticsAccess(
      {
        installation: this.#installation(login),
        caller: this.#member(callerUserId),
        repository: (repoKey) =>
          this.#db.select().from(schema.repositories).where(eq(schema.repositories.repoKey, repoKey)).get(),
        visibleRepoKeys: () => this.#reposVisibleTo(callerUserId),
        removedRepoKeys: () =>
          this.#db
            .select({ repoKey: schema.repositories.repoKey })
            .from(schema.repositories)
            .where(eq(schema.repositories.removed, true))
            .all()
            .map((r) => r.repoKey),
      },
      repoName,
    );
  }

  /** Reads one member; any member of the organization may read any member. */
  readMember(login: string, callerUserId: string, githubUserId: string): DurableResult<Member> {
    const refused = memberAccess(this.#installation(login), this.#member(callerUserId), "read");
    if (refused) return refused;
    const target = this.#member(githubUserId);
    if (!target) return { ok: false, code: "member_not_found", message: "No member with this githubUserId in the organization." };
    return ok(toMember(target));
  }

  /**
   * Applies a list of guarded changes (`members/rules.ts`) atomically: preconditions, every guard,
   * the state rules, the writes and the results are one synchronous transaction, so no other
   * request of this organization can interleave. `pathPrefix` names the list in `details`
   * (`changes` for a batch; none for a single PATCH).
   *
   * `operationId` identifies the HTTP request. If a retry of the same request finds it already
   * applied, every change is answered as "desired equals current" (changed false) rather than as a
   * guard mismatch against its own earlier write.
   *
   * Every change that changed something is written to the audit log (`member.updated`, source
   * `api`, the caller as actor, `correlationId`) in the same transaction; a refusal, a no-op or a
   * retry writes nothing.
   */
  updateMembers(
    login: string,
    callerUserId: string,
    changes: MemberChange[],
    operationId: string,
    pathPrefix: string | null,
    correlationId: string,
  ): DurableResult<MemberChangesResult> {
    return this.ctx.storage.transactionSync(() => {
      const installation = this.#installation(login);
      const caller = this.#member(callerUserId);
      const refused = memberAccess(installation, caller, "write");
      if (refused || !installation || !caller) return refused ?? fail();
      const facts = {
        member: (id: string) => this.#member(id),
        purchasedSeats: installation.purchasedSeats,
        seatsUsed: this.#count(eq(schema.members.seat, true)),
        adminCount: this.#count(eq(schema.members.role, "admin")),
      };

      if (this.#alreadyApplied(operationId)) {
        const unchanged = changes.map((c) => this.#member(c.githubUserId)).filter((m) => m !== undefined);
        const available = Math.max(0, facts.purchasedSeats - facts.seatsUsed);
        const results = unchanged.map((m) => {
          const state = { seat: m.seat, role: m.role };
          return toResult({ githubUserId: m.githubUserId, before: state, after: state }, available);
        });
        return ok({ results, availableSeats: available });
      }

      const decision = decideMemberChanges(facts, changes, (i, field) =>
        pathPrefix === null ? field : `${pathPrefix}.${i}.${field}`,
      );
      if (!decision.ok) return decision;
      const now = Date.now();
      const changed = decision.updates.filter(isChange);
      for (const update of changed) {
        this.#db.update(schema.members).set(update.after).where(eq(schema.members.githubUserId, update.githubUserId)).run();
      }
      if (changed.length > 0) {
        this.#remember(operationId, now);
        const actor = { githubUserId: caller.githubUserId, githubLogin: caller.githubLogin };
        this.#audit(
          now,
          { source: "api", correlationId, actor },
          changed.map((u) => ({ action: "member.updated" as const, ...u })),
        );
      }
      return ok({
        results: decision.updates.map((u) => toResult(u, decision.availableSeats)),
        availableSeats: decision.availableSeats,
      });
    });
  }

  /** Appends audit entries and drops those past the retention; callers are inside a transaction. */
  #audit(
    now: number,
    origin: { source: AuditSource; correlationId: string; actor: AuditActor | null },
    entries: { action: AuditAction; githubUserId: string; before: MemberState | null; after: MemberState | null }[],
  ): void {
    for (const e of entries) {
      this.#db
        .insert(schema.auditLog)
        .values({
          at: now,
          action: e.action,
          actorUserId: origin.actor?.githubUserId ?? null,
          actorLogin: origin.actor?.githubLogin ?? null,
          source: origin.source,
          githubUserId: e.githubUserId,
          beforeSeat: e.before?.seat ?? null,
          beforeRole: e.before?.role ?? null,
          afterSeat: e.after?.seat ?? null,
          afterRole: e.after?.role ?? null,
          correlationId: origin.correlationId,
        })
        .run();
    }
    this.#db
      .delete(schema.auditLog)
      .where(lt(schema.auditLog.at, now - AUDIT_RETENTION_MS))
      .run();
  }

  #membershipClock(): number {
    return this.#db.select().from(schema.membershipClock).where(eq(schema.membershipClock.id, 1)).get()?.value ?? 0;
  }

  /** Raises the membership clock; callers are inside the transaction of the membership write. */
  #tickMembershipClock(): number {
    const value = this.#membershipClock() + 1;
    this.#db
      .insert(schema.membershipClock)
      .values({ id: 1, value })
      .onConflictDoUpdate({ target: schema.membershipClock.id, set: { value } })
      .run();
    return value;
  }

  /**
   * Tells the member's organizations index (their `UserObject`) under this object's home key and
   * the current login (the list's order); idempotent, so retried once. Before the installation
   * exists, the address the caller resolved names both.
   */
  async #tellIndex(at: OrgAddress, githubUserId: string, member: boolean, version: number): Promise<void> {
    const row = this.#installationRow();
    const home = row?.homeKey ?? at.home;
    const loginKey = foldName(row?.login ?? at.login);
    await callDurable(() => this.env.USERS.getByName(githubUserId).recordMembership(home, loginKey, member, version), {
      idempotent: true,
    });
  }

  #alreadyApplied(operationId: string): boolean {
    const row = this.#db
      .select()
      .from(schema.appliedOperations)
      .where(eq(schema.appliedOperations.operationId, operationId))
      .get();
    return row !== undefined;
  }

  #remember(operationId: string, now: number): void {
    this.#db.insert(schema.appliedOperations).values({ operationId, appliedAt: now }).run();
    this.#db
      .delete(schema.appliedOperations)
      .where(lt(schema.appliedOperations.appliedAt, now - OPERATION_MEMORY_MS))
      .run();
  }

  #count(where: SQL): number {
    return this.#db.select({ n: count() }).from(schema.members).where(where).get()?.n ?? 0;
  }

  /**
   * The installation when it answers for `login`: installed (GitHub did not delete it) and `login`
   * is its current login, case-insensitively. Otherwise the organization answers 404: an old login
   * after a rename, or a directory entry gone stale, never reaches this organization's data.
   */
  #installation(login: string): InstallationRow | undefined {
    const row = this.#installationRow();
    return row?.installed && foldName(row.login) === foldName(login) ? row : undefined;
  }

  #directoryIdentity(row: InstallationRow): DirectoryIdentity {
    const { homeKey: home, login, accountId, installationId } = row;
    return { home, login, accountId, installationId, version: this.#membershipClock() };
  }

  #installationRow(): InstallationRow | undefined {
    return this.#db.select().from(schema.installation).where(eq(schema.installation.id, 1)).get();
  }

  #member(githubUserId: string): MemberRow | undefined {
    return this.#db.select().from(schema.members).where(eq(schema.members.githubUserId, githubUserId)).get();
  }

  /** Repository keys a non-admin member may read: public ones, and private ones naming them (never removed ones). */
  #reposVisibleTo(githubUserId: string): string[] {
    // One row holding the list as JSON: workerd hands SQLite rows to JavaScript one by one, which
    // for a few hundred repositories cost more than the query itself (measured: 0.9 ms of the
    // export's 15 ms for 175 of 200 repositories; 0.5 ms as one row).
    const row = this.#db
      .select({ repoKeys: sql<string>`json_group_array(${schema.repositories.repoKey})` })
      .from(schema.repositories)
      .leftJoin(
        schema.collaborators,
        and(eq(schema.collaborators.repoKey, schema.repositories.repoKey), eq(schema.collaborators.githubUserId, githubUserId)),
      )
      .where(
        and(
          eq(schema.repositories.removed, false),
          or(eq(schema.repositories.private, false), isNotNull(schema.collaborators.githubUserId)),
        ),
      )
      .get();
    return JSON.parse(row?.repoKeys ?? "[]") as string[];
  }
}

/** Unreachable: memberAccess refuses a missing installation. */
const fail = (): DurableResult<never> => ({ ok: false, code: "internal_error", message: "An unexpected error occurred." });
