import { controlPlaneClient } from "./control-plane-client.mjs";
import { demoWorld } from "./demo-data.mjs";

const BATCH = 1000;

/** Loads the demo world through the control plane and mints the demo keys. Returns the keys. */
export async function seedDemo({ url, adminToken, keysOnly = false, log = console.log }) {
  const client = controlPlaneClient(url, adminToken);
  const world = demoWorld();
  if (!keysOnly) {
    for (const org of world.organizations) {
      await client.putOrganization(org.login, org.body);
      for (const repo of org.repositories)
        await client.putRepository(org.login, repo.name, { private: repo.private, collaborators: repo.collaborators });
      for (const m of org.members) {
        await client.putMember(org.login, m.id, {
          githubLogin: m.login,
          workEmail: `${m.login.replace(/\[bot\]$/, "")}@example.com`,
          role: m.role,
          seat: m.seat,
          isBot: m.isBot,
        });
      }
      log(
        `organization ${org.login}: ${org.body.plan} plan, ${org.repositories.length} repositories, ${org.members.length} members`,
      );
    }
    for (const u of world.users) await client.putUser(u.id, { githubLogin: u.login });
    log(`users: ${world.users.length}`);
    for (let i = 0; i < world.events.length; i += BATCH) {
      const batch = world.events.slice(i, i + BATCH);
      await client.postEvents(batch);
      log(`events: ${Math.min(i + BATCH, world.events.length)}/${world.events.length}`);
    }
  }
  const analytics = await client.createKey(world.keyOwner, "analytics");
  const members = await client.createKey(world.keyOwner, "members");
  // A key of the organization, not of a person (contract section 18): what a seat-sync job would hold.
  const { org, name } = world.organizationKey;
  const organizationKey = await client.createOrganizationKey(org, { kind: "members", name });
  if (!keysOnly) await seatDemo(url, client, members.key, world);
  return {
    analyticsKey: analytics.key,
    membersKey: members.key,
    owner: world.users.find((u) => u.id === world.keyOwner),
    organizationKey: { org, name, key: organizationKey.key },
  };
}

/**
 * The lines `npm start` and `npm run seed` print after seeding; `app` adds the web app's address
 * (`npm start` turns local sign-in on). `adminToken`: the run's token, so the hint for new keys is a
 * whole command that works as printed (a run's generated token is in no file the seed script reads).
 * @param {string} url
 * @param {{ analyticsKey: string; membersKey: string; owner?: { login: string }; organizationKey?: { org: string; name: string; key: string } }} keys
 * @param {{ app?: boolean; adminToken?: string }} [options]
 */
export function keyReport(url, keys, { app = false, adminToken } = {}) {
  const base = url.replace(/\/+$/, "");
  const again = `npm run seed -- --keys-only --url ${base} --admin-token ${adminToken ?? "<ADMIN_TOKEN>"}`;
  return [
    "",
    ...(app ? [`The web app: ${base}/ (sign in as any demo user, e.g. ada-admin; your keys at ${base}/app/keys)`, ""] : []),
    `Demo keys for ${keys.owner?.login} (admin of acme). Shown once; for new ones: ${again}`,
    `  ANALYTICS_API_KEY=${keys.analyticsKey}`,
    `  MEMBERS_API_KEY=${keys.membersKey}`,
    ...(keys.organizationKey
      ? [
          `  ORG_MEMBERS_API_KEY=${keys.organizationKey.key}   (organization key ${keys.organizationKey.name} of ${keys.organizationKey.org}: belongs to ${keys.organizationKey.org}, not to a person)`,
        ]
      : []),
    "",
    "Try:",
    `  curl -s -H "Authorization: Bearer ${keys.analyticsKey}" "${base}/api/analytics/v1/prs?org=acme&perPage=5"`,
    `  curl -s -H "Authorization: Bearer ${keys.membersKey}" "${base}/api/v1/organizations/acme/members/1002"`,
    `  curl -s -X PATCH -H "Authorization: Bearer ${keys.membersKey}" -H "Content-Type: application/json" \\`,
    `       -d '{"seat": false, "expectedSeat": true}' "${base}/api/v1/organizations/acme/members/1002"`,
    ...(keys.organizationKey
      ? [
          `  curl -s -H "Authorization: Bearer ${keys.organizationKey.key}" "${base}/api/v1/organizations/${keys.organizationKey.org}/members?seat=true&limit=5"`,
        ]
      : []),
    `  curl -s "${base}/openapi.json"`,
    "",
  ].join("\n");
}

/**
 * Contract section 20 in the demo: acme assigns seats automatically (its admin's PATCH, with the
 * demo members key), a new hire's first pull request finds every seat taken and waits, then one
 * idle member's seat is released by a sync, so the members page has a seat to give.
 */
async function seatDemo(url, client, membersKey, world) {
  const { org, events, seatReleased } = world.waiting;
  const res = await fetch(`${url.replace(/\/+$/, "")}/api/v1/organizations/${org}/settings`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${membersKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ seatAssignment: "automatic", expectedSeatAssignment: "manual" }),
  });
  if (!res.ok && res.status !== 409) throw new Error(`PATCH ${org}/settings → ${res.status}: ${await res.text()}`);
  await client.postEvents(events);
  const member = world.organizations.find((o) => o.login === org).members.find((m) => m.id === seatReleased);
  await client.putMember(org, member.id, {
    githubLogin: member.login,
    workEmail: `${member.login}@example.com`,
    role: member.role,
    seat: false,
    isBot: member.isBot,
  });
}
