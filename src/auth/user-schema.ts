import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { KEY_KINDS } from "../schemas/key-kind";
import type { Scope } from "./scopes";

/** Tables inside each user's Durable Object: the authority on whether a key still works. */

/** Exactly one row (id = 1) once the control plane has registered the user. */
export const account = sqliteTable("account", {
  id: integer("id").primaryKey(),
  githubUserId: text("github_user_id").notNull(),
  githubLogin: text("github_login").notNull(),
  blocked: integer("blocked", { mode: "boolean" }).notNull(),
});

/**
 * The user's named keys (contract section 18): up to 10 of each kind, names unique per kind
 * (compared by `name_key`, the lower-cased name). Only the SHA-256 hash of a key is kept; the
 * verdict finds a key by it. Regenerating a key replaces its hash (and hint) in place.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    /** `key_` + 20 base62 characters. */
    keyId: text("key_id").primaryKey(),
    kind: text("kind", { enum: KEY_KINDS }).notNull(),
    name: text("name").notNull(),
    nameKey: text("name_key").notNull(),
    keyHash: text("key_hash").notNull(),
    /** The prefix and the last 4 characters (`cak_…a1B9`); the prefix alone for keys made before names. */
    hint: text("hint").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<Scope[]>().notNull(),
    /** Canonical CIDR ranges (`lib/networks.ts`); empty: any address. */
    allowedNetworks: text("allowed_networks", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
    /**
     * When the key last authenticated a request, to the hour; null until then. Held in the object's
     * memory and written with the quota counters' deferred write (`usage.ts`), so it costs no
     * write per request.
     */
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [uniqueIndex("api_keys_by_name").on(t.kind, t.nameKey), uniqueIndex("api_keys_by_hash").on(t.keyHash)],
);

/**
 * The request quota of each key kind (contract section 7). It belongs to the owner and the kind, not
 * to a key, so regenerating a key does not reset it. A window starts with the first counted request
 * after the previous one ended.
 */
export const quotas = sqliteTable("quotas", {
  kind: text("kind", { enum: KEY_KINDS }).primaryKey(),
  windowStart: integer("window_start").notNull(),
  used: integer("used").notNull(),
});

/**
 * The organizations this user is a member of, as the organizations' own objects last reported
 * (contract section 8, `GET /api/v1/organizations`). Keyed by the organization's home key (the name
 * of its object, which survives renames) and ordered by `login_key`, its lower-cased login as last
 * reported (the home key for organizations never renamed). `member` false is a tombstone kept for
 * its version: an update carrying an older version than the stored one is ignored, so a late
 * "added" cannot resurrect a removed membership. The index is a hint, never the authority: every
 * listed entry is confirmed by the organization's object.
 */
export const memberships = sqliteTable(
  "memberships",
  {
    orgKey: text("org_key").primaryKey(),
    loginKey: text("login_key").notNull(),
    member: integer("member", { mode: "boolean" }).notNull(),
    /**
     * Whether the organization was installed when it last reported: a membership of an organization
     * not installed (never, or uninstalled) is not listed, so the list does not ask its object. It
     * reports its installation and uninstallation to every member (`member-index.ts`).
     */
    installed: integer("installed", { mode: "boolean" }).notNull().default(true),
    version: integer("version").notNull(),
  },
  (t) => [index("memberships_by_login").on(t.loginKey, t.orgKey)],
);

/**
 * The user's signed-in browser sessions (contract section 13). Only the SHA-256 of the cookie's
 * token is kept; the CSRF token is not a credential on its own (it is useless without the
 * cookie), and the page must be able to read it back. `last_seen_at` moves at most once an hour
 * (to the hour, `rules/sessions.ts`), so idle expiry costs no write per request.
 */
export const sessions = sqliteTable("sessions", {
  tokenHash: text("token_hash").primaryKey(),
  csrfToken: text("csrf_token").notNull(),
  createdAt: integer("created_at").notNull(),
  lastSeenAt: integer("last_seen_at").notNull(),
});

/**
 * The person's OAuth grants to MCP clients (contract section 19): the authority on whether a grant
 * still works. The library's records in OAUTH_KV say what a token is; a token works only while its
 * grant is here (revoking deletes the row; KV may serve a deleted record for a minute elsewhere).
 * `scopes`: the approved scopes, space-separated. `last_used_at` moves at most once an hour.
 */
export const oauthGrants = sqliteTable("oauth_grants", {
  grantId: text("grant_id").primaryKey(),
  clientId: text("client_id").notNull(),
  clientName: text("client_name").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  scopes: text("scopes").notNull(),
  approvedAt: integer("approved_at").notNull(),
  lastUsedAt: integer("last_used_at"),
});
