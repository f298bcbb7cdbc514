import type { MembershipPosition } from "../auth/user-object";
import { userStub } from "../auth/user-stub";
import { organizationAt } from "../directory/resolve";
import { callDurable } from "../lib/durable-call";
import { errorField, log } from "../lib/log";
import { parseOrgKeyPrincipal } from "../lib/principal";
import type { MembershipAnswer } from "../organization/answers";
import type { OrganizationEntry, OrganizationPage } from "../schemas/organization";
import { encodeOrgCursor, type OrgCursor } from "./query";

/**
 * `GET /api/v1/organizations` (contract section 8). The caller's `UserObject` holds an index of
 * the organizations they belong to, written by each organization's object after a membership
 * write; the index may claim too much (a report that failed after a removal) but each
 * organization's object is the authority: every candidate is confirmed there, in parallel, and
 * only confirmed entries are listed. A candidate the organization denies is dropped from the page
 * and the index is repaired with the organization's version (after the answer, in `waitUntil`).
 * Candidates are fetched in rounds until the page is full, so a denied entry never shortens a page
 * that has a successor, and `nextCursor` is null exactly on the last page. Entries name each
 * organization by its home key (its object, whatever its login is now) and are ordered by the
 * login the organization last reported; each entry shows the current login. The index lists only
 * organizations reported installed, so memberships of uninstalled ones cost nothing; one the
 * organization answers "member, not installed" (uninstalled before the index kept the state) is
 * marked in the index the same way.
 */
export async function listOrganizations(
  env: Env,
  ctx: ExecutionContext,
  userId: string,
  after: OrgCursor | null,
  limit: number,
): Promise<OrganizationPage> {
  // An organization key lists only its own organization (contract section 18).
  const orgKey = parseOrgKeyPrincipal(userId);
  if (orgKey) {
    if (after !== null) return { data: [], nextCursor: null };
    const own = await callDurable<MembershipAnswer>(() => organizationAt(env, orgKey.home).membershipOf(userId), {
      idempotent: true,
    });
    return { data: own.entry ? [own.entry] : [], nextCursor: null };
  }
  const found: { key: MembershipPosition; entry: OrganizationEntry }[] = [];
  let position = after;
  for (;;) {
    const wanted = limit + 1 - found.length;
    const keys = await callDurable(() => userStub(env, userId).listMemberships(position, wanted), { idempotent: true });
    const answers = await Promise.all(
      keys.map((key) =>
        callDurable<MembershipAnswer>(() => organizationAt(env, key.orgKey).membershipOf(userId), { idempotent: true }),
      ),
    );
    keys.forEach((key, i) => {
      const answer = answers[i] as MembershipAnswer;
      if (answer.entry) found.push({ key, entry: answer.entry });
      else ctx.waitUntil(repair(env, userId, key, answer));
    });
    if (found.length > limit || keys.length < wanted) break;
    position = keys.at(-1) ?? position;
  }
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return { data: page.map((f) => f.entry), nextCursor: found.length > limit && last ? encodeOrgCursor(last.key) : null };
}

/** Housekeeping: the listing is already right without it. */
async function repair(env: Env, userId: string, key: MembershipPosition, answer: MembershipAnswer): Promise<void> {
  try {
    const index = userStub(env, userId);
    if (answer.member) await index.recordNotInstalled(key.orgKey, answer.version);
    else await index.recordMembership(key.orgKey, key.loginKey, false, answer.version, false);
  } catch (error) {
    log.warn("organizations index not repaired", { error: errorField(error) });
  }
}
