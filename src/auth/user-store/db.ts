import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type * as schema from "../user-schema";

/** The user object's SQLite through drizzle: what every store module takes. */
export type Db = DrizzleSqliteDODatabase<typeof schema>;
