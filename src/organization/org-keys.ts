import type { DurableResult } from "../lib/durable-call";
import { foldName, repoKey } from "../lib/names";
import { parseOrgKeyPrincipal } from "../lib/principal";
import { formatInstant } from "../lib/time";
import { decideKeyCreation, judgeKey, nameKeyOf } from "../rules/keys";
import { memberAccess, type Refusal } from "../rules/members";
import { countRequest, type QuotaPolicy, type QuotaVerdict } from "../rules/quota";
import type { AuditActor } from "../schemas/audit";
import type { OrgKeyUsage } from "./org-key-usage";
import type { InstallationRow, MemberRow, OrgApiKeyRow } from "./schema";
import * as keys from "./store/api-keys";
import { appendKeyAudit } from "./store/audit-log";
import type { Db } from "./store/db";
import { getMember } from "./store/members";
import { repositoryByKey } from "./store/repositories";

/**
 * The organization's own keys (contract section 18), inside the organization's object: created,
 * regenerated and revoked by admins (or the control plane) with an audit entry in the same
 * transaction, judged on every request by hash, and standing in for a caller of this organization
 * only (`callerOf`). The key's value and hash are made by the Worker (`auth/org-keys.ts`).
 */

/** The most keys of one kind an organization holds. */
export const MAX_ORG_KEYS = 25;

/** Who asks for a key change: an admin of this organization (by id), or the control plane (null). */
export type KeyActor = string | null;

export interface OrgKeySpec {
  keyId: string;
  kind: OrgApiKeyRow["kind"];
  name: string;
  keyHash: string;
  hint: string;
  scopes: string[];
  repositories: string[];
  allowedNetworks: string[];
  expiresAt: number | null;
}

/** An organization key as listed (never a secret). */
export interface OrgKeyView {
  keyId: string;
  name: string;
  kind: OrgApiKeyRow["kind"];
  scopes: string[];
  hint: string;
  createdAt: string;
  expiresAt: string | null;
  allowedNetworks: string[];
  repositories: string[];
  lastUsedAt: string | null;
}

export const toOrgKeyView = (row: OrgApiKeyRow): OrgKeyView => ({
  keyId: row.keyId,
  name: row.name,
  kind: row.kind,
  scopes: row.scopes,
  hint: row.hint,
  createdAt: formatInstant(row.createdAt),
  expiresAt: row.expiresAt === null ? null : formatInstant(row.expiresAt),
  allowedNetworks: row.allowedNetworks,
  repositories: row.repositories,
  lastUsedAt: row.lastUsedAt === null ? null : formatInstant(row.lastUsedAt),
});

/** Key management needs an admin of the organization (any subscription); the control plane acts as itself. */
export function keyManager(
  db: Db,
  installation: InstallationRow | undefined,
  actor: KeyActor,
): Refusal | { ok: true; actor: AuditActor | null } {
  if (actor === null) {
    const refused = installation ? null : memberAccess(installation, undefined, "admin");
    return refused ?? { ok: true, actor: null };
  }
  // An organization key never manages keys: only a person who is an admin does.
  const member = parseOrgKeyPrincipal(actor) ? undefined : getMember(db, actor);
  const refused = memberAccess(installation, member, "admin");
  if (refused) return refused;
  if (!member)
    return { ok: false, code: "org_access_denied", message: "You are not a member of this organization.", details: [] };
  return { ok: true, actor: { githubUserId: member.githubUserId, githubLogin: member.githubLogin } };
}

/** Creates the key, or regenerates the one of that kind and name; audited. Returns the previous hash to forget. */
export function createOrgKey(
  db: Db,
  spec: OrgKeySpec,
  by: { actor: AuditActor | null; correlationId: string; ip: string | null },
  now: number,
): DurableResult<{ key: OrgKeyView; previousHash: string | null }> {
  const unknown = spec.repositories.findIndex((name) => !repositoryByKey(db, repoKey(name)));
  if (unknown >= 0) {
    return {
      ok: false,
      code: "invalid_request",
      message: "Invalid request body.",
      details: [{ path: `repositories.${unknown}`, message: "no such repository in the organization" }],
    };
  }
  const nameKey = nameKeyOf(spec.name);
  const decision = decideKeyCreation(keys.orgKeysOfKind(db, spec.kind), nameKey, MAX_ORG_KEYS);
  if (decision.kind === "limit_reached") {
    return {
      ok: false,
      code: "key_limit_reached",
      message: `The organization already holds ${MAX_ORG_KEYS} ${spec.kind} keys: revoke one first, or regenerate one by its name.`,
    };
  }
  const existing = decision.kind === "regenerate" ? decision.existing : undefined;
  const row: OrgApiKeyRow = {
    ...spec,
    keyId: existing?.keyId ?? spec.keyId,
    nameKey,
    repositories: [...new Set(spec.repositories.map(repoKey))].sort(),
    createdAt: now,
    createdBy: by.actor?.githubUserId ?? null,
    lastUsedAt: existing?.lastUsedAt ?? null,
    windowStart: existing?.windowStart ?? null,
    used: existing?.used ?? 0,
  };
  keys.putOrgKey(db, row);
  const audited = { id: row.keyId, name: row.name, kind: row.kind, scopes: row.scopes };
  appendKeyAudit(db, now, by, existing ? "key.regenerated" : "key.created", audited);
  return { ok: true, value: { key: toOrgKeyView(row), previousHash: existing?.keyHash ?? null } };
}

/** Revokes one key (idempotent); audited when there was one. Returns its hash to forget. */
export function revokeOrgKey(
  db: Db,
  keyId: string,
  by: { actor: AuditActor | null; correlationId: string; ip: string | null },
  now: number,
): string | null {
  const row = keys.orgKeyById(db, keyId);
  if (!row) return null;
  keys.deleteOrgKey(db, keyId);
  appendKeyAudit(db, now, by, "key.revoked", { id: row.keyId, name: row.name, kind: row.kind, scopes: row.scopes });
  return row.keyHash;
}

export type OrgKeyVerdict =
  | {
      valid: true;
      key: { id: string; name: string; scopes: string[] };
      ipAllowed: boolean;
      quota: QuotaVerdict | null;
      home: string;
    }
  | { valid: false };

/**
 * The verdict on an organization key (contract sections 2, 7 and 18), in the caller's transaction:
 * the installation must exist (a deleted installation ends its keys), the key must be stored and
 * unexpired, the address inside its networks (not counted otherwise), then the request counts
 * against the key's own quota. A suspended installation's keys pass here and are refused by the
 * route like every other caller (`installation_blocked`).
 */
export function judgeOrgKey(
  db: Db,
  usage: OrgKeyUsage,
  installation: InstallationRow | undefined,
  kind: OrgApiKeyRow["kind"],
  keyHash: string,
  address: string | null,
  now: number,
  policy: QuotaPolicy | null,
): OrgKeyVerdict {
  const found = keys.orgKeyByHash(db, keyHash);
  const row = found?.kind === kind ? found : undefined;
  const owner = installation?.installed ? { blocked: false } : undefined;
  const decision = judgeKey(owner, row, row ? usage.lastUsed(row.keyId, row.lastUsedAt) : null, address, now);
  if (!decision.valid || !row || !installation) return { valid: false };
  const key = { id: row.keyId, name: row.name, scopes: row.scopes };
  if (!decision.ipAllowed) return { valid: true, key, ipAllowed: false, quota: null, home: installation.homeKey };
  if (decision.lastUsed !== null) usage.used(row.keyId, decision.lastUsed, policy);
  let quota: QuotaVerdict | null = null;
  if (policy !== null) {
    const stored = row.windowStart === null ? undefined : { windowStart: row.windowStart, used: row.used };
    const counted = countRequest(usage.state(row.keyId, stored), policy, now);
    quota = counted.verdict;
    if (counted.verdict.allowed) usage.counted(row.keyId, counted.next, policy);
  }
  return { valid: true, key, ipAllowed: true, quota, home: installation.homeKey };
}

/**
 * The caller a principal stands for here: a member by GitHub user id, or one of this
 * organization's own keys, which acts as an admin (a key limited to repositories as a member who
 * sees exactly those). Another organization's key, or a revoked or expired one, is no member.
 */
export function callerOf(
  db: Db,
  installation: InstallationRow | undefined,
  principal: string,
  now: number,
): { member: MemberRow | undefined; repositories: string[] | null; isKey: boolean } {
  const orgKey = parseOrgKeyPrincipal(principal);
  if (!orgKey) return { member: getMember(db, principal), repositories: null, isKey: false };
  const row =
    installation && foldName(installation.homeKey) === foldName(orgKey.home) ? keys.orgKeyById(db, orgKey.keyId) : undefined;
  if (!row || (row.expiresAt !== null && row.expiresAt <= now)) return { member: undefined, repositories: null, isKey: true };
  const limited = row.repositories.length > 0;
  const member: MemberRow = {
    githubUserId: principal,
    githubLogin: row.name,
    workEmail: null,
    role: limited ? "member" : "admin",
    seat: false,
    isBot: true,
  };
  return { member, repositories: limited ? row.repositories : null, isKey: true };
}
