import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { migrateLocalD1, QUOTAS_ON, startWrangler } from "../../scripts/lib/bench-common.mjs";
import { controlPlaneClient } from "../../scripts/lib/control-plane-client.mjs";
import { startFakeGithub } from "../fake-github/server";
import { freePort } from "./free-port";
import { until } from "./until";

/**
 * Contract section 17: "the sync is durable: it survives restarts ... resumes where it stopped".
 * The vitest integration cannot restart workerd, so this test runs the real thing: `wrangler dev`
 * on a persisted state folder, stopped in the middle of a sync's history step and started again.
 * Miniflare's Workflow engine does not wake an instance a restart interrupted (its status stays
 * `running`); the next trigger finds the run silent for longer than `SYNC_STALL_SECONDS` and
 * nudges the instance (pause, resume), which replays its finished steps from their stored results.
 */

const ORG = "restart-org";
const PULLS = 2_500;
const REPOS = 5;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

type Step = { state: string; count: number };
type Steps = { repositories: Step; members: Step; collaborators: Step; pullRequests: Step };
type Run = { id: number; state: string; steps: Steps; lastError: { message: string } | null };
type Status = { running: Run | null; last: Run | null };

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe("an installation sync across a restart of the runtime", () => {
  it("goes on from its last finished step when the next trigger finds it stalled, and ends exact", async () => {
    const github = await startFakeGithub();
    cleanups.push(() => new Promise<void>((resolve) => github.server.close(() => resolve())));
    const control = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${github.url}/__fake/${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.ok, `fake control ${method} ${path}: ${res.status}`).toBe(true);
      return (res.status === 204 ? undefined : await res.json()) as T;
    };
    const { publicKey, privateKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
    });
    const { appId } = await control<{ appId: number }>("POST", "apps", { publicKey });
    const { installationId } = await control<{ installationId: number }>("POST", "installations", {
      appId,
      account: { login: ORG, type: "Organization" },
    });
    // GitHub without its GraphQL API: the history goes through REST, one call per merged pull
    // request, long enough (seconds) to stop the runtime in the middle of it. (GraphQL reads these
    // 2,500 in one query.)
    await control("PUT", `installations/${installationId}/graphql`, { enabled: false });
    await control("PUT", `orgs/${ORG}/members`, {
      members: [
        { login: "ada", role: "admin" },
        { login: "max", role: "member" },
      ],
    });
    const now = Date.now();
    for (let r = 0; r < REPOS; r += 1) {
      await control("PUT", `repos/${ORG}/repo-${r}`, { private: false, collaborators: [] });
      const pulls = Array.from({ length: PULLS / REPOS }, (_, i) => {
        const mergedAt = now - 3600_000 - (i * 7 + r) * 60_000;
        return {
          number: i + 1,
          author: i % 2 ? "ada" : "max",
          createdAt: iso(mergedAt - DAY),
          updatedAt: iso(mergedAt + 60_000),
          mergedAt: iso(mergedAt),
          additions: i + 1,
          deletions: 1,
        };
      });
      await control("PUT", `repos/${ORG}/repo-${r}/pulls`, { pulls });
    }

    const persistTo = mkdtempSync(join(tmpdir(), "sync-restart-"));
    cleanups.push(() => rmSync(persistTo, { recursive: true, force: true }));
    const d1File = await migrateLocalD1(persistTo);
    const adminToken = `restart-${crypto.randomUUID()}`;
    // One port for both runs of the runtime: the restart comes back where the first one was.
    const port = await freePort();
    const start = () =>
      startWrangler({
        persistTo,
        port,
        adminToken,
        vars: {
          ...QUOTAS_ON,
          GITHUB_WEBHOOK_SECRET: "restart-test-secret",
          GITHUB_API_URL: github.url,
          GITHUB_APP_ID: String(appId),
          GITHUB_APP_PRIVATE_KEY: privateKey,
          // The next trigger nudges a running sync at once: the test need not wait 30 minutes.
          SYNC_STALL_SECONDS: "0",
        },
      });
    let server = await start();
    cleanups.push(() => server.stop());
    const client = controlPlaneClient(server.url, adminToken);
    await client.putOrganization(ORG, {
      installationId,
      installedAt: iso(now),
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 2 },
    });
    const status = () => client.request("GET", `/internal/v1/organizations/${ORG}/sync`) as Promise<Status>;

    const started = (await client.request("POST", `/internal/v1/organizations/${ORG}/sync`)) as Run;
    expect(started).toMatchObject({ id: 1, state: "running" });
    // Stopped in the middle of the history: members done, some pull requests stored, not all.
    const before = await until(status, (s) => (s.running?.steps.pullRequests.count ?? 0) > 0, 120_000, "history begun");
    await server.stop();
    expect(before.running?.steps.members).toEqual({ state: "done", count: 2 });
    const storedBefore = before.running?.steps.pullRequests.count ?? 0;
    expect(storedBefore).toBeLessThan(PULLS);

    server = await start();
    // Nothing woke the instance: the run still says running, where it was.
    const after = await status();
    expect(after.running).toMatchObject({ id: 1, state: "running" });
    // A trigger finds it stalled: it answers the running sync and nudges its instance.
    const again = await fetch(`${server.url}/internal/v1/organizations/${ORG}/sync`, {
      method: "POST",
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("sync_in_progress");

    const ended = await until(status, (s) => s.last?.id === 1, 120_000, "sync 1 finished");
    expect(ended.running).toBeNull();
    expect(ended.last).toMatchObject({
      id: 1,
      state: "complete",
      steps: { members: { state: "done", count: 2 }, pullRequests: { state: "done", count: PULLS } },
    });
    expect(ended.last?.lastError?.message).toContain("paused and resumed");

    // It went on, it did not start over: the member lists were read once (admins, members).
    const stats = await control<{ requests: { path: string }[]; drifts: string[] }>("GET", `installations/${installationId}`);
    expect(stats.requests.filter((r) => r.path.startsWith(`/orgs/${ORG}/members`))).toHaveLength(2);
    expect(stats.drifts).toEqual([]);
    // Nothing lost, nothing twice: every pull request stored once, with its lines (in whichever
    // local D1 database holds the organization's analytics).
    await server.stop();
    const stored = { n: 0, added: 0 };
    for (const file of readdirSync(dirname(d1File)).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")) {
      const db = new DatabaseSync(join(dirname(d1File), file), { readOnly: true });
      const row = db.prepare("SELECT count(*) AS n, coalesce(sum(lines_added), 0) AS added FROM pull_requests").get() as {
        n: number;
        added: number;
      };
      db.close();
      stored.n += row.n;
      stored.added += row.added;
    }
    const perRepo = PULLS / REPOS;
    expect(stored).toEqual({ n: PULLS, added: REPOS * ((perRepo * (perRepo + 1)) / 2) });
  }, 300_000);
});
