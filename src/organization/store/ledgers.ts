import { eq, lt } from "drizzle-orm";
import { appliedDeliveries, appliedOperations } from "../schema";
import type { Db } from "./db";

/**
 * What this object has already applied, so that a retry changes nothing twice: the PATCH
 * operations (by the HTTP request's id) and the GitHub deliveries (by delivery key).
 */

/** How long a changing PATCH is remembered for its retries. */
const OPERATION_MEMORY_MS = 3_600_000;

/** How long an applied webhook delivery is remembered: past the receiver's 7-day dedupe marker. */
export const DELIVERY_MEMORY_MS = 8 * 24 * 3_600_000;

export function operationApplied(db: Db, operationId: string): boolean {
  return db.select().from(appliedOperations).where(eq(appliedOperations.operationId, operationId)).get() !== undefined;
}

/** Remembers an operation that changed something, and forgets those past their memory. */
export function rememberOperation(db: Db, operationId: string, now: number): void {
  db.insert(appliedOperations).values({ operationId, appliedAt: now }).run();
  db.delete(appliedOperations)
    .where(lt(appliedOperations.appliedAt, now - OPERATION_MEMORY_MS))
    .run();
}

export function deliveryApplied(db: Db, deliveryKey: string): boolean {
  return db.select().from(appliedDeliveries).where(eq(appliedDeliveries.deliveryKey, deliveryKey)).get() !== undefined;
}

/** Remembers an applied delivery, and forgets those past their memory. */
export function rememberDelivery(db: Db, deliveryKey: string, now: number): void {
  db.insert(appliedDeliveries).values({ deliveryKey, appliedAt: now }).run();
  db.delete(appliedDeliveries)
    .where(lt(appliedDeliveries.appliedAt, now - DELIVERY_MEMORY_MS))
    .run();
}
