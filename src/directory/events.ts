import type { Event } from "../schemas/events";
import { type StoredEvents, writeEvents } from "../storage/events";
import { defaultHome } from "./identity";
import { homesMoved, homesOf, homesUnmoved } from "./store";

/**
 * Stores a validated event batch (the control plane's `POST /internal/v1/events`) at the homes of
 * the organizations its events name: one read of the directory resolves the batch's distinct
 * logins before the transaction (a login the directory does not name is its own home), and the
 * transaction checks first that the directory still says so. If a rename's directory write came
 * in between (after which the consumer gathers the rows under the new login's folded key once:
 * rows committed after that would stay stranded there), the transaction writes nothing and the
 * batch is resolved and stored again.
 */
export async function storeEvents(db: D1Database, events: readonly Event[]): Promise<StoredEvents> {
  for (let attempt = 1; ; attempt++) {
    const homes = await homesOf(
      db,
      events.map((e) => e.org),
    );
    try {
      return await writeEvents(db, events, homes, homesUnmoved(db, homes));
    } catch (error) {
      if (attempt >= DIRECTORY_ATTEMPTS || !homesMoved(error)) throw error;
    }
  }
}

/** How often a batch is resolved again when the directory moves under it (renames are rare). */
const DIRECTORY_ATTEMPTS = 3;

/**
 * Stores events of one organization whose home the caller resolved by asking its object (the
 * webhook consumer, `resolve.ts` `deliveryHomes`): no directory read and no check.
 */
export function storeEventsAtHome(db: D1Database, events: readonly Event[], at: { login: string; home: string }) {
  return writeEvents(db, events, new Map([[defaultHome(at.login), at.home]]));
}
