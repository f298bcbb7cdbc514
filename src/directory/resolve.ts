import { callDurable, type DurableResult } from "../lib/durable-call";
import { inStore, internalError } from "../lib/errors";
import { allocatedHome, defaultHome, type OrgAddress } from "./identity";
import { mainDatabase } from "./shards";
import { homeNamed, homeOfAccount } from "./store";

/**
 * Where an organization lives, by login (contract section 9: a renamed organization answers under
 * its new login with its data, and the old login is 404).
 *
 * Each organization's data lives under its **home key**: the name of its `OrganizationObject` and
 * the `org_key` of its rows in D1. For every organization never renamed the home key is its folded
 * login, as it has always been, so nothing moved. The object stores its home key and its current
 * login, and answers only for its current login. The directory in D1 (`store.ts`) names the homes
 * that are not the folded login: a renamed organization's new login, or a login re-used by a new
 * organization while its folded key is still another organization's home (which then gets
 * `<folded login>~<installation id>`: `identity.ts` `allocatedHome`).
 *
 * Every caller that looks for an organization's object (the routes, the control plane, the webhook
 * consumer) goes through `resolveHome` with a search: the homes to ask, in order, each computed only
 * when reached (so the directory in D1 is read only when the first home was not it). The object
 * asked checks that it is the organization named (a stale directory entry is harmless). The event
 * write path, which asks no object, reads the same directory in one go (`events.ts`).
 *
 * The objects are reached through their binding (`env.ORGANIZATIONS`), never by importing their
 * module: the directory sits below the objects' callers and above nothing of theirs.
 */

/** One home to ask, and whether the object there may take the organization in (it has no installation yet). */
export interface Place {
  home: string;
  claim: boolean;
  /** A home allocated for a login re-used by another organization: the directory must name it. */
  allocated?: boolean;
}

/**
 * The homes to ask, in order. The answer at each place comes back from its `yield` (a search may
 * depend on it); a place asked before is not asked again, its earlier answer comes back instead.
 */
export type Search<R> = AsyncGenerator<Place, void, R>;

/** The place a search ended at and the answer there. */
export interface Resolved<R> {
  place: Place;
  answer: R;
}

/**
 * The one resolving function: asks the search's places in order until `settles` accepts an answer,
 * and answers that place, or the last place asked when none settles. Every search names at least
 * one place.
 */
export async function resolveHome<R>(
  search: Search<R>,
  ask: (place: Place) => Promise<R>,
  settles: (answer: R) => boolean,
): Promise<Resolved<R>> {
  const asked = new Map<string, R>();
  let last: Resolved<R> | null = null;
  let step = await search.next(undefined as R);
  while (!step.done) {
    const place = step.value;
    const key = JSON.stringify([place.home, place.claim, place.allocated === true]);
    const answer = asked.has(key) ? (asked.get(key) as R) : await ask(place);
    asked.set(key, answer);
    last = { place, answer };
    if (settles(answer)) {
      await search.return();
      return last;
    }
    step = await search.next(answer);
  }
  if (last === null) throw internalError();
  return last;
}

/** The organization object with this home key. */
export const organizationAt = (env: Env, home: string) => env.ORGANIZATIONS.getByName(home);

type OrganizationStub = ReturnType<typeof organizationAt>;

/** The public interfaces' search: the folded login's object, then the home the directory names. */
async function* byLogin<R>(env: Env, login: string, claimNamed: boolean): Search<R> {
  yield { home: defaultHome(login), claim: false };
  const named = await inStore("D1", () => homeNamed(mainDatabase(env), login));
  if (claimNamed) yield { home: named ?? defaultHome(login), claim: true };
  else if (named !== null) yield { home: named, claim: false };
}

const found = (result: DurableResult<unknown>) => result.ok || result.code !== "org_not_found";

/**
 * A read or guarded write of the public interfaces, by login: the folded login's object first,
 * then the home the directory names (only after an "organization not found"). The call must be
 * idempotent (it may run twice).
 */
export async function atOrganization<T>(
  env: Env,
  login: string,
  call: (stub: OrganizationStub, at: OrgAddress) => Promise<DurableResult<T>>,
): Promise<DurableResult<T>> {
  const ask = ({ home }: Place) => callDurable(() => call(organizationAt(env, home), { home, login }), { idempotent: true });
  return (await resolveHome(byLogin<DurableResult<T>>(env, login, false), ask, found)).answer;
}

/**
 * A control-plane sync of members or repositories, by login. As `atOrganization`, and a login whose
 * folded object has no installation yet and that the directory does not name elsewhere is written
 * there (`adopt`): data may be synchronised before the installation is registered. A login whose
 * folded object is another organization's (an old login) answers "organization not found".
 */
export async function syncOrganization<T>(
  env: Env,
  login: string,
  call: (stub: OrganizationStub, at: OrgAddress, adopt: boolean) => Promise<DurableResult<T>>,
): Promise<DurableResult<T>> {
  const ask = ({ home, claim }: Place) =>
    callDurable(() => call(organizationAt(env, home), { home, login }, claim), { idempotent: true });
  return (await resolveHome(byLogin<DurableResult<T>>(env, login, true), ask, found)).answer;
}

/** What a GitHub delivery names: its account id, its login, a rename's `from`, an installation event's id. */
export interface DeliveryLookup {
  accountId: number | null;
  login: string;
  /** A rename's previous login: the organization is there until the rename applies. */
  from?: string;
  /** An installation event's id: a login whose object is another organization's gets a home of its own. */
  installationId?: number;
}

/**
 * Where a GitHub delivery belongs (the webhook consumer): the home recorded for its account id,
 * else the home the directory names for the first of its logins (`from`, then the login) that has
 * one, else the folded first login. When the object there is not this organization (a stale
 * entry): the folded logins' objects in the same order (for a rename its `from` first: another
 * organization may already hold that login in the directory); for an installation, last a home of
 * its own (the login's object is another organization's: renamed away, or another account). The
 * object asked still checks that it is that organization (`claimOf`). D1 failures are thrown as
 * they are: the consumer retries the message.
 */
export async function* deliveryHomes<R>(env: Env, lookup: DeliveryLookup): Search<R> {
  const logins: [string, ...string[]] = lookup.from === undefined ? [lookup.login] : [lookup.from, lookup.login];
  const recorded = await homeOfAccount(mainDatabase(env), lookup.accountId, logins);
  yield { home: recorded ?? defaultHome(logins[0]), claim: false };
  for (const login of logins) yield { home: defaultHome(login), claim: false };
  if (lookup.installationId !== undefined) yield { home: allocatedHome(lookup.login, lookup.installationId), claim: false };
}
