import { z } from "zod";
import { KeyKind } from "../schemas/key-kind";

/**
 * The only API-key data in Workers KV: `apikey:<sha256-hex of the key>` → this record: a person's
 * key (v1, named by the user id) or an organization's (v2, named by the organization's home key).
 * KV is a lookup, not the authority (see UserObject.verifyKey, OrganizationObject.verifyKey).
 */
const PersonalKeyRecord = z.object({
  v: z.literal(1),
  keyId: z.string(),
  userId: z.string(),
  kind: KeyKind,
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
});
const OrganizationKeyRecord = z.object({
  v: z.literal(2),
  keyId: z.string(),
  orgKey: z.string(),
  kind: KeyKind,
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
});
export const KeyRecord = z.discriminatedUnion("v", [PersonalKeyRecord, OrganizationKeyRecord]);
export type KeyRecord = z.infer<typeof KeyRecord>;

export const KEY_RECORD_PREFIX = "apikey:";
export const keyRecordKey = (keyHash: string): string => `${KEY_RECORD_PREFIX}${keyHash}`;

/** KV's `expiration` is 32-bit epoch seconds: 2038-01-19T03:14:07Z is the last one it can hold. */
const KV_MAX_EXPIRATION = 2_147_483_647;
/** KV refuses a TTL under 60 s. */
const KV_MIN_TTL = 60;

/**
 * KV expires the lookup a minute after the key. Every expiry the API allows (up to
 * 9999-12-31T23:59:59.999Z) must work, so when that minute lies beyond what KV can hold the entry
 * gets no expiry: never a clamped one, which would make the key stop working in 2038 while it is
 * still valid. Such an entry is harmless once the key expires (the verdict here refuses it) and is
 * deleted when the key is replaced or revoked. The TTL is relative, so a key expiring within KV's
 * minimum TTL (60 s) still gets one: its remaining seconds plus the minute.
 */
export function kvExpiry(expiresAt: number | null, now: number): KVNamespacePutOptions {
  if (expiresAt === null) return {};
  const ttl = Math.max(KV_MIN_TTL, Math.ceil((expiresAt - now) / 1000) + 60);
  if (Math.floor(now / 1000) + ttl > KV_MAX_EXPIRATION) return {};
  return { expirationTtl: ttl };
}
