import { eq } from "drizzle-orm";
import type { QuotaState } from "../../rules/quota";
import type { KeyKind } from "../../schemas/key-kind";
import { quotas } from "../user-schema";
import type { Db } from "./db";

/** The owner's request counter of each key kind (contract section 7). */

export const getQuota = (db: Db, kind: KeyKind): QuotaState | undefined =>
  db.select({ windowStart: quotas.windowStart, used: quotas.used }).from(quotas).where(eq(quotas.kind, kind)).get();

export function putQuota(db: Db, kind: KeyKind, state: QuotaState): void {
  const row = { kind, ...state };
  db.insert(quotas).values(row).onConflictDoUpdate({ target: quotas.kind, set: row }).run();
}
