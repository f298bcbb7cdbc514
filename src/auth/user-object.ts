import { DurableObject } from "cloudflare:workers";
import { and, asc, eq, lt, lte, sql } from "drizzle-orm";
import { type DrizzleSqliteDODatabase, drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/user/migrations.js";
import { generateApiKey, hashApiKey, type KeyKind } from "../auth/api-key";
import { type KeyRecord, keyRecordKey, kvExpiry } from "../auth/key-record";
import { type DurableResult, ok } from "../lib/durable-call";
import { formatInstant } from "../lib/time";
import { UntilWrite } from "../lib/until-write";
import { judgeSession, sessionOver, toHour } from "../rules/sessions";
import type { ApiKeyCreated, ApiKeySummary, User, UserInput } from "../schemas/user";
import {
  deleteEveryGrant,
  deleteGrant,
  findGrant,
  type GrantSummary,
  grantScopes,
  insertGrant,
  listGrants,
  type NewGrant,
  touchGrant,
} from "./grant-store";
import { countRequest, type QuotaPolicy, type QuotaState, type QuotaVerdict } from "./quota";
import type { Scope } from "./scopes";
import * as schema from "./user-schema";

type Db = DrizzleSqliteDODatabase<typeof schema>;
type AccountRow = typeof schema.account.$inferSelect;
type ApiKeyRow = typeof schema.apiKeys.$inferSelect;

/** An entry of the organizations index: the organization's home key and its lower-cased login. */
export interface MembershipPosition {
  orgKey: string;
  loginKey: string;
}

export type KeyVerdict = { valid: true; user: User; quota: QuotaVerdict | null } | { valid: false };
export type GrantVerdict = { valid: true; user: User; scopes: Scope[]; quota: QuotaVerdict | null } | { valid: false };
export type SessionVerdict = { valid: true; user: User; csrfToken: string; quota: QuotaVerdict | null } | { valid: false };

/** How soon a key's "last used" reaches storage when no quota sets the pace. */
const DEFAULT_PERSIST_MS = 1000;

/**
 * One object per user (named by the GitHub user id): the strongly consistent answer to "is this
 * still the owner's current, unexpired key, and is the owner not blocked?". Workers KV only maps
 * a key hash to its record; KV can serve a deleted value for a minute or more elsewhere, so the
 * verdict always comes from here and revocation takes effect on the very next request.
 */
export class UserObject extends DurableObject<Env> {
  readonly #db: Db;
  /** Quota counters loaded or counted since the object started; see `#counted`. */
  readonly #quotas = new Map<KeyKind, QuotaState>();
  /** Keys' "last used" hours not written yet (by kind, for the key id that was used); see `#persist`. */
  readonly #lastUsed = new Map<KeyKind, { keyId: string; at: number }>();
  #persistTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * Writes of the account and its keys, one after the other: each awaits KV, and interleaved they
   * could answer a key already replaced, or leave a lookup for a blocked owner.
   */
  #keyWrites: Promise<unknown> = Promise.resolve();
  /** The account and its current key of each kind (read on every request), until the next write. */
  readonly #keys: UntilWrite<{ account: AccountRow | undefined; key: ApiKeyRow | undefined }>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage, { schema });
    this.#keys = new UntilWrite(ctx.storage.sql, { budget: 2 });
    ctx.blockConcurrencyWhile(async () => {
      await migrate(this.#db, migrations);
    });
  }

  #account() {
    return this.#db.select().from(schema.account).where(eq(schema.account.id, 1)).get();
  }

  /** Runs `write` after every earlier account or key write has finished. */
  #serialised<T>(write: () => Promise<T>): Promise<T> {
    const result = this.#keyWrites.then(write);
    this.#keyWrites = result.catch(() => {});
    return result;
  }

  /**
   * Control plane: creates or updates the user; blocking takes effect on the next request. A
   * blocked owner's keys lose their KV lookups, so they are refused like unknown keys (a KV miss,
   * no call here: no timing tells a stolen key's holder "real key, blocked owner"); unblocking
   * writes them again.
   */
  putUser(githubUserId: string, input: UserInput): Promise<User> {
    return this.#serialised(async () => {
      const before = this.#account();
      const row = { id: 1, githubUserId, githubLogin: input.githubLogin, blocked: input.blocked };
      this.#db.insert(schema.account).values(row).onConflictDoUpdate({ target: schema.account.id, set: row }).run();
      // Blocking ends every OAuth grant at once (contract section 19); unblocking does not bring them back.
      if (input.blocked) deleteEveryGrant(this.#db);
      if (before !== undefined && before.blocked !== input.blocked) {
        const keys = this.#db.select().from(schema.apiKeys).all();
        const now = Date.now();
        for (const key of keys) {
          if (input.blocked) await this.#forgetLookup(key.keyHash);
          else if (key.expiresAt === null || key.expiresAt > now) await this.#writeLookup(githubUserId, key, now);
        }
      }
      return { githubUserId, githubLogin: input.githubLogin, blocked: input.blocked };
    });
  }

  /**
   * GitHub sign-in (contract section 13): records the user as the control plane's PUT would, with
   * the login GitHub just reported, but never changes `blocked` (a new user starts unblocked). One
   * at a time with the control plane's writes, so a concurrent block is not undone.
   */
  recordGithubUser(githubUserId: string, githubLogin: string): Promise<User> {
    return this.#serialised(async () => {
      const blocked = this.#account()?.blocked ?? false;
      const row = { id: 1, githubUserId, githubLogin, blocked };
      this.#db
        .insert(schema.account)
        .values(row)
        .onConflictDoUpdate({ target: schema.account.id, set: { githubUserId, githubLogin } })
        .run();
      return { githubUserId, githubLogin, blocked };
    });
  }

  async #writeLookup(userId: string, key: ApiKeyRow, now: number): Promise<void> {
    const record: KeyRecord = {
      v: 1,
      keyId: key.keyId,
      userId,
      kind: key.kind,
      createdAt: key.createdAt,
      expiresAt: key.expiresAt,
    };
    await this.env.API_KEYS.put(keyRecordKey(key.keyHash), JSON.stringify(record), kvExpiry(key.expiresAt, now));
  }

  /**
   * Creates the user's key of `kind`, replacing (and so invalidating) the previous one.
   * The KV record is written before the key becomes current here: a key of an unblocked owner is
   * never current without a lookup entry, and a failed call leaves the previous key working.
   * Creations run one at a time, so each answers the key that is current when it answers.
   */
  createKey(kind: KeyKind, expiresAt: number | null, now: number): Promise<DurableResult<ApiKeyCreated>> {
    return this.#serialised(() => this.#createKey(kind, expiresAt, now));
  }

  async #createKey(kind: KeyKind, expiresAt: number | null, now: number): Promise<DurableResult<ApiKeyCreated>> {
    const account = this.#account();
    if (!account)
      return {
        ok: false,
        code: "not_found",
        message: "User not found. Register it with PUT /internal/v1/users/{githubUserId} first.",
      };
    const key = generateApiKey(kind);
    const keyHash = await hashApiKey(key);
    const keyId = crypto.randomUUID();
    const row = { kind, keyId, keyHash, createdAt: now, expiresAt, lastUsedAt: null };
    // A blocked owner's keys have no lookup (see putUser); unblocking writes it.
    if (!account.blocked) await this.#writeLookup(account.githubUserId, row, now);

    const previous = this.ctx.storage.transactionSync(() => {
      const before = this.#db.select().from(schema.apiKeys).where(eq(schema.apiKeys.kind, kind)).get();
      this.#db.insert(schema.apiKeys).values(row).onConflictDoUpdate({ target: schema.apiKeys.kind, set: row }).run();
      return before;
    });
    if (previous) await this.#forgetLookup(previous.keyHash);
    return ok({
      key,
      keyId,
      kind,
      createdAt: formatInstant(now),
      expiresAt: expiresAt === null ? null : formatInstant(expiresAt),
    });
  }

  /** Revokes the user's key of `kind`. Idempotent. */
  revokeKey(kind: KeyKind): Promise<void> {
    return this.#serialised(async () => {
      const previous = this.ctx.storage.transactionSync(() => {
        const before = this.#db.select().from(schema.apiKeys).where(eq(schema.apiKeys.kind, kind)).get();
        this.#db.delete(schema.apiKeys).where(eq(schema.apiKeys.kind, kind)).run();
        return before;
      });
      if (previous) await this.#forgetLookup(previous.keyHash);
    });
  }

  /**
   * The verdict on a key record found in KV, and for a valid key the request counted against the
   * owner's quota of that kind, in the same call (contract sections 2 and 7; the count is written
   * shortly after, see `#counted`). Never throws for a bad key: it answers invalid, and an invalid
   * key counts against nobody's quota. The key's "last used" hour is decided here too and written
   * with the counters (no write of its own per request).
   */
  verifyKey(kind: KeyKind, keyId: string, now: number, policy: QuotaPolicy | null): KeyVerdict {
    return this.ctx.storage.transactionSync(() => {
      const { account, key: current } = this.#keys.get(kind, () => ({
        account: this.#account(),
        key: this.#db.select().from(schema.apiKeys).where(eq(schema.apiKeys.kind, kind)).get(),
      }));
      if (!account || account.blocked) return { valid: false };
      if (!current || current.keyId !== keyId) return { valid: false };
      if (current.expiresAt !== null && current.expiresAt <= now) return { valid: false };
      const user = { githubUserId: account.githubUserId, githubLogin: account.githubLogin, blocked: false };
      const hour = toHour(now);
      const known = this.#lastUsed.get(kind);
      if ((known?.keyId === keyId ? known.at : current.lastUsedAt) !== hour) {
        this.#lastUsed.set(kind, { keyId, at: hour });
        this.#persistSoon(policy?.persistDelayMs ?? DEFAULT_PERSIST_MS);
      }
      return { valid: true, user, quota: this.#count(kind, policy, now) };
    });
  }

  /** Counts one request against the owner's quota of `kind` (null: no quota configured). */
  #count(kind: KeyKind, policy: QuotaPolicy | null, now: number): QuotaVerdict | null {
    if (policy === null) return null;
    const { verdict, next } = countRequest(this.#quotaState(kind), policy, now);
    if (verdict.allowed) this.#counted(kind, next, policy);
    return verdict;
  }

  /** The app's key list (contract section 13): each kind's current key, or null. */
  listKeys(): Record<KeyKind, ApiKeySummary | null> {
    const rows = this.#db.select().from(schema.apiKeys).all();
    const summary = (kind: KeyKind): ApiKeySummary | null => {
      const row = rows.find((r) => r.kind === kind);
      if (!row) return null;
      const pending = this.#lastUsed.get(kind);
      const lastUsedAt = pending?.keyId === row.keyId ? pending.at : row.lastUsedAt;
      return {
        createdAt: formatInstant(row.createdAt),
        expiresAt: row.expiresAt === null ? null : formatInstant(row.expiresAt),
        lastUsedAt: lastUsedAt === null ? null : formatInstant(lastUsedAt),
      };
    };
    return { analytics: summary("analytics"), members: summary("members") };
  }

  /**
   * Signs the user in (contract section 13): stores the SHA-256 of the session's cookie token.
   * Sessions that can never be valid again are deleted on the way.
   */
  startSession(tokenHash: string, csrfToken: string, now: number): DurableResult<User> {
    return this.ctx.storage.transactionSync(() => {
      const account = this.#account();
      if (!account) return { ok: false, code: "not_found", message: "No such user." };
      if (account.blocked) return { ok: false, code: "unauthenticated", message: "This account is blocked." };
      const s = schema.sessions;
      for (const old of this.#db.select().from(s).all()) {
        if (sessionOver(old, now)) this.#db.delete(s).where(eq(s.tokenHash, old.tokenHash)).run();
      }
      this.#db.insert(s).values({ tokenHash, csrfToken, createdAt: now, lastSeenAt: now }).run();
      return ok({ githubUserId: account.githubUserId, githubLogin: account.githubLogin, blocked: false });
    });
  }

  /**
   * Whether a session cookie still signs its user in (`rules/sessions.ts`): refused once it is
   * idle or too old, ended, or its user blocked. A valid one counts the request against the
   * quota of `kind` when the route has one, as a key of that kind would.
   */
  verifySession(tokenHash: string, now: number, kind: KeyKind | null, policy: QuotaPolicy | null): SessionVerdict {
    return this.ctx.storage.transactionSync(() => {
      const s = schema.sessions;
      const session = this.#db.select().from(s).where(eq(s.tokenHash, tokenHash)).get();
      const account = this.#account();
      const decision = judgeSession(session, account, now);
      if (!decision.valid || !session || !account) return { valid: false };
      if (decision.touch !== null) this.#db.update(s).set({ lastSeenAt: decision.touch }).where(eq(s.tokenHash, tokenHash)).run();
      const user = { githubUserId: account.githubUserId, githubLogin: account.githubLogin, blocked: false };
      return { valid: true, user, csrfToken: session.csrfToken, quota: kind === null ? null : this.#count(kind, policy, now) };
    });
  }

  /** An approved OAuth grant (contract section 19); answers the ids of earlier grants it replaced. */
  recordGrant(grant: NewGrant, sharedClientId: boolean, now: number): DurableResult<string[]> {
    return this.ctx.storage.transactionSync(() => {
      const account = this.#account();
      if (!account || account.blocked)
        return { ok: false, code: "unauthenticated", message: "This account cannot approve apps." };
      return ok(insertGrant(this.#db, grant, sharedClientId, now));
    });
  }

  /**
   * Whether an OAuth token's grant still works (the person not blocked, the grant not revoked), its
   * approved scopes, and the request counted against the quota of `kind` when set, in one call.
   */
  verifyGrant(grantId: string, now: number, kind: KeyKind | null, policy: QuotaPolicy | null): GrantVerdict {
    return this.ctx.storage.transactionSync(() => {
      const account = this.#account();
      const grant = findGrant(this.#db, grantId);
      if (!account || account.blocked || !grant) return { valid: false };
      touchGrant(this.#db, grant, toHour(now));
      const user = { githubUserId: account.githubUserId, githubLogin: account.githubLogin, blocked: false };
      return { valid: true, user, scopes: grantScopes(grant), quota: kind === null ? null : this.#count(kind, policy, now) };
    });
  }

  listGrants(): GrantSummary[] {
    return listGrants(this.#db);
  }

  /** Revokes a grant: its tokens are refused from the next request on. True when it existed. */
  revokeGrant(grantId: string): boolean {
    return deleteGrant(this.#db, grantId);
  }

  /** Sign-out: the session ends at once. Idempotent. */
  endSession(tokenHash: string): void {
    this.#db.delete(schema.sessions).where(eq(schema.sessions.tokenHash, tokenHash)).run();
  }

  /**
   * Writes the counters and "last used" hours held in memory to storage (joins the caller's
   * transaction, if any). Idempotent. A "last used" of a key replaced meanwhile changes nothing.
   */
  #persist(): void {
    if (this.#persistTimer !== null) clearTimeout(this.#persistTimer);
    this.#persistTimer = null;
    this.ctx.storage.transactionSync(() => {
      for (const [kind, state] of this.#quotas) {
        const row = { kind, ...state };
        this.#db.insert(schema.quotas).values(row).onConflictDoUpdate({ target: schema.quotas.kind, set: row }).run();
      }
      const k = schema.apiKeys;
      for (const [kind, used] of this.#lastUsed) {
        this.#db
          .update(k)
          .set({ lastUsedAt: used.at })
          .where(and(eq(k.kind, kind), eq(k.keyId, used.keyId)))
          .run();
      }
      this.#lastUsed.clear();
    });
  }

  /** Schedules `#persist` (one write for everything counted meanwhile); 0 writes now. */
  #persistSoon(delayMs: number): void {
    if (delayMs === 0) this.#persist();
    else this.#persistTimer ??= setTimeout(() => this.#persist(), delayMs);
  }

  /** The counter of a key kind: memory once loaded (the truth while the object lives), else storage. */
  #quotaState(kind: KeyKind): QuotaState | undefined {
    return this.#quotas.get(kind) ?? this.#db.select().from(schema.quotas).where(eq(schema.quotas.kind, kind)).get();
  }

  /**
   * Counts in memory at once: the object is single-threaded, so the next request sees the count
   * and it is exact. The write follows within `persistDelayMs` (`RATE_LIMIT_PERSIST_MS`, default
   * 1 s), one write for every request counted meanwhile, except for the first request of a window
   * and the one that exhausts the quota: those are written in the verdict's transaction, before
   * answering, so an exhausted quota stays exhausted whatever happens to the object. Writing every
   * count before answering makes each answer wait for a commit (measured: about 10% of a member
   * read, the whole cost of counting) and bills a row written per request. The price: a crash or
   * restart of the object forgets the counts of at most the last `persistDelayMs` inside a window.
   * 0 writes every count before answering.
   */
  #counted(kind: KeyKind, state: QuotaState, policy: QuotaPolicy): void {
    this.#quotas.set(kind, state);
    if (state.used === 1 || state.used >= policy.limit) this.#persist();
    else this.#persistSoon(policy.persistDelayMs);
  }

  /**
   * The organizations index (contract section 8): an organization's object reports a membership
   * of this user after each membership write (and its new login after a rename, its installation
   * and uninstallation), by its home key, with its current lower-cased login, whether it is
   * installed, and its membership clock as version. Only a newer version than the stored one
   * changes anything, so reports that arrive out of order cannot undo a later one. Idempotent.
   */
  recordMembership(orgKey: string, loginKey: string, member: boolean, version: number, installed: boolean): void {
    const m = schema.memberships;
    this.#db
      .insert(m)
      .values({ orgKey, loginKey, member, installed, version })
      .onConflictDoUpdate({ target: m.orgKey, set: { loginKey, member, installed, version }, setWhere: lt(m.version, version) })
      .run();
  }

  /**
   * The list found this organization not installed at `version`: its membership is not listed
   * until the organization reports its installation (a newer version). Also at the stored version:
   * every installation and uninstallation raises the clock, so that version's state is this one
   * (entries written before the index kept the state are stored as installed).
   */
  recordNotInstalled(orgKey: string, version: number): void {
    const m = schema.memberships;
    this.#db
      .update(m)
      .set({ installed: false })
      .where(and(eq(m.orgKey, orgKey), lte(m.version, version)))
      .run();
  }

  /**
   * Installed organizations this user is (as last reported) a member of, in the order of their
   * lower-cased logins (then home keys), after `after`.
   */
  listMemberships(after: MembershipPosition | null, limit: number): MembershipPosition[] {
    const m = schema.memberships;
    return this.#db
      .select({ orgKey: m.orgKey, loginKey: m.loginKey })
      .from(m)
      .where(
        and(
          eq(m.member, true),
          eq(m.installed, true),
          after === null ? undefined : sql`(${m.loginKey}, ${m.orgKey}) > (${after.loginKey}, ${after.orgKey})`,
        ),
      )
      .orderBy(asc(m.loginKey), asc(m.orgKey))
      .limit(limit)
      .all();
  }

  /** KV cleanup is housekeeping: the verdict above already refuses the old key. */
  async #forgetLookup(keyHash: string): Promise<void> {
    try {
      await this.env.API_KEYS.delete(keyRecordKey(keyHash));
    } catch (error) {
      console.error(JSON.stringify({ level: "warn", msg: "stale API key lookup not deleted", error: String(error) }));
    }
  }
}
