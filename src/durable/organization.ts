import { DurableObject } from "cloudflare:workers";
import { and, count, eq, isNotNull, lt, or } from "drizzle-orm";
import { type DrizzleSqliteDODatabase, drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import { formatInstant } from "../lib/time";
import type { Member, MemberInput, MemberPatch, MemberUpdateResult } from "../schemas/member";
import type { Organization, OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import { type DurableResult, ok } from "./call";
import * as schema from "./organization-schema";

/** What the analytics export may read of an organization. */
export interface AnalyticsAccess {
  installedAt: number;
  /** Lower-cased repository names the caller may read; null for every repository (an admin). */
  accessibleRepoKeys: string[] | null;
}

const fail = (
  code: Extract<DurableResult<never>, { ok: false }>["code"],
  message: string,
  details: { path: string; message: string }[] = [],
) => ({ ok: false, code, message, details }) as const;

/** How long a changing PATCH is remembered for its retries. */
const OPERATION_MEMORY_MS = 3_600_000;

type MemberState = MemberUpdateResult["before"];

const updateResult = (
  githubUserId: string,
  before: MemberState,
  after: MemberState,
  availableSeats: number,
): MemberUpdateResult => ({
  githubUserId,
  before,
  after,
  changed: before.seat !== after.seat || before.role !== after.role,
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
 * lists. Every write runs in one synchronous transaction, so a member sync and a PATCH of the
 * same organization are serialised and never half applied.
 */
export class OrganizationObject extends DurableObject<Env> {
  private readonly db: Db;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
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
    this.db.insert(schema.installation).values(row).onConflictDoUpdate({ target: schema.installation.id, set: row }).run();
    return toOrganization(row);
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(orgLogin: string, name: string, input: RepositoryInput): Repository {
    const repoKey = name.toLowerCase();
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      const row = { repoKey, name, private: input.private };
      this.db.insert(schema.repositories).values(row).onConflictDoUpdate({ target: schema.repositories.repoKey, set: row }).run();
      this.db.delete(schema.collaborators).where(eq(schema.collaborators.repoKey, repoKey)).run();
      for (const githubUserId of collaborators) {
        this.db.insert(schema.collaborators).values({ repoKey, githubUserId }).run();
      }
    });
    return { org: orgLogin, name, private: input.private, collaborators };
  }

  /** Control plane: member sync from the source of truth. No guards, no seat capacity check. */
  putMember(githubUserId: string, input: MemberInput): Member {
    const row: MemberRow = { githubUserId, ...input };
    this.db.insert(schema.members).values(row).onConflictDoUpdate({ target: schema.members.githubUserId, set: row }).run();
    return toMember(row);
  }

  /**
   * Who may export analytics, in the contract's order: installation exists (404), not blocked,
   * Pro plan, caller is a member, caller can access the requested repository (403s). On success,
   * the repositories the caller may see: every one for an admin (null), otherwise the public
   * ones and the private ones listing the caller as collaborator. A repository known only from
   * events counts as private until the control plane registers it.
   */
  analyticsAccess(callerUserId: string, repoName: string | null): DurableResult<AnalyticsAccess> {
    const installation = this.installation();
    if (!installation) return fail("org_not_found", "The organization cannot be resolved to an installation.");
    if (installation.blocked) return fail("installation_blocked", "The installation of this organization is blocked.");
    if (installation.plan !== "pro")
      return fail("plan_required", "The analytics export requires the organization to be on the Pro plan.");
    const caller = this.member(callerUserId);
    if (!caller) return fail("org_access_denied", "You do not have access to this organization.");
    const accessible = caller.role === "admin" ? null : this.reposVisibleTo(callerUserId);
    if (repoName !== null && accessible !== null && !accessible.includes(repoName.toLowerCase())) {
      return fail("repo_access_denied", "You do not have access to this repository, or it does not exist.");
    }
    return ok({ installedAt: installation.installedAt, accessibleRepoKeys: accessible });
  }

  /**
   * Reads one member. Any member of the organization (admin, member or viewer) may read any
   * member. Order: 404 organization, 403 blocked, 403 not a member, 404 member.
   */
  readMember(callerUserId: string, githubUserId: string): DurableResult<Member> {
    const gate = this.memberGate(callerUserId, "read");
    if (!gate.ok) return gate;
    const target = this.member(githubUserId);
    if (!target) return fail("member_not_found", "No member with this githubUserId in the organization.");
    return ok(toMember(target));
  }

  /**
   * Changes a member's seat and/or role, atomically: the preconditions, both guards, the state
   * rules (bot admin, last admin, seat capacity), the write and the result are one synchronous
   * transaction, so no other request of this organization can interleave.
   *
   * `operationId` identifies the HTTP request. If a retry of the same request finds it already
   * applied, it is answered as "desired equals current" (200, changed false) rather than as a
   * guard mismatch against its own earlier write.
   */
  updateMember(
    callerUserId: string,
    githubUserId: string,
    patch: MemberPatch,
    operationId: string,
  ): DurableResult<MemberUpdateResult> {
    return this.ctx.storage.transactionSync(() => {
      const gate = this.memberGate(callerUserId, "write");
      if (!gate.ok) return gate;
      const target = this.member(githubUserId);
      if (!target) return fail("member_not_found", "No member with this githubUserId in the organization.");
      const before = { seat: target.seat, role: target.role };
      const purchased = gate.installation.purchasedSeats;

      const alreadyApplied = this.db
        .select()
        .from(schema.appliedOperations)
        .where(eq(schema.appliedOperations.operationId, operationId))
        .get();
      if (alreadyApplied) return ok(updateResult(githubUserId, before, before, this.availableSeats(purchased)));

      const mismatches: { path: string; message: string }[] = [];
      if (patch.seat !== undefined && patch.expectedSeat !== before.seat) {
        mismatches.push({ path: "expectedSeat", message: `current value is ${before.seat}` });
      }
      if (patch.role !== undefined && patch.expectedRole !== before.role) {
        mismatches.push({ path: "expectedRole", message: `current value is ${before.role}` });
      }
      if (mismatches.length > 0) {
        return fail(
          "expected_value_mismatch",
          "The member changed since you read it. Read it again and retry with the current values.",
          mismatches,
        );
      }

      const after = { seat: patch.seat ?? before.seat, role: patch.role ?? before.role };
      if (after.role === "admin" && before.role !== "admin" && target.isBot) {
        return fail("bot_cannot_be_admin", "A bot account cannot be an admin.", [
          { path: "role", message: "bot accounts cannot be admins" },
        ]);
      }
      if (before.role === "admin" && after.role !== "admin" && this.adminCount() <= 1) {
        return fail("last_admin", "The organization's last admin cannot lose the admin role. Make another member admin first.", [
          { path: "role", message: "this member is the last admin" },
        ]);
      }
      if (after.seat && !before.seat && this.availableSeats(purchased) <= 0) {
        return fail(
          "no_seat_available",
          "No seat is available: every purchased seat is taken. This operation never buys seats.",
          [{ path: "seat", message: `all ${purchased} purchased seats are in use` }],
        );
      }

      const changed = after.seat !== before.seat || after.role !== before.role;
      if (changed) {
        this.db.update(schema.members).set(after).where(eq(schema.members.githubUserId, githubUserId)).run();
        const now = Date.now();
        this.db.insert(schema.appliedOperations).values({ operationId, appliedAt: now }).run();
        this.db
          .delete(schema.appliedOperations)
          .where(lt(schema.appliedOperations.appliedAt, now - OPERATION_MEMORY_MS))
          .run();
      }
      return ok(updateResult(githubUserId, before, after, this.availableSeats(purchased)));
    });
  }

  /**
   * Who may use the member endpoints, in the contract's order: 404 no installation, 403 blocked,
   * 403 not a member; for writes also 403 not an admin, then 403 no active Team or Pro
   * subscription billed through the service.
   */
  private memberGate(callerUserId: string, need: "read" | "write") {
    const installation = this.installation();
    if (!installation) return fail("org_not_found", "The organization cannot be resolved to an installation.");
    if (installation.blocked) return fail("installation_blocked", "The installation of this organization is blocked.");
    const caller = this.member(callerUserId);
    if (!caller) return fail("org_access_denied", "You are not a member of this organization.");
    if (need === "write") {
      if (caller.role !== "admin") return fail("not_org_admin", "Only an admin of the organization can change members.");
      const paid =
        installation.subscriptionStatus === "active" &&
        installation.billedThroughService &&
        (installation.plan === "team" || installation.plan === "pro");
      if (!paid) {
        return fail(
          "subscription_required",
          "Changing members needs an active Team or Pro subscription billed through the service.",
        );
      }
    }
    return { ok: true as const, installation, caller };
  }

  /** Purchased seats minus members holding one, never below 0. */
  private availableSeats(purchased: number): number {
    const row = this.db.select({ n: count() }).from(schema.members).where(eq(schema.members.seat, true)).get();
    return Math.max(0, purchased - (row?.n ?? 0));
  }

  private adminCount(): number {
    return this.db.select({ n: count() }).from(schema.members).where(eq(schema.members.role, "admin")).get()?.n ?? 0;
  }

  private installation(): InstallationRow | undefined {
    return this.db.select().from(schema.installation).where(eq(schema.installation.id, 1)).get();
  }

  private member(githubUserId: string): MemberRow | undefined {
    return this.db.select().from(schema.members).where(eq(schema.members.githubUserId, githubUserId)).get();
  }

  /** Repository keys a non-admin member may read: public ones, and private ones naming them. */
  private reposVisibleTo(githubUserId: string): string[] {
    return this.db
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

  /** Control plane: the person left the GitHub organization. Idempotent. */
  deleteMember(githubUserId: string): void {
    this.db.delete(schema.members).where(eq(schema.members.githubUserId, githubUserId)).run();
  }
}
