import { z } from "zod";
import { KeyKind } from "../schemas/key-kind";

/**
 * The only API-key data in Workers KV: `apikey:<sha256-hex of the key>` → this record.
 * KV is a lookup, not the authority (see UserObject.verifyKey).
 */
export const KeyRecord = z.object({
  v: z.literal(1),
  keyId: z.string(),
  userId: z.string(),
  kind: KeyKind,
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
});
export type KeyRecord = z.infer<typeof KeyRecord>;

export const KEY_RECORD_PREFIX = "apikey:";
export const keyRecordKey = (keyHash: string): string => `${KEY_RECORD_PREFIX}${keyHash}`;
