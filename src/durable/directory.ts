import { callDurable, type DurableResult } from "../lib/durable-call";
import { inStore, internalError } from "../lib/errors";
import { foldName } from "../lib/names";
import type { Organization, OrganizationInput } from "../schemas/organization";
import { homeNamed, homeOfAccount, homesOfPut, recordHome, recordInstallation } from "../storage/directory";
import { moveRows } from "../storage/renames";
import type { PutOrganizationResult } from "./organization";

/**
 * Where an organization lives, by login (contract section 9: a renamed organization answers under
 * its new login with its data, and the old login is 404).
 *
 * Each organization's data lives under its **home key**: the name of its `OrganizationObject` and
 * the `org_key` of its rows in D1. For every organization never renamed the home key is its folded
 * login, as it has always been, so nothing moved. The object stores its home key and its current
 * login, and answers only for its current login. The directory in D1 (`storage/directory.ts`) names
 * the homes that are not the folded login: a renamed organization's new login, or a login re-used
 * by a new organization while its folded key is still another organization's home (which then gets
 * `<folded login>~<installation id>`: `~` never occurs in a GitHub login).
 *
 * Resolution: ask the object of the folded login first (no extra cost for organizations never
 * renamed); only when it answers "organization not found" read the directory and, if it names
 * another home, ask that one with the same login (which checks the login itself, so a stale
 * directory entry is harmless).
 */

/** An organization as a call names it: the object (home key) and the login the caller used. */
export interface OrgAddress {
  home: string;
  login: string;
}

/** The home of a login the directory does not name: the folded login. */
export const defaultHome = (login: string): string => foldName(login);

/** The organization object with this home key. */
export const organizationAt = (env: Env, home: string) => env.ORGANIZATIONS.getByName(home);

type OrganizationStub = ReturnType<typeof organizationAt>;

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
  const home = defaultHome(login);
  const first = await callDurable(() => call(organizationAt(env, home), { home, login }), { idempotent: true });
  if (first.ok || first.code !== "org_not_found") return first;
  const named = await inStore("D1", () => homeNamed(env.DB, login));
  if (named === null || named === home) return first;
  return callDurable(() => call(organizationAt(env, named), { home: named, login }), { idempotent: true });
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
  const home = defaultHome(login);
  const via = (at: string, adopt: boolean) =>
    callDurable(() => call(organizationAt(env, at), { home: at, login }, adopt), { idempotent: true });
  const first = await via(home, false);
  if (first.ok || first.code !== "org_not_found") return first;
  const named = await inStore("D1", () => homeNamed(env.DB, login));
  return via(named ?? home, true);
}

/**
 * `PUT /internal/v1/organizations/{org}`: at the login's home; else at the home of its installation
 * id (the organization holding that installation, whatever login the call names: an old one, or a
 * new one its object has not applied yet; it updates billing there and keeps its login), then the
 * home the directory names for the login. A login whose folded object is the home of another
 * organization (renamed away, or another account) gets a home of its own, which the directory then
 * names; the same installation id always allocates the same key, so a retry after a failure
 * between the two writes converges. The installation's home is recorded after every store (a repeat
 * writes no row).
 */
export async function putOrganization(env: Env, login: string, input: OrganizationInput): Promise<Organization> {
  const home = defaultHome(login);
  const put = (at: string, create: boolean) =>
    callDurable<PutOrganizationResult>(() => organizationAt(env, at).putOrganization({ home: at, login }, input, create), {
      idempotent: true,
    });
  const stored = async (result: PutOrganizationResult & { kind: "stored" }, allocated: boolean) => {
    const { directory } = result;
    await inStore("D1", () =>
      allocated
        ? recordHome(env.DB, { ...directory, key: directory.home })
        : recordInstallation(env.DB, directory.installationId, directory.home),
    );
    return result.organization;
  };
  const first = await put(home, false);
  if (first.kind === "stored") return stored(first, false);
  const known = await inStore("D1", () => homesOfPut(env.DB, login, input.installationId));
  for (const at of new Set([known.installation, known.named])) {
    if (at === null || at === home) continue;
    const there = await put(at, true);
    if (there.kind === "stored") return stored(there, false);
  }
  if (first.kind === "absent") {
    const created = await put(home, true);
    if (created.kind === "stored") return stored(created, false);
  }
  const allocated = await put(allocatedHome(login, input.installationId), true);
  if (allocated.kind !== "stored") throw internalError();
  return stored(allocated, true);
}

/** The home of a login re-used while its folded key is another organization's home. */
export const allocatedHome = (login: string, installationId: number): string => `${defaultHome(login)}~${installationId}`;

/**
 * Where a GitHub delivery belongs (the webhook consumer): the home recorded for its account id,
 * else the home the directory names for the first of `logins` that has one, else the folded first
 * login. The object there still checks that it is that organization (`claimOf`).
 */
export async function homeOfDelivery(
  env: Env,
  accountId: number | null,
  logins: readonly [string, ...string[]],
): Promise<string> {
  return (await homeOfAccount(env.DB, accountId, logins)) ?? defaultHome(logins[0]);
}

/**
 * After the directory learned that `at.login` lives at `at.home` (a rename applied; any change of
 * identity): the D1 rows stored under the login's default home before that, by reviewer events or
 * pull request deliveries that used the login before the directory named it, move to the home and
 * merge with its rows (`moveRows`). Not when that key is another organization's home (its object
 * holds an installation: the login was re-used): those rows are that organization's. Idempotent;
 * the webhook consumer runs it on every attempt that writes the directory, so a retry finishes it.
 */
export async function gatherStrayRows(env: Env, at: OrgAddress): Promise<void> {
  const stray = defaultHome(at.login);
  if (stray === at.home) return;
  if (await callDurable(() => organizationAt(env, stray).isHome(), { idempotent: true })) return;
  await moveRows(env.DB, { orgKey: stray }, { orgKey: at.home });
}
