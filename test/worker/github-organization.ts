import { afterEach, expect } from "vitest";
import { fakeInstallation } from "./github-fake";
import { addMember, adminOk, createKey } from "./helpers";
import type { Person } from "./webhook-helpers";

/** Organizations at the fake GitHub for the sync's tests (github-signals, fresh/daily-reconciliation). */

export type Fake = Awaited<ReturnType<typeof fakeInstallation>>;
const made: Fake[] = [];
afterEach(async () => {
  for (const fake of made.splice(0)) expect((await fake.stats()).drifts).toEqual([]);
});

export async function personWithId(id: string): Promise<Person> {
  await adminOk("PUT", `/internal/v1/users/${id}`, { githubLogin: `u${id}` });
  const [m, a] = await Promise.all([createKey(id, "members"), createKey(id, "analytics")]);
  return { id, membersKey: m.key, analyticsKey: a.key };
}

/**
 * An organization at the fake GitHub, registered by billing (Pro; no delivery, so no sync starts),
 * with admin `ada` and plain member `max` known to the service and to GitHub. After each test, the
 * fake must have seen no drift.
 */
export async function githubOrganization() {
  const fake = await fakeInstallation();
  made.push(fake);
  const tag = fake.login.slice(4);
  const { members } = await fake.setMembers([
    { login: `ada-${tag}`, role: "admin" },
    { login: `max-${tag}`, role: "member" },
  ]);
  const [ada, max] = members as { id: number; login: string }[];
  await adminOk("PUT", `/internal/v1/organizations/${fake.login}`, {
    installationId: fake.installationId,
    installedAt: "2026-01-01T00:00:00Z",
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
  });
  await addMember(fake.login, String(ada?.id), "admin");
  await addMember(fake.login, String(max?.id), "member");
  const admin = await personWithId(String(ada?.id));
  const member = await personWithId(String(max?.id));
  return { fake, org: fake.login, tag, admin, member, maxLogin: max?.login as string };
}
