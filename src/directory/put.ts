import { callDurable } from "../lib/durable-call";
import { inStore, internalError } from "../lib/errors";
import type { Organization, OrganizationInput } from "../schemas/organization";
import { allocatedHome, defaultHome, type ReportedIdentity } from "./identity";
import { organizationAt, type Place, resolveHome, type Search } from "./resolve";
import { mainDatabase, tellShard } from "./shards";
import { homesOfPut, recordHome, recordInstallation } from "./store";

/** `OrganizationObject.putOrganization`'s answer: stored; or not here (no installation, and not told to create one); or another organization's. */
type PutAnswer =
  | { kind: "stored"; organization: Organization; directory: ReportedIdentity }
  | { kind: "absent" }
  | { kind: "taken" };

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
  const ask = ({ home, claim }: Place) =>
    callDurable<PutAnswer>(() => organizationAt(env, home).putOrganization({ home, login }, input, claim), { idempotent: true });
  const { place, answer } = await resolveHome(putHomes(env, login, input.installationId), ask, (a) => a.kind === "stored");
  if (answer.kind !== "stored") throw internalError();
  const { directory } = answer;
  await inStore("D1", () =>
    place.allocated
      ? recordHome(mainDatabase(env), { ...directory, key: directory.home })
      : recordInstallation(mainDatabase(env), directory.installationId, directory.home),
  );
  // Its first sight at the latest: the directory and the object learn its shard.
  await inStore("D1", () => tellShard(env, directory.home));
  return answer.organization;
}

/**
 * The folded login (without creating), the installation's and the named home (creating), the
 * folded login again when it had no installation, last a home of its own.
 */
async function* putHomes(env: Env, login: string, installationId: number): Search<PutAnswer> {
  const home = defaultHome(login);
  const first = yield { home, claim: false };
  const known = await inStore("D1", () => homesOfPut(mainDatabase(env), login, installationId));
  for (const at of [known.installation, known.named]) if (at !== null && at !== home) yield { home: at, claim: true };
  if (first.kind === "absent") yield { home, claim: true };
  yield { home: allocatedHome(login, installationId), claim: true, allocated: true };
}
