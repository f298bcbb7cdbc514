#!/usr/bin/env node
/**
 * npm run bench:webhooks [-- --smoke] [--seconds N] [--no-write]
 *
 * Starts `wrangler dev` (127.0.0.1:8931, fresh local state, request tracing off) with a webhook
 * secret, registers a Pro organization with an admin through the control plane, and measures:
 * 1. accepted deliveries per second (202 queued) at concurrency 1 and 10: signed `pull_request`
 *    deliveries, each with its own delivery id and pull request number (autocannon; anything but
 *    a 202 counts as unexpected), against GET /healthz as the baseline;
 * 2. end to end: from POSTing a merged pull request's delivery to its row being visible in the
 *    analytics export (polled every 10 ms), one delivery at a time.
 * Prints one table and writes it to docs/performance.md (not with --smoke).
 */
import { createHmac, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { fmt, load, migrateLocalD1, percentiles, QUOTAS_ON, startWrangler, table, writeSection } from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

const { values: opts } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    seconds: { type: "string" },
    port: { type: "string", default: "8931" },
    "no-write": { type: "boolean", default: false },
  },
});
const seconds = Number(opts.seconds ?? (opts.smoke ? 1 : 5));
const endToEndRuns = opts.smoke ? 3 : 30;
const persistTo = opts.smoke ? ".bench/webhooks-smoke" : ".bench/webhooks";
const adminToken = `bench-${crypto.randomUUID()}`; // the Worker refuses tokens under 32 characters
const secret = `bench-secret-${Date.now()}`;
const ORG = "bench-hooks";
const REPO = { id: 424242, name: "api" };
const log = (...args) => console.log(...args);

const sign = (body) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** A merged pull request delivery, shaped as GitHub sends it (the fields the service reads, and some). */
function pullRequestBody(number, updatedAt = new Date().toISOString()) {
  return JSON.stringify({
    action: "closed",
    number,
    pull_request: {
      number,
      state: "closed",
      merged: true,
      user: { login: "bench-author", id: 1, type: "User" },
      created_at: "2026-10-01T10:00:00Z",
      updated_at: updatedAt,
      merged_at: "2026-10-02T10:00:00Z",
      additions: 10,
      deletions: 2,
      title: "A change",
      body: "x".repeat(2000),
    },
    repository: { id: REPO.id, name: REPO.name, full_name: `${ORG}/${REPO.name}`, private: false, owner: { login: ORG, id: 7 } },
    organization: { login: ORG, id: 7 },
    // Every App delivery names the installation that sent it: the organization registered below holds 1.
    installation: { id: 1, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==" },
    sender: { login: "bench-author", id: 1 },
  });
}

const headersFor = (body, event = "pull_request") => ({
  "Content-Type": "application/json",
  "X-GitHub-Event": event,
  "X-GitHub-Delivery": randomUUID(),
  "X-Hub-Signature-256": sign(body),
});

rmSync(persistTo, { recursive: true, force: true });
await migrateLocalD1(persistTo);
log(`Starting wrangler dev on ${persistTo}...`);
const server = await startWrangler({
  persistTo,
  port: Number(opts.port),
  adminToken,
  vars: { ...QUOTAS_ON, GITHUB_WEBHOOK_SECRET: secret },
});
let failed = false;
try {
  const client = controlPlaneClient(server.url, adminToken);
  const caller = "9201";
  await client.putUser(caller, { githubLogin: "bench-admin" });
  await client.putOrganization(ORG, {
    installationId: 1,
    installedAt: "2025-01-01T00:00:00Z",
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 10 },
  });
  await client.putMember(ORG, caller, {
    githubLogin: "bench-admin",
    workEmail: "admin@example.com",
    role: "admin",
    seat: true,
    isBot: false,
  });
  const { key } = await client.createKey(caller, "analytics");

  // 1. Accepted deliveries per second.
  let prNumber = 1_000_000;
  const deliveries = (connections, event = "pull_request") =>
    load({
      url: server.url,
      path: "/webhooks/github",
      method: "POST",
      connections,
      seconds,
      expect: [202],
      setupClient: (c) => {
        c.setRequests([
          {
            method: "POST",
            path: "/webhooks/github",
            setupRequest: (req) => {
              const body = pullRequestBody(prNumber++);
              return { ...req, body, headers: { ...req.headers, ...headersFor(body, event) } };
            },
          },
        ]);
      },
    });
  log("Measuring /healthz and deliveries at c=1 and c=10...");
  await load({ url: server.url, path: "/healthz", connections: 1, seconds: 1 }); // warm-up
  const rows = [];
  for (const c of [1, 10]) {
    const health = await load({ url: server.url, path: "/healthz", connections: c, seconds });
    const hooks = await deliveries(c);
    // The same bodies as an event the service does not use: signature, parsing, no KV, no queue.
    const ignored = await deliveries(c, "star");
    if (hooks.unexpected > 0) {
      failed = true;
      log(`unexpected answers at c=${c}:`, hooks.statusCodes);
    }
    rows.push([
      `c=${c}`,
      fmt(health.rps, 0),
      fmt(health.p50),
      fmt(hooks.rps, 0),
      fmt(hooks.p50),
      fmt(hooks.p99),
      String(hooks.total),
      String(hooks.unexpected),
      fmt(ignored.rps, 0),
      fmt(ignored.p50),
    ]);
  }

  // 2. End to end: delivery → visible in the export. The review comes first (reviewer events).
  log(`Measuring delivery → visible in the export (${endToEndRuns} runs)...`);
  const samples = [];
  for (let i = 0; i < endToEndRuns; i++) {
    const number = 10 + i;
    await client.postEvents([
      {
        type: "review",
        org: ORG,
        repo: REPO.name,
        prNumber: number,
        reviewId: `bench-r-${number}`,
        status: "completed",
        completedAt: "2026-10-01T12:00:00Z",
        updatedAt: "2026-10-01T12:00:00Z",
      },
    ]);
    const body = pullRequestBody(number, "2026-10-02T10:00:00Z");
    const started = performance.now();
    const res = await fetch(`${server.url}/webhooks/github`, { method: "POST", headers: headersFor(body), body });
    if (res.status !== 202) throw new Error(`delivery → ${res.status}: ${await res.text()}`);
    for (;;) {
      const page = await fetch(
        `${server.url}/api/analytics/v1/prs?org=${ORG}&repo=${REPO.name}&startDate=2026-09-01&perPage=100`,
        {
          headers: { Authorization: `Bearer ${key}` },
        },
      );
      const { data } = await page.json();
      if (data.some((row) => row.prNumber === number)) break;
      if (performance.now() - started > 30_000) throw new Error(`pull request ${number} not visible after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    samples.push(performance.now() - started);
  }
  const e2e = percentiles(samples);

  const text = [
    `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench:webhooks\` under \`wrangler dev\` (127.0.0.1, ` +
      "X_LOCAL_OBSERVABILITY=false, local queue, KV, D1 and Durable Objects; 2 shared cores). Each delivery is a signed " +
      "`pull_request` of about 2.5 KB with its own delivery id: verified, reduced, checked against its KV marker, enqueued, " +
      'and its marker written after the answer; the consumer runs in the same process meanwhile. "Ignored": the same ' +
      "bodies as an unused event (signature and parsing only), which separates the queue and KV from the rest.",
    "",
    table(
      [
        "Concurrency",
        "/healthz req/s",
        "/healthz p50 ms",
        "Deliveries 202/s",
        "p50 ms",
        "p99 ms",
        "Deliveries",
        "Not 202",
        "Ignored 202/s",
        "Ignored p50 ms",
      ],
      rows,
    ),
    "",
    `Delivery → visible in the export (${samples.length} runs, one at a time): p50 ${fmt(e2e.p50, 0)} ms, p99 ${fmt(e2e.p99, 0)} ms. ` +
      "The consumer runs with `max_batch_timeout = 0` (a batch is handed over as soon as messages are there; with the " +
      "default of a few seconds this time is the timeout). It includes the queue hop, the organization's home (one D1 read " +
      "of the directory by account id), one Durable Object read (the repository's current name), one D1 batch and the " +
      "export's poll interval (10 ms).",
  ].join("\n");
  log(`\n${text}\n`);
  if (!opts.smoke && !opts["no-write"]) writeSection("docs/performance.md", "webhooks", `## Webhooks\n\n${text}`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);
