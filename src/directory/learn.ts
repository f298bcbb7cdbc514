import { callDurable } from "../lib/durable-call";
import { defaultHome, type Hold, heldKey, type ReportedIdentity } from "./identity";
import { organizationAt } from "./resolve";
import { keyHasRows, moveOrganizationRows } from "./rows";
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

/**
 * The stray rows of the login a rename delivery left (its `held_logins` entries not gathered) move
 * to the organization's holding key (`heldKey`), by that delivery's consumer only, each entry
 * claimed first (`claimHold`: refused past the window, so a late attempt moves nothing): from then
 * on only a later owner of the login stores rows under its folded key. Not when that key is another
 * organization's home (its rows). Never waits for a move of the home (neither key is the home).
 */
export async function holdLeftLogins(env: Env, home: string, holds: readonly Hold[], deliveryKey: string): Promise<void> {
  const object = () => organizationAt(env, home);
  for (const { seq, loginKey, state, deliveryKey: recordedBy } of holds) {
    if ((state !== "to_hold" && state !== "holding") || recordedBy !== deliveryKey) continue;
    if (!(await callDurable(() => object().claimHold(seq), { idempotent: true }))) continue;
    // Nothing to set apart: no holding key is placed (it would count as an organization of its shard).
    const hold =
      loginKey !== home &&
      (await keyHasRows(env, loginKey)) &&
      !(await callDurable(() => organizationAt(env, loginKey).isHome(), { idempotent: true }));
    if (hold) await moveOrganizationRows(env, loginKey, heldKey(loginKey, home));
    await callDurable(() => object().holdDone(seq, hold ? "held" : "done"), { idempotent: true });
  }
}

/**
 * The rows set apart for the organization (`holdLeftLogins`) join its home, and their entries are
 * done (`held` ones, and `holding` ones past the window, by `seq`: one recorded or claimed since
 * stays). Throws `MoveRunning` while the home moves between shards: the consumer waits, and the
 * move's end gathers them (`gatherCurrentLogin`). Idempotent.
 */
export async function gatherHeldLogins(env: Env, home: string): Promise<void> {
  const gatherable = await callDurable(() => organizationAt(env, home).gatherableHolds(), { idempotent: true });
  if (gatherable.length === 0) return;
  for (const key of new Set(gatherable.map((h) => heldKey(h.loginKey, home)))) await moveOrganizationRows(env, key, home);
  const seqs = gatherable.map((h) => h.seq);
  await callDurable(() => organizationAt(env, home).holdsGathered(seqs), { idempotent: true });
}

/**
 * The stray rows under the folded key of the organization's current login (the one login the
 * directory names for its home: `store.ts` `recordHome` keeps no other), and the rows set apart
 * from the logins it left (`gatherHeldLogins`), join the home: run when a
 * move between shards ends, done or failed (`moves/workflow.ts`, `moves/heal.ts`). A gather meets a
 * running move with `MoveRunning`; the webhook consumer's wait for the move sends its message again,
 * but the event write path (`events.ts`) answers 503 after writing the batch under the stray key,
 * and the client's retry, which finds the home directly, leaves that copy there: it is gathered
 * here. Idempotent; a key never placed costs one read.
 */
export async function gatherCurrentLogin(env: Env, home: string): Promise<void> {
  const { results } = await mainDatabase(env)
    .prepare("SELECT login_key FROM organization_names WHERE home_key = ?1 ORDER BY login_key")
    .bind(home)
    .all<{ login_key: string }>();
  for (const { login_key } of results) await gatherStrayRows(env, home, login_key);
  await gatherHeldLogins(env, home);
}
