import { callDurable } from "../lib/durable-call";
import { defaultHome, type ReportedIdentity } from "./identity";
import { organizationAt } from "./resolve";
import { moveOrganizationRows } from "./rows";
import { mainDatabase } from "./shards";
import { recordHome } from "./store";

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
