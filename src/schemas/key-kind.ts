import { z } from "zod";

/**
 * The two kinds of API key (contract section 2), defined once: the key format, the KV record, the
 * user object's tables (drizzle), the quotas and the control plane all take their kind from here.
 */
export const KEY_KINDS = ["analytics", "members"] as const;

export const KeyKind = z.enum(KEY_KINDS).meta({
  description: "analytics keys start with cak_, members keys with cbk_.",
});
export type KeyKind = z.infer<typeof KeyKind>;
