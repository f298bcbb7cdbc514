import { callDurable } from "../lib/durable-call";
import { defaultHome, type ReportedIdentity } from "./identity";
import { organizationAt } from "./resolve";
import { moveOrganizationRows } from "./rows";
import { mainDatabase } from "./shards";
import { homesOf, recordHome } from "./store";

/**
 * After an organization's object changed its identity (created, renamed, learned its account id):
 * the directory in D1 learns where it lives (`recordHome`), then the rows stored under the login's
 * default home before it did join the organization (`gatherStrayRows`). The webhook consumer runs
 * it on every attempt that finds the change applied, so a failure between the object and D1, or
 * between the two steps here, converges on retry.
 */
export async function learnIdentity(env: Env, identity: ReportedIdentity): Promise<void> {
  await recordHome(mainDatabase(env), {
    key: identity.home,
    login: identity.login,
    accountId: identity.accountId,
    installationId: identity.installationId,
    version: identity.version,
  });
  // After the directory: from then on nothing new lands under the login's default home.
  await gatherStrayRows(env, identity.home, identity.login);
}

/**
 * The D1 rows stored under `login`'s default home by reviewer events or pull request deliveries
 * that used the login before the directory named `home` for it move to the home and merge with its
 * rows (`rows.ts`, across shards too). Not when that key is another organization's home (its object holds an
 * installation: the login was re-used): those rows are that organization's. Idempotent.
 */
export async function gatherStrayRows(env: Env, home: string, login: string): Promise<void> {
  const stray = defaultHome(login);
  if (stray === home) return;
  if (await callDurable(() => organizationAt(env, stray).isHome(), { idempotent: true })) return;
  await moveOrganizationRows(env, stray, home);
}

/**
 * The stray rows of a login an organization rename introduced (the message's new login), also when
 * the organization has been renamed again since: the retry of a rename whose gather waited for a
 * move between shards learns the object's current identity (`learnIdentity`), so its own new
 * login's rows would otherwise stay stray for good (an outside review found them lost). Not when
 * the directory now names another organization's home for that login: the rows may be its.
 */
export async function gatherRenamedLogin(env: Env, home: string, login: string): Promise<void> {
  const named = (await homesOf(mainDatabase(env), [login])).get(defaultHome(login));
  if (named !== home && named !== defaultHome(login)) return;
  await gatherStrayRows(env, home, login);
}

/**
 * Every stray key of the organization's logins the directory knows (its renamed logins' folded
 * keys) joins the home: run when a move between shards ends, done or failed (`moves/workflow.ts`,
 * `moves/heal.ts`). Gathers meet a running move with `MoveRunning`; the webhook consumer's wait
 * for the move sends its message again, but the event write path (`events.ts`) has no consumer:
 * the batch is stored at its home all the same, and the copy it left under the stray key is
 * gathered here. Idempotent; a key never placed costs one read.
 */
export async function gatherKnownLogins(env: Env, home: string): Promise<void> {
  const { results } = await mainDatabase(env)
    .prepare("SELECT login_key FROM organization_names WHERE home_key = ?1 ORDER BY login_key")
    .bind(home)
    .all<{ login_key: string }>();
  for (const { login_key } of results) await gatherStrayRows(env, home, login_key);
}
