import { eq } from "drizzle-orm";
import { account } from "../user-schema";
import type { Db } from "./db";

/** The user's one account row (id 1), once the control plane or a sign-in registered it. */

export type AccountRow = typeof account.$inferSelect;

export const getAccount = (db: Db): AccountRow | undefined => db.select().from(account).where(eq(account.id, 1)).get();

/** Writes the whole account (the control plane's PUT). */
export function putAccount(db: Db, row: Omit<AccountRow, "id">): void {
  const values = { id: 1, ...row };
  db.insert(account).values(values).onConflictDoUpdate({ target: account.id, set: values }).run();
}

/** Writes id and login from GitHub, leaving `blocked` as it is (a new account starts unblocked). */
export function putGithubIdentity(db: Db, githubUserId: string, githubLogin: string): void {
  db.insert(account)
    .values({ id: 1, githubUserId, githubLogin, blocked: false })
    .onConflictDoUpdate({ target: account.id, set: { githubUserId, githubLogin } })
    .run();
}
