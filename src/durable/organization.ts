import { DurableObject } from "cloudflare:workers";
import { and, count, desc, eq, isNotNull, lt, or, type SQL, sql } from "drizzle-orm";
import { type DrizzleSqliteDODatabase, drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import { type AnalyticsAccess, decideAnalyticsAccess } from "../analytics/access";
import { callDurable, type DurableResult, ok } from "../lib/durable-call";
import { foldName } from "../lib/names";
import { formatInstant } from "../lib/time";
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
import { type MemberFilters, memberPageQuery } from "./member-queries";
import * as schema from "./organization-schema";
import { orgKey } from "./stubs";

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

export const toMember = (row: MemberRow): Member => ({
  githubUserId: row.githubUserId,
  githubLogin: row.githubLogin,
  workEmail: row.workEmail,
  role: row.role,
  seat: row.seat,
  isBot: row.isBot,
});

/**
 * One object per organization (named by the lower-cased login). It owns the organization's
 * installation, plan, subscription and seats, its members and its repositories with their access
 * lists. It loads facts, asks the rules (`members/rules.ts`, `analytics/access.ts`) and writes
 * their outcome, each write in one synchronous transaction, so a member sync and a PATCH of the
 * same organization are serialised and never half applied. Only the public methods are reachable
 * over RPC; everything else is `#private`.
 */
export class OrganizationObject extends DurableObject<Env> {
  readonly #db: Db;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage, { schema });
    ctx.blockConcurrencyWhile(async () => {
      await migrate(this.#db, migrations);
    });
  }

  /** Control plane: registers or updates the installation, plan and subscription. */
  putOrganization(login: string, input: OrganizationInput): Organization {
    const row: InstallationRow = {
      id: 1,
      login,
      installationId: input.installationId,
      installedAt: input.installedAt,
      blocked: input.blocked,
      plan: input.plan,
      subscriptionStatus: input.subscription.status,
      billedThroughService: input.subscription.billedThroughService,
      purchasedSeats: input.subscription.purchasedSeats,
    };
    this.#db.insert(schema.installation).values(row).onConflictDoUpdate({ target: schema.installation.id, set: row }).run();
    return toOrganization(row);
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(orgLogin: string, name: string, input: RepositoryInput): Repository {
    const repoKey = foldName(name);
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      const row = { repoKey, name, private: input.private };
      this.#db
        .insert(schema.repositories)
        .values(row)
        .onConflictDoUpdate({ target: schema.repositories.repoKey, set: row })
        .run();
      this.#db.delete(schema.collaborators).where(eq(schema.collaborators.repoKey, repoKey)).run();
      for (const githubUserId of collaborators) {
        this.#db.insert(schema.collaborators).values({ repoKey, githubUserId }).run();
      }
    });
    return { org: orgLogin, name, private: input.private, collaborators };
  }

  /**
   * Member sync from the source of truth (the control plane today, GitHub webhooks later): no
   * guards, no seat capacity check. A member added, or a seat or role changed, is written to the
   * audit log in the same transaction; a sync that changes neither writes none. Then the member's
   * organizations index (their `UserObject`) learns the membership, after the commit: if that
   * fails the call fails, and a retry (the write is idempotent) tells it again.
   */
  async putMember(org: string, githubUserId: string, input: MemberInput, origin: ChangeOrigin): Promise<Member> {
    const row: MemberRow = { githubUserId, ...input };
    const version = this.ctx.storage.transactionSync(() => {
      const before = this.#member(githubUserId);
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
      return this.#tickMembershipClock();
    });
    await this.#tellIndex(org, githubUserId, true, version);
    return toMember(row);
  }

  /**
   * The person left the GitHub organization. Idempotent. Removing a member writes
   * `member.removed`; removing nobody writes nothing. The member's index is told after the commit.
   */
  async deleteMember(org: string, githubUserId: string, origin: ChangeOrigin): Promise<void> {
    const version = this.ctx.storage.transactionSync(() => {
      const before = this.#member(githubUserId);
      if (before) {
        this.#db.delete(schema.members).where(eq(schema.members.githubUserId, githubUserId)).run();
        this.#audit(Date.now(), { ...origin, actor: origin.actor ?? null }, [
          { action: "member.removed", githubUserId, before: stateOf(before), after: null },
        ]);
      }
      return this.#tickMembershipClock();
    });
    await this.#tellIndex(org, githubUserId, false, version);
  }

  /**
   * For `GET /api/v1/organizations`: whether the user is a member (the authority the user's index
   * defers to), and their entry when the organization is also installed.
   */
  membershipOf(githubUserId: string): MembershipAnswer {
    const installation = this.#installation();
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
  listMembers(callerUserId: string, filters: MemberFilters): DurableResult<MemberRows> {
    const installation = this.#installation();
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
  readAuditLog(callerUserId: string, query: { githubUserId?: string; before?: number; limit: number }): DurableResult<AuditRows> {
    const refused = memberAccess(this.#installation(), this.#member(callerUserId), "admin");
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

  /** Whether and what the caller may export (`analytics/access.ts`). */
  analyticsAccess(callerUserId: string, repoName: string | null): DurableResult<AnalyticsAccess> {
    return decideAnalyticsAccess(
      {
        installation: this.#installation(),
        caller: this.#member(callerUserId),
        isRegistered: (repoKey) =>
          this.#db.select().from(schema.repositories).where(eq(schema.repositories.repoKey, repoKey)).get() !== undefined,
        visibleRepoKeys: () => this.#reposVisibleTo(callerUserId),
      },
      repoName,
    );
  }

  /** Reads one member; any member of the organization may read any member. */
  readMember(callerUserId: string, githubUserId: string): DurableResult<Member> {
    const refused = memberAccess(this.#installation(), this.#member(callerUserId), "read");
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
    callerUserId: string,
    changes: MemberChange[],
    operationId: string,
    pathPrefix: string | null,
    correlationId: string,
  ): DurableResult<MemberChangesResult> {
    return this.ctx.storage.transactionSync(() => {
      const installation = this.#installation();
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

  /** Tells the member's organizations index (their `UserObject`); idempotent, so retried once. */
  async #tellIndex(org: string, githubUserId: string, member: boolean, version: number): Promise<void> {
    await callDurable(() => this.env.USERS.getByName(githubUserId).recordMembership(orgKey(org), member, version), {
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

  #installation(): InstallationRow | undefined {
    return this.#db.select().from(schema.installation).where(eq(schema.installation.id, 1)).get();
  }

  #member(githubUserId: string): MemberRow | undefined {
    return this.#db.select().from(schema.members).where(eq(schema.members.githubUserId, githubUserId)).get();
  }

  /** Repository keys a non-admin member may read: public ones, and private ones naming them. */
  #reposVisibleTo(githubUserId: string): string[] {
    return this.#db
      .select({ repoKey: schema.repositories.repoKey })
      .from(schema.repositories)
      .leftJoin(
        schema.collaborators,
        and(eq(schema.collaborators.repoKey, schema.repositories.repoKey), eq(schema.collaborators.githubUserId, githubUserId)),
      )
      .where(or(eq(schema.repositories.private, false), isNotNull(schema.collaborators.githubUserId)))
      .all()
      .map((r) => r.repoKey);
  }
}

/** Unreachable: memberAccess refuses a missing installation. */
const fail = (): DurableResult<never> => ({ ok: false, code: "internal_error", message: "An unexpected error occurred." });
