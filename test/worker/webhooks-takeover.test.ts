import { describe, expect, it } from "vitest";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { adminOk, env, type MemberErrorBody, postEventsOk, unique } from "./helpers";
import {
  accountOf,
  billing,
  consume,
  example,
  exported,
  installationOf,
  mergedPr,
  messageOf,
  type Person,
  person,
  readMember,
  repoId,
  review,
} from "./webhook-helpers";

/**
 * Issue 22, finding 3: an organization registered by the control plane only (installation id
 * known, GitHub account id not yet) must not learn its account id from another organization's
 * delivery. Every GitHub App delivery carries the installation that sent it; only a delivery of
 * the installation the organization holds may teach the account id. The messages go through the
 * real reducer and consumer (`messageOf`, `consume`), so each attempt's ack or retry is observed.
 */

/** `organization.member_added` for `login`, sent by `installationId` of account `accountId`, making `who` an admin. */
function adminJoins(login: string, who: Person, accountId: number, installationId: number) {
  const payload = example("organization", "member_added", login, 0, accountId);
  payload.installation = { id: installationId, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u" };
  const membership = payload.membership as { role: string; user: Record<string, unknown> };
  membership.role = "admin";
  membership.user = { ...membership.user, id: Number(who.id), login: `gh${who.id}`, type: "User" };
  return messageOf("organization", payload);
}

const homeOfAccount = (accountId: number) =>
  env.DB.prepare("SELECT home_key AS home FROM organization_accounts WHERE account_id = ?")
    .bind(accountId)
    .first<{ home: string }>();

describe("an organization whose account id is unknown is not taken over by another account's delivery", () => {
  it("a foreign account's member_added is retried, never applied; the organization's own installation teaches the real account id", async () => {
    const org = unique("tk");
    await billing(org); // installation installationOf(org), no account id yet
    const intruder = await person();
    const foreign = accountOf(`${org}-foreign`);
    const foreignMessage = adminJoins(org, intruder, foreign, foreign);

    const first = await consume(WEBHOOK_QUEUE, [foreignMessage]);
    expect(first.result.explicitAcks).toEqual([]);
    expect(first.result.retryMessages.map((r) => r.msgId)).toEqual(first.ids);
    const refused = await readMember(org, intruder, intruder.id);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as MemberErrorBody).error.code).toBe("org_access_denied");
    expect(await homeOfAccount(foreign)).toBeNull();

    // The organization's own delivery (its installation) applies and teaches the real account id.
    const owner = await person();
    const genuine = await consume(WEBHOOK_QUEUE, [adminJoins(org, owner, accountOf(org), installationOf(org))]);
    expect(genuine.result.explicitAcks).toEqual(genuine.ids);
    expect((await readMember(org, owner, owner.id)).status).toBe(200);
    expect(await homeOfAccount(accountOf(org))).toEqual({ home: org.toLowerCase() });

    // The foreign message's retries are refused for good (another account now), so it ends parked.
    const again = await consume(WEBHOOK_QUEUE, [foreignMessage], {}, 5);
    expect(again.result.retryMessages.map((r) => r.msgId)).toEqual(again.ids);
    expect((await readMember(org, intruder, intruder.id)).status).toBe(403);
    expect((await readMember(org, owner, intruder.id)).status).toBe(404);
  });

  it("a foreign account's pull request under the login is retried, not stored with the organization's rows", async () => {
    const org = unique("tk");
    await billing(org);
    const owner = await person();
    await adminOk("PUT", `/internal/v1/organizations/${org}/members/${owner.id}`, {
      githubLogin: `gh${owner.id}`,
      workEmail: `${owner.id}@example.com`,
      role: "admin",
      seat: true,
      isBot: false,
    });
    const repo = { id: repoId(), name: "api", private: false };
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false, collaborators: [] });
    await postEventsOk([review(org, "api", 1), review(org, "api", 2)]);
    const foreign = accountOf(`${org}-foreign`);
    const foreignPr = mergedPr(org, repo, 1, {}, foreign);
    foreignPr.installation = { id: foreign };

    const refused = await consume(WEBHOOK_QUEUE, [messageOf("pull_request", foreignPr)]);
    expect(refused.result.explicitAcks).toEqual([]);
    expect(refused.result.retryMessages.map((r) => r.msgId)).toEqual(refused.ids);
    expect(await exported(org, owner)).toEqual([]);

    // The organization's own pull request (its installation) is stored.
    const stored = await consume(WEBHOOK_QUEUE, [messageOf("pull_request", mergedPr(org, repo, 2))]);
    expect(stored.result.explicitAcks).toEqual(stored.ids);
    expect((await exported(org, owner)).map((r) => r.prNumber)).toEqual([2]);
  });
});
