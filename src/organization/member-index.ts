import { eq } from "drizzle-orm";
import type { OrgAddress } from "../directory/identity";
import { callDurable } from "../lib/durable-call";
import { errorField, log } from "../lib/log";
import { foldName } from "../lib/names";
import { type InstallationRow, indexRelogin, membershipClock } from "./schema";
import type { Db } from "./store/db";
import { getInstallation } from "./store/installation";
import { getMember, memberIdsAfter } from "./store/members";

/**
 * What the members' organizations indexes (their `UserObject`) learn from this object: the
 * membership clock that orders what they are told, telling one member after a membership write,
 * and the relogin job that tells every member a new login.
 */

/** Members told per alarm run that the organization's login changed. */
const RELOGIN_PAGE = 100;
/** When telling them failed: try again a minute later. */
const RELOGIN_RETRY_MS = 60_000;

/** The membership clock: raised by every membership write and every change of identity. */
export function membershipVersion(db: Db): number {
  return db.select().from(membershipClock).where(eq(membershipClock.id, 1)).get()?.value ?? 0;
}

/** Raises the membership clock; callers are inside the transaction of the write it orders. */
export function tickMembershipClock(db: Db): number {
  const value = membershipVersion(db) + 1;
  db.insert(membershipClock).values({ id: 1, value }).onConflictDoUpdate({ target: membershipClock.id, set: { value } }).run();
  return value;
}

/**
 * Tells the member's organizations index under this object's home key, the current login (the
 * list's order) and whether the organization is installed (the list skips it otherwise);
 * idempotent, so retried once. Before the installation exists, the address the caller resolved
 * names both, and it is not installed.
 */
export async function tellIndex(
  env: Env,
  installation: InstallationRow | undefined,
  at: OrgAddress,
  githubUserId: string,
  member: boolean,
  version: number,
): Promise<void> {
  const home = installation?.homeKey ?? at.home;
  const loginKey = foldName(installation?.login ?? at.login);
  const installed = installation?.installed ?? false;
  await callDurable(() => env.USERS.getByName(githubUserId).recordMembership(home, loginKey, member, version, installed), {
    idempotent: true,
  });
}

/** Tells the member's index whether they are a member now, at the current clock (after a change's commit). */
export async function tellMembership(env: Env, db: Db, at: OrgAddress, githubUserId: string): Promise<void> {
  const member = getMember(db, githubUserId) !== undefined;
  await tellIndex(env, getInstallation(db), at, githubUserId, member, membershipVersion(db));
}

/**
 * The login changed, or the organization was installed or uninstalled (inside the transaction of
 * the change): every member's organizations index has to learn it, for the order of `GET
 * /api/v1/organizations` and to list only installed organizations. The membership clock moves on,
 * so what the alarm tells them is newer than anything told before; a membership write after this
 * tells the new state itself. The alarm is set after the commit (`scheduleRelogin`).
 */
export function startRelogin(db: Db, login: string): void {
  const version = tickMembershipClock(db);
  const job = { id: 1, login, after: "", version };
  db.insert(indexRelogin).values(job).onConflictDoUpdate({ target: indexRelogin.id, set: job }).run();
}

/** Sets the alarm now when a relogin job waits. */
export async function scheduleRelogin(storage: DurableObjectStorage, db: Db): Promise<void> {
  if (db.select().from(indexRelogin).get()) await storage.setAlarm(Date.now());
}

/**
 * One run of the relogin job: tells a page of members the current login and installation state; a
 * failure tries the same page again a minute later (the writes are versioned, so telling twice is
 * harmless). Sets the alarm again while members are left.
 */
export async function runRelogin(
  env: Env,
  storage: DurableObjectStorage,
  db: Db,
  installation: InstallationRow | undefined,
): Promise<void> {
  const job = db.select().from(indexRelogin).get();
  if (!job) return;
  if (!installation) {
    db.delete(indexRelogin).run();
    return;
  }
  const version = membershipVersion(db);
  const page = memberIdsAfter(db, job.after, RELOGIN_PAGE);
  const loginKey = foldName(installation.login);
  try {
    await Promise.all(
      page.map((githubUserId) =>
        callDurable(
          () =>
            env.USERS.getByName(githubUserId).recordMembership(
              installation.homeKey,
              loginKey,
              true,
              version,
              installation.installed,
            ),
          { idempotent: true },
        ),
      ),
    );
  } catch (error) {
    log.warn("organizations index not told the new login; retried", { error: errorField(error) });
    await storage.setAlarm(Date.now() + RELOGIN_RETRY_MS);
    return;
  }
  const last = page.at(-1);
  const more = storage.transactionSync(() => {
    const now = db.select().from(indexRelogin).get();
    // Another change restarted the job meanwhile: it runs again from the start.
    if (!now || now.version !== job.version || now.login !== job.login || now.after !== job.after) return now !== undefined;
    if (page.length < RELOGIN_PAGE || last === undefined) {
      db.delete(indexRelogin).run();
      return false;
    }
    db.update(indexRelogin).set({ after: last }).run();
    return true;
  });
  if (more) await storage.setAlarm(Date.now());
}

/** Members' indexes told at once after a sync's page (each a call to one `UserObject`). */
const TELL_AT_ONCE = 50;

/** Tells the indexes of the members a sync's page wrote or removed, after its commit; idempotent (versioned). */
export async function tellMembers(
  env: Env,
  installation: InstallationRow,
  told: readonly { githubUserId: string; member: boolean; version: number }[],
): Promise<void> {
  const at = { home: installation.homeKey, login: installation.login };
  for (let i = 0; i < told.length; i += TELL_AT_ONCE) {
    await Promise.all(
      told.slice(i, i + TELL_AT_ONCE).map((t) => tellIndex(env, installation, at, t.githubUserId, t.member, t.version)),
    );
  }
}
