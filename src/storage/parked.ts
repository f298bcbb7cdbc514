/**
 * Webhook messages the queue gave up on, as the dead-letter queue's consumer copied them (D1
 * `parked_deliveries`). The control plane lists them and replays one by sending it to the queue
 * again and deleting the copy.
 */

/**
 * The documented length of a parked delivery's `event` (contract section 9): an event and action
 * come from a signed delivery (an action may be of any length), so the name is cut to it when
 * stored and when listed (rows stored before the cut).
 */
export const PARKED_EVENT_MAX = 100;

export interface ParkedDelivery {
  id: string;
  delivery: string;
  event: string;
  /** The queue message as it was sent. */
  message: unknown;
  attempts: number;
  parkedAt: number;
}

/** Keeps a copy; parking the same message again (the DLQ redelivered it) keeps the first copy's time. */
export async function parkDelivery(db: D1Database, p: ParkedDelivery): Promise<void> {
  await db
    .prepare(
      `INSERT INTO parked_deliveries (id, delivery, event, message, attempts, parked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (id) DO UPDATE SET message = excluded.message, attempts = excluded.attempts`,
    )
    .bind(p.id, p.delivery, p.event.slice(0, PARKED_EVENT_MAX), JSON.stringify(p.message), p.attempts, p.parkedAt)
    .run();
}

interface Row {
  id: string;
  delivery: string;
  event: string;
  message: string;
  attempts: number;
  parked_at: number;
}

const fromRow = (r: Row): ParkedDelivery => ({
  id: r.id,
  delivery: r.delivery,
  event: r.event.slice(0, PARKED_EVENT_MAX),
  message: JSON.parse(r.message),
  attempts: r.attempts,
  parkedAt: r.parked_at,
});

/** The oldest `limit` parked messages, oldest first. */
export async function listParked(db: D1Database, limit: number): Promise<ParkedDelivery[]> {
  const { results } = await db.prepare("SELECT * FROM parked_deliveries ORDER BY parked_at, id LIMIT ?1").bind(limit).all<Row>();
  return results.map(fromRow);
}

export async function readParked(db: D1Database, id: string): Promise<ParkedDelivery | null> {
  const row = await db.prepare("SELECT * FROM parked_deliveries WHERE id = ?1").bind(id).first<Row>();
  return row === null ? null : fromRow(row);
}

export async function deleteParked(db: D1Database, id: string): Promise<void> {
  await db.prepare("DELETE FROM parked_deliveries WHERE id = ?1").bind(id).run();
}
