import { atOrganization } from "../directory/resolve";
import { unwrap } from "../lib/durable-call";
import type { OrgKeyCreated } from "../organization/answers";
import type { OrgKeyView } from "../organization/org-keys";
import type { KeyKind } from "../schemas/key-kind";
import { generateApiKey, generateKeyId, hashApiKey, keyHint } from "./api-key";
import { forgetLookup } from "./key-lookups";
import { type KeyRecord, keyRecordKey, kvExpiry } from "./key-record";
import { defaultScopes } from "./key-scopes";
import type { Scope } from "./scopes";

/**
 * An organization's keys (contract section 18), managed the same way whoever asks: the control
 * plane (`actor` null) and the app (an admin of the organization, by id). The value and its hash
 * are made here; the organization's object decides (admin, limit, repositories) and audits. The
 * KV lookup is written before the key becomes current there, and removed when it is refused,
 * replaced or revoked.
 */

export interface OrgKeyRequest {
  kind: KeyKind;
  name: string;
  scopes?: Scope[] | undefined;
  repositories: string[];
  expiresAt: number | null;
  allowedNetworks: string[];
}

/** Who asks, and from where (the audit entry's actor and address). */
export interface OrgKeyCaller {
  actor: string | null;
  correlationId: string;
  ip: string | null;
}

export async function createOrgKey(
  env: Env,
  org: string,
  request: OrgKeyRequest,
  caller: OrgKeyCaller,
  now: number,
): Promise<Omit<OrgKeyView, "lastUsedAt"> & { key: string }> {
  const key = generateApiKey(request.kind);
  const keyHash = await hashApiKey(key);
  const spec = {
    keyId: generateKeyId(),
    kind: request.kind,
    name: request.name,
    keyHash,
    hint: keyHint(key),
    scopes: request.scopes ?? defaultScopes(request.kind),
    repositories: request.repositories,
    allowedNetworks: request.allowedNetworks,
    expiresAt: request.expiresAt,
  };
  const created = await atOrganization<OrgKeyCreated>(env, org, async (stub, at) => {
    const lookup = (keyId: string) => {
      const record: KeyRecord = { v: 2, keyId, orgKey: at.home, kind: spec.kind, createdAt: now, expiresAt: spec.expiresAt };
      return env.API_KEYS.put(keyRecordKey(keyHash), JSON.stringify(record), kvExpiry(spec.expiresAt, now));
    };
    await lookup(spec.keyId);
    const answer = await stub.createKey(at.login, caller.actor, spec, { correlationId: caller.correlationId, ip: caller.ip });
    if (!answer.ok) await forgetLookup(env.API_KEYS, keyHash);
    // A regeneration keeps the key's id (the object's answer): the lookup must name that id, or the
    // key would be nobody where its caller is resolved by id (reads, lists, analytics).
    else if (answer.value.key.keyId !== spec.keyId) await lookup(answer.value.key.keyId);
    return answer;
  });
  const value = unwrap(created);
  // A retried call may have regenerated the key with this very value: its lookup stays.
  if (value.previousHash !== null && value.previousHash !== keyHash) await forgetLookup(env.API_KEYS, value.previousHash);
  const { lastUsedAt: _lastUsed, ...shown } = value.key;
  return { key, ...shown };
}

export async function revokeOrgKey(env: Env, org: string, keyId: string, caller: OrgKeyCaller): Promise<void> {
  const hash = unwrap(
    await atOrganization<string | null>(env, org, (stub, at) =>
      stub.revokeKey(at.login, caller.actor, keyId, { correlationId: caller.correlationId, ip: caller.ip }),
    ),
  );
  if (hash !== null) await forgetLookup(env.API_KEYS, hash);
}

export async function listOrgKeys(env: Env, org: string, actor: string | null): Promise<OrgKeyView[]> {
  return unwrap(await atOrganization<OrgKeyView[]>(env, org, (stub, at) => stub.listKeys(at.login, actor)));
}
