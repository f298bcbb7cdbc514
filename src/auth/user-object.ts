import { DurableObject } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/user/migrations.js";
import { type DurableResult, ok } from "../lib/durable-call";
import { formatInstant } from "../lib/time";
import { UntilWrite } from "../lib/until-write";
import { decideKeyCreation, judgeKey, keyLive, nameKeyOf } from "../rules/keys";
import type { QuotaPolicy, QuotaVerdict } from "../rules/quota";
import { judgeSession, sessionOver, toHour } from "../rules/sessions";
import type { KeyKind } from "../schemas/key-kind";
import type { User, UserInput } from "../schemas/user";
import { generateApiKey, generateKeyId, hashApiKey, keyHint } from "./api-key";
import { forgetLookup, writeLookup } from "./key-lookups";
import type { ApiKey, ApiKeyCreated } from "./key-schemas";
import type { Scope } from "./scopes";
import { DEFAULT_PERSIST_MS, Usage } from "./usage";
import * as schema from "./user-schema";
import { type AccountRow, getAccount, putAccount, putGithubIdentity } from "./user-store/account";
import * as keys from "./user-store/api-keys";
import type { Db } from "./user-store/db";
import * as grants from "./user-store/grants";
import * as memberships from "./user-store/memberships";
import * as sessions from "./user-store/sessions";

export type { MembershipPosition } from "./user-store/memberships";

/** The most keys of one kind a person holds (contract section 18). */
export const MAX_USER_KEYS = 10;

/** What a key is created or regenerated with (validated by the route's schema). */
export interface KeySpec {
  name: string;
  scopes: Scope[];
  expiresAt: number | null;
  allowedNetworks: string[];
}

/** The key that authenticated a request, as audit entries and scope checks need it. */
export interface KeyHolder {
  id: string;
  name: string;
  scopes: Scope[];
}

export type KeyVerdict =
  | { valid: true; user: User; key: KeyHolder; ipAllowed: boolean; quota: QuotaVerdict | null }
  | { valid: false };

const keyLimitReached = (kind: KeyKind): DurableResult<never> => ({
  ok: false,
  code: "key_limit_reached",
  message: `You already hold ${MAX_USER_KEYS} ${kind} keys: revoke one first, or regenerate one by its name.`,
});

/** A key row as the API shows it (no hash, no last use). */
const presentKey = (row: keys.ApiKeyRow): Omit<ApiKey, "lastUsedAt"> => ({
  keyId: row.keyId,
  name: row.name,
  kind: row.kind,
  scopes: row.scopes,
  hint: row.hint,
  createdAt: formatInstant(row.createdAt),
  expiresAt: row.expiresAt === null ? null : formatInstant(row.expiresAt),
  allowedNetworks: row.allowedNetworks,
});
export type GrantVerdict = { valid: true; user: User; scopes: Scope[]; quota: QuotaVerdict | null } | { valid: false };
export type SessionVerdict = { valid: true; user: User; csrfToken: string; quota: QuotaVerdict | null } | { valid: false };

const toUser = (account: AccountRow): User => ({
  githubUserId: account.githubUserId,
  githubLogin: account.githubLogin,
  blocked: account.blocked,
});

/**
 * One object per user (named by the GitHub user id): the strongly consistent answer to "is this
 * still the owner's current, unexpired key, and is the owner not blocked?". Workers KV only maps
 * a key hash to its record; KV can serve a deleted value for a minute or more elsewhere, so the
 * verdict always comes from here and revocation takes effect on the very next request. Each
 * method loads facts (`user-store/`), asks a rule (`rules/keys.ts`, `rules/sessions.ts`,
 * `quota.ts`) and writes the outcome in one synchronous transaction; the KV lookups
 * (`key-lookups.ts`) around it.
 */
export class UserObject extends DurableObject<Env> {
  readonly #db: Db;
  readonly #usage: Usage;
  /**
   * Writes of the account and its keys, one after the other: each awaits KV, and interleaved they
   * could answer a key already replaced, or leave a lookup for a blocked owner.
   */
  #keyWrites: Promise<unknown> = Promise.resolve();
  /** The account and a key by hash (read on every request), until the next write. */
  readonly #keys: UntilWrite<{ account: AccountRow | undefined; key: keys.ApiKeyRow | undefined }>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage, { schema });
    this.#usage = new Usage(ctx.storage, this.#db);
    this.#keys = new UntilWrite(ctx.storage.sql, { budget: 40 });
    ctx.blockConcurrencyWhile(async () => {
      await migrate(this.#db, migrations);
    });
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
      const before = getAccount(this.#db);
      putAccount(this.#db, { githubUserId, githubLogin: input.githubLogin, blocked: input.blocked });
      // Blocking ends every OAuth grant at once (contract section 19); unblocking does not bring them back.
      if (input.blocked) grants.deleteEveryGrant(this.#db);
      if (before !== undefined && before.blocked !== input.blocked) {
        const now = Date.now();
        for (const key of keys.allKeys(this.#db)) {
          if (input.blocked) await forgetLookup(this.env.API_KEYS, key.keyHash);
          else if (keyLive(key, now)) await writeLookup(this.env.API_KEYS, githubUserId, key, now);
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
      putGithubIdentity(this.#db, githubUserId, githubLogin);
      return { githubUserId, githubLogin, blocked: getAccount(this.#db)?.blocked ?? false };
    });
  }

  /**
   * Creates the user's key of `kind` named `spec.name`, or regenerates it when the user already has
   * a key of that kind and name (same id, new value; scopes, expiry and networks as sent): the
   * previous value stops working at once (contract section 18). At most `MAX_USER_KEYS` of a kind.
   * The KV record is written before the key becomes current here: a key of an unblocked owner is
   * never current without a lookup entry, and a failed call leaves the previous value working.
   * Creations run one at a time, and the limit is decided again in the write's transaction.
   */
  createKey(kind: KeyKind, spec: KeySpec, now: number): Promise<DurableResult<ApiKeyCreated>> {
    return this.#serialised(() => this.#createKey(kind, spec, now));
  }

  async #createKey(kind: KeyKind, spec: KeySpec, now: number): Promise<DurableResult<ApiKeyCreated>> {
    const account = getAccount(this.#db);
    if (!account)
      return {
        ok: false,
        code: "not_found",
        message: "User not found. Register it with PUT /internal/v1/users/{githubUserId} first.",
      };
    const nameKey = nameKeyOf(spec.name);
    const planned = decideKeyCreation(keys.keysOfKind(this.#db, kind), nameKey, MAX_USER_KEYS);
    if (planned.kind === "limit_reached") return keyLimitReached(kind);
    const key = generateApiKey(kind);
    const row: keys.ApiKeyRow = {
      keyId: planned.kind === "regenerate" ? planned.existing.keyId : generateKeyId(),
      kind,
      name: spec.name,
      nameKey,
      keyHash: await hashApiKey(key),
      hint: keyHint(key),
      scopes: spec.scopes,
      allowedNetworks: spec.allowedNetworks,
      createdAt: now,
      expiresAt: spec.expiresAt,
      lastUsedAt: planned.kind === "regenerate" ? planned.existing.lastUsedAt : null,
    };
    // A blocked owner's keys have no lookup (see putUser); unblocking writes it.
    if (!account.blocked) await writeLookup(this.env.API_KEYS, account.githubUserId, row, now);
    const decided = this.ctx.storage.transactionSync(() => {
      const decision = decideKeyCreation(keys.keysOfKind(this.#db, kind), nameKey, MAX_USER_KEYS);
      if (decision.kind === "limit_reached") return decision;
      keys.putKey(this.#db, { ...row, keyId: decision.kind === "regenerate" ? decision.existing.keyId : row.keyId });
      return decision;
    });
    if (decided.kind === "limit_reached") {
      await forgetLookup(this.env.API_KEYS, row.keyHash);
      return keyLimitReached(kind);
    }
    if (decided.kind === "regenerate") await forgetLookup(this.env.API_KEYS, decided.existing.keyHash);
    const keyId = decided.kind === "regenerate" ? decided.existing.keyId : row.keyId;
    return ok({ key, ...presentKey({ ...row, keyId }) });
  }

  /** Revokes every key of `kind` (the control plane's `DELETE .../api-keys/{kind}`). Idempotent. */
  revokeKind(kind: KeyKind): Promise<void> {
    return this.#serialised(async () => {
      const revoked = this.ctx.storage.transactionSync(() => {
        const before = keys.keysOfKind(this.#db, kind);
        keys.deleteKeysOfKind(this.#db, kind);
        return before;
      });
      for (const key of revoked) await forgetLookup(this.env.API_KEYS, key.keyHash);
    });
  }

  /** Revokes one key (of `kind`, when given). Idempotent. */
  revokeKey(keyId: string, kind: KeyKind | null): Promise<void> {
    return this.#serialised(async () => {
      const revoked = this.ctx.storage.transactionSync(() => {
        const before = keys.keyById(this.#db, keyId);
        if (!before || (kind !== null && before.kind !== kind)) return undefined;
        keys.deleteKey(this.#db, keyId);
        return before;
      });
      if (revoked) await forgetLookup(this.env.API_KEYS, revoked.keyHash);
    });
  }

  /**
   * The verdict on a key found in KV, by its hash (`rules/keys.ts`), then the caller's address
   * against the key's allowed networks, and for an allowed request the count against the owner's
   * quota of that kind, all in the same call (contract sections 2, 7 and 18; the count is written
   * shortly after, see `Usage`). Never throws for a bad key: it answers invalid, and an invalid
   * key, or an address outside the key's networks, counts against nobody's quota. The key's "last
   * used" hour is decided here too and written with the counters (no write of its own per request).
   */
  verifyKey(kind: KeyKind, keyHash: string, address: string | null, now: number, policy: QuotaPolicy | null): KeyVerdict {
    return this.ctx.storage.transactionSync(() => {
      const { account, key } = this.#keys.get(keyHash, () => ({
        account: getAccount(this.#db),
        key: keys.keyByHash(this.#db, keyHash),
      }));
      const current = key?.kind === kind ? key : undefined;
      const decision = judgeKey(
        account,
        current,
        current ? this.#usage.lastUsed(current.keyId, current.lastUsedAt) : null,
        address,
        now,
      );
      if (!decision.valid || !account || !current) return { valid: false };
      const holder = { id: current.keyId, name: current.name, scopes: current.scopes };
      if (!decision.ipAllowed) return { valid: true, user: toUser(account), key: holder, ipAllowed: false, quota: null };
      if (decision.lastUsed !== null) {
        this.#usage.used(current.keyId, decision.lastUsed, policy?.persistDelayMs ?? DEFAULT_PERSIST_MS);
      }
      return { valid: true, user: toUser(account), key: holder, ipAllowed: true, quota: this.#usage.count(kind, policy, now) };
    });
  }

  /** The user's keys (never a secret), by kind then creation. */
  listKeys(): ApiKey[] {
    return keys.allKeys(this.#db).map((row) => {
      const lastUsedAt = this.#usage.lastUsed(row.keyId, row.lastUsedAt);
      return { ...presentKey(row), lastUsedAt: lastUsedAt === null ? null : formatInstant(lastUsedAt) };
    });
  }

  /** An approved OAuth grant (contract section 19); answers the ids of earlier grants it replaced. */
  recordGrant(grant: grants.NewGrant, sharedClientId: boolean, now: number): DurableResult<string[]> {
    return this.ctx.storage.transactionSync(() => {
      const account = getAccount(this.#db);
      if (!account || account.blocked)
        return { ok: false, code: "unauthenticated", message: "This account cannot approve apps." };
      return ok(grants.insertGrant(this.#db, grant, sharedClientId, now));
    });
  }

  /**
   * Whether an OAuth token's grant still works (the person not blocked, the grant not revoked), its
   * approved scopes, and the request counted against the quota of `kind` when set, in one call.
   */
  verifyGrant(grantId: string, now: number, kind: KeyKind | null, policy: QuotaPolicy | null): GrantVerdict {
    return this.ctx.storage.transactionSync(() => {
      const account = getAccount(this.#db);
      const grant = grants.findGrant(this.#db, grantId);
      if (!account || account.blocked || !grant) return { valid: false };
      grants.touchGrant(this.#db, grant, toHour(now));
      const quota = kind === null ? null : this.#usage.count(kind, policy, now);
      return { valid: true, user: toUser(account), scopes: grants.grantScopes(grant), quota };
    });
  }

  /** The person's connected apps, newest first. */
  listGrants(): grants.GrantSummary[] {
    return grants.listGrants(this.#db);
  }

  /** Revokes a grant: its tokens are refused from the next request on. True when it existed. */
  revokeGrant(grantId: string): boolean {
    return grants.deleteGrant(this.#db, grantId);
  }

  /**
   * Signs the user in (contract section 13): stores the SHA-256 of the session's cookie token.
   * Sessions that can never be valid again are deleted on the way.
   */
  startSession(tokenHash: string, csrfToken: string, now: number): DurableResult<User> {
    return this.ctx.storage.transactionSync(() => {
      const account = getAccount(this.#db);
      if (!account) return { ok: false, code: "not_found", message: "No such user." };
      if (account.blocked) return { ok: false, code: "unauthenticated", message: "This account is blocked." };
      for (const old of sessions.allSessions(this.#db)) {
        if (sessionOver(old, now)) sessions.deleteSession(this.#db, old.tokenHash);
      }
      sessions.insertSession(this.#db, { tokenHash, csrfToken, createdAt: now, lastSeenAt: now });
      return ok(toUser(account));
    });
  }

  /**
   * Whether a session cookie still signs its user in (`rules/sessions.ts`): refused once it is
   * idle or too old, ended, or its user blocked. A valid one counts the request against the
   * quota of `kind` when the route has one, as a key of that kind would.
   */
  verifySession(tokenHash: string, now: number, kind: KeyKind | null, policy: QuotaPolicy | null): SessionVerdict {
    return this.ctx.storage.transactionSync(() => {
      const session = sessions.getSession(this.#db, tokenHash);
      const account = getAccount(this.#db);
      const decision = judgeSession(session, account, now);
      if (!decision.valid || !session || !account) return { valid: false };
      if (decision.touch !== null) sessions.touchSession(this.#db, tokenHash, decision.touch);
      const quota = kind === null ? null : this.#usage.count(kind, policy, now);
      return { valid: true, user: toUser(account), csrfToken: session.csrfToken, quota };
    });
  }

  /** Sign-out: the session ends at once. Idempotent. */
  endSession(tokenHash: string): void {
    sessions.deleteSession(this.#db, tokenHash);
  }

  /** "Sign out everywhere": every session of the user ends at once. Idempotent. */
  endEverySession(): void {
    sessions.deleteEverySession(this.#db);
  }

  /**
   * The organizations index (contract section 8): an organization's object reports a membership
   * of this user after each membership write (and its new login after a rename, its installation
   * and uninstallation), by its home key, with its current lower-cased login, whether it is
   * installed, and its membership clock as version. Only a newer version than the stored one
   * changes anything, so reports that arrive out of order cannot undo a later one. Idempotent.
   */
  recordMembership(orgKey: string, loginKey: string, member: boolean, version: number, installed: boolean): void {
    memberships.recordMembership(this.#db, orgKey, loginKey, member, version, installed);
  }

  /**
   * The list found this organization not installed at `version`: its membership is not listed
   * until the organization reports its installation (a newer version). Also at the stored version:
   * every installation and uninstallation raises the clock, so that version's state is this one
   * (entries written before the index kept the state are stored as installed).
   */
  recordNotInstalled(orgKey: string, version: number): void {
    memberships.recordNotInstalled(this.#db, orgKey, version);
  }

  /**
   * Installed organizations this user is (as last reported) a member of, in the order of their
   * lower-cased logins (then home keys), after `after`.
   */
  listMemberships(after: memberships.MembershipPosition | null, limit: number): memberships.MembershipPosition[] {
    return memberships.listMemberships(this.#db, after, limit);
  }
}
