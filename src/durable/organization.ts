import { DurableObject } from "cloudflare:workers";
import { and, count, eq, isNotNull, lt, or, type SQL } from "drizzle-orm";
import { type DrizzleSqliteDODatabase, drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/organization/migrations.js";
import { type AnalyticsAccess, decideAnalyticsAccess } from "../analytics/access";
import { type DurableResult, ok } from "../lib/durable-call";
import { formatInstant } from "../lib/time";
import { decideMemberChanges, isChange, type MemberChange, type MemberUpdate, memberAccess } from "../members/rules";
import type { Member, MemberInput, MemberUpdateResult } from "../schemas/member";
import type { Organization, OrganizationInput } from "../schemas/organization";
import type { Repository, RepositoryInput } from "../schemas/repository";
import type { GithubRepository, OrganizationChange } from "../webhooks/changes";
import * as schema from "./organization-schema";

/** How long a changing PATCH is remembered for its retries. */
const OPERATION_MEMORY_MS = 3_600_000;

/** How long an applied webhook delivery is remembered: past the receiver's 7-day dedupe marker. */
const DELIVERY_MEMORY_MS = 8 * 24 * 3_600_000;

/**
 * Who changed a member: a PATCH (`api`), the control plane's sync (`sync`) or a GitHub webhook
 * (`github`). The audit log (contract section 8) records it with every member added, removed or
 * changed; see `#memberChanged`.
 */
export type MemberSource = "api" | "sync" | "github";

/** A repository rename whose D1 rows still have to follow (see `pendingRenames`). */
export interface PendingRename {
  fromKey: string;
  toName: string;
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
      installed: true,
    };
    this.#db.insert(schema.installation).values(row).onConflictDoUpdate({ target: schema.installation.id, set: row }).run();
    return toOrganization(row);
  }

  /** Control plane: registers a repository and replaces its collaborator list. */
  putRepository(orgLogin: string, name: string, input: RepositoryInput): Repository {
    const repoKey = name.toLowerCase();
    const collaborators = [...new Set(input.collaborators)].sort();
    this.ctx.storage.transactionSync(() => {
      this.#writeRepository({ name, private: input.private, githubId: null });
      this.#db.delete(schema.collaborators).where(eq(schema.collaborators.repoKey, repoKey)).run();
      for (const githubUserId of collaborators) {
        this.#db.insert(schema.collaborators).values({ repoKey, githubUserId }).run();
      }
    });
    return { org: orgLogin, name, private: input.private, collaborators };
  }

  /** Control plane: member sync from the source of truth. No guards, no seat capacity check. */
  putMember(githubUserId: string, input: MemberInput, source: MemberSource = "sync"): Member {
    return this.ctx.storage.transactionSync(() => toMember(this.#writeMember(githubUserId, input, source)));
  }

  /** Control plane: the person left the GitHub organization. Idempotent. */
  deleteMember(githubUserId: string, source: MemberSource = "sync"): void {
    this.ctx.storage.transactionSync(() => this.#removeMember(githubUserId, source));
  }

  /**
   * GitHub webhook consumer: applies one change (contract section 9) through the same write paths
   * as the control plane, in one transaction with the delivery's ledger entry, so a delivery
   * applied twice changes nothing the second time. Returns whether it was applied now, and the
   * repository renames whose D1 rows still have to follow (also those of an earlier attempt).
   */
  applyGithubChange(
    deliveryKey: string,
    login: string,
    change: OrganizationChange,
  ): { applied: boolean; renames: PendingRename[] } {
    const applied = this.ctx.storage.transactionSync(() => {
      const now = Date.now();
      const seen = this.#db
        .select()
        .from(schema.appliedDeliveries)
        .where(eq(schema.appliedDeliveries.deliveryKey, deliveryKey))
        .get();
      if (seen) return false;
      this.#applyChange(login, change);
      this.#db.insert(schema.appliedDeliveries).values({ deliveryKey, appliedAt: now }).run();
      this.#db
        .delete(schema.appliedDeliveries)
        .where(lt(schema.appliedDeliveries.appliedAt, now - DELIVERY_MEMORY_MS))
        .run();
      return true;
    });
    return { applied, renames: this.#db.select().from(schema.pendingRenames).all() };
  }

  /** The current name of a repository known by GitHub id (a pull request follows its repository's renames). */
  repositoryName(githubId: number): string | null {
    return this.#db.select().from(schema.repositories).where(eq(schema.repositories.githubId, githubId)).get()?.name ?? null;
  }

  /** The webhook consumer moved a rename's D1 rows. */
  renameFollowed(fromKey: string): void {
    this.#db.delete(schema.pendingRenames).where(eq(schema.pendingRenames.fromKey, fromKey)).run();
  }

  #applyChange(login: string, change: OrganizationChange): void {
    switch (change.kind) {
      case "installation_created": {
        const row = this.#installationRow();
        if (row) {
          // A plan or subscription billing has set stays; a new installation after a deletion is not suspended.
          const set = { login, installationId: change.installationId, installedAt: change.installedAt, installed: true };
          this.#db
            .update(schema.installation)
            .set(row.installed ? set : { ...set, blocked: false })
            .where(eq(schema.installation.id, 1))
            .run();
        } else {
          this.#db
            .insert(schema.installation)
            .values({
              id: 1,
              login,
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
          "github",
        );
        return;
      }
      case "member_removed":
        this.#removeMember(change.githubUserId, "github");
        return;
    }
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

  /** The one write of a member's synchronised state (control plane and GitHub). Call inside a transaction. */
  #writeMember(githubUserId: string, input: Omit<MemberRow, "githubUserId">, source: MemberSource): MemberRow {
    const before = this.#member(githubUserId);
    const row: MemberRow = { githubUserId, ...input };
    this.#db.insert(schema.members).values(row).onConflictDoUpdate({ target: schema.members.githubUserId, set: row }).run();
    this.#memberChanged(source, before, row);
    return row;
  }

  #removeMember(githubUserId: string, source: MemberSource): void {
    const before = this.#member(githubUserId);
    if (!before) return;
    this.#db.delete(schema.members).where(eq(schema.members.githubUserId, githubUserId)).run();
    this.#memberChanged(source, before, undefined);
  }

  /**
   * The audit-log hook (contract section 8): every member the control plane's sync (`sync`) or
   * GitHub (`github`) adds, removes or changes passes here, inside the transaction that made the
   * change. The audit log (another branch) writes its entry here: `member.added` (before
   * undefined), `member.removed` (after undefined), `member.updated` when seat or role differ;
   * nothing when nothing changed. Guarded PATCHes (`api`) change members in `updateMembers`,
   * which records its own entries (with the caller as actor) or calls this with `api`.
   */
  #memberChanged(_source: MemberSource, _before: MemberRow | undefined, _after: MemberRow | undefined): void {}

  /** Whether and what the caller may export (`analytics/access.ts`). */
  analyticsAccess(callerUserId: string, repoName: string | null): DurableResult<AnalyticsAccess> {
    return decideAnalyticsAccess(
      {
        installation: this.#installation(),
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

  /** The installation, unless GitHub said it was deleted (the organization then answers 404). */
  #installation(): InstallationRow | undefined {
    const row = this.#installationRow();
    return row?.installed ? row : undefined;
  }

  #installationRow(): InstallationRow | undefined {
    return this.#db.select().from(schema.installation).where(eq(schema.installation.id, 1)).get();
  }

  #member(githubUserId: string): MemberRow | undefined {
    return this.#db.select().from(schema.members).where(eq(schema.members.githubUserId, githubUserId)).get();
  }

  /** Repository keys a non-admin member may read: public ones, and private ones naming them (never removed ones). */
  #reposVisibleTo(githubUserId: string): string[] {
    return this.#db
      .select({ repoKey: schema.repositories.repoKey })
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
      .all()
      .map((r) => r.repoKey);
  }
}

/** Unreachable: memberAccess refuses a missing installation. */
const fail = (): DurableResult<never> => ({ ok: false, code: "internal_error", message: "An unexpected error occurred." });
