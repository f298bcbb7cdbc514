import { DurableObject } from "cloudflare:workers";
import { and, count, eq, isNotNull, lt, or, type SQL } from "drizzle-orm";
import { type DrizzleSqliteDODatabase, drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import { type AnalyticsAccess, decideAnalyticsAccess } from "../analytics/access";
import { type DurableResult, ok } from "../lib/durable-call";
import { foldName } from "../lib/names";
import { formatInstant } from "../lib/time";
import { decideMemberChanges, isChange, type MemberChange, type MemberUpdate, memberAccess } from "../members/rules";
import type { Member, MemberInput, MemberUpdateResult } from "../schemas/member";
import type { Organization, OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import * as schema from "./organization-schema";

/** How long a changing PATCH is remembered for its retries. */
const OPERATION_MEMORY_MS = 3_600_000;

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

  /** Control plane: member sync from the source of truth. No guards, no seat capacity check. */
  putMember(githubUserId: string, input: MemberInput): Member {
    const row: MemberRow = { githubUserId, ...input };
    this.#db.insert(schema.members).values(row).onConflictDoUpdate({ target: schema.members.githubUserId, set: row }).run();
    return toMember(row);
  }

  /** Control plane: the person left the GitHub organization. Idempotent. */
  deleteMember(githubUserId: string): void {
    this.#db.delete(schema.members).where(eq(schema.members.githubUserId, githubUserId)).run();
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
   */
  updateMembers(
    callerUserId: string,
    changes: MemberChange[],
    operationId: string,
    pathPrefix: string | null,
  ): DurableResult<MemberChangesResult> {
    return this.ctx.storage.transactionSync(() => {
      const installation = this.#installation();
      const refused = memberAccess(installation, this.#member(callerUserId), "write");
      if (refused || !installation) return refused ?? fail();
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
      for (const update of decision.updates.filter(isChange)) {
        this.#db.update(schema.members).set(update.after).where(eq(schema.members.githubUserId, update.githubUserId)).run();
      }
      if (decision.updates.some(isChange)) this.#remember(operationId, now);
      return ok({
        results: decision.updates.map((u) => toResult(u, decision.availableSeats)),
        availableSeats: decision.availableSeats,
      });
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
