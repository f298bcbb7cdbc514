import { createScheduledController, introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../src/index";
import { foldName } from "../../../src/lib/names";
import type { SyncStatus } from "../../../src/schemas/sync";
import { syncInstanceId } from "../../../src/sync/start";
import { githubOrganization } from "../github-organization";
import { addMember, adminOk, call, env } from "../helpers";
import { readMember } from "../webhook-helpers";

/**
 * Contract section 17, the daily reconciliation: its Cron Trigger walks every installed
 * organization. Here, in a workerd of its own (the `worker-fresh` project), the walk covers only the
 * organizations this file creates, so the test's cost does not grow with the rest of the suite (in
 * the shared storage it reconciled hundreds of other files' organizations and timed out at 30 s).
 */

describe("the daily reconciliation (Cron Trigger)", () => {
  it("heals a member the control plane changed against GitHub, and one GitHub added without a webhook, audited as github", async () => {
    const { fake, org, admin: ada, member, tag } = await githubOrganization();
    // Drift: the control plane made max an admin; GitHub still says member. Zoe joined at GitHub, no delivery.
    await addMember(org, member.id, "admin");
    const { members } = await fake.setMembers([
      { login: `ada-${tag}`, role: "admin" },
      { login: `max-${tag}`, role: "member" },
      { login: `zoe-${tag}`, role: "member" },
    ]);
    const zoe = String(members.find((m) => m.login.startsWith("zoe"))?.id);
    expect((await readMember(org, ada, zoe)).status).toBe(404);

    const instance = await introspectWorkflowInstance(env.SYNC, syncInstanceId(foldName(org), 1));
    try {
      // The handler starts every installed organization's reconciliation before it returns.
      await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), env);
      await instance.waitForStatus("complete");
    } finally {
      await instance.dispose();
    }
    expect(await (await readMember(org, ada, member.id)).json()).toMatchObject({ role: "member" });
    expect(await (await readMember(org, ada, zoe)).json()).toMatchObject({ role: "member", seat: false });
    const audit = await call(`/api/v1/organizations/${org}/audit-log?limit=100`, {
      headers: { Authorization: `Bearer ${ada.membersKey}` },
    });
    const entries = ((await audit.json()) as { data: { action: string; source: string; githubUserId: string; after: unknown }[] })
      .data;
    expect(entries.find((e) => e.githubUserId === member.id && e.source === "github")).toMatchObject({
      action: "member.updated",
      after: { role: "member" },
    });
    expect(entries.find((e) => e.githubUserId === zoe)).toMatchObject({ action: "member.added", source: "github" });
    // A reconciliation reads no history.
    const { last } = await adminOk<SyncStatus>("GET", `/internal/v1/organizations/${org}/sync`);
    expect(last).toMatchObject({ id: 1, trigger: "reconcile", state: "complete", steps: { pullRequests: { state: "pending" } } });
    expect((await fake.stats()).requests.some((r) => r.path.includes("/pulls"))).toBe(false);
  });
});
