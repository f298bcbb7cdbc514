import { eq } from "drizzle-orm";
import type { SeatAssignment } from "../../rules/seats";
import { settings } from "../schema";
import type { Db } from "./db";

/** The organization's settings (contract section 20): one row, absent until an admin changed one. */

export function seatAssignment(db: Db): SeatAssignment {
  return db.select().from(settings).where(eq(settings.id, 1)).get()?.seatAssignment ?? "manual";
}

export function putSeatAssignment(db: Db, value: SeatAssignment): void {
  db.insert(settings)
    .values({ id: 1, seatAssignment: value })
    .onConflictDoUpdate({ target: settings.id, set: { seatAssignment: value } })
    .run();
}
