#!/usr/bin/env node
/**
 * npm run bench:mcp [-- --smoke] [--seconds N] [--no-write] [--port N]
 *
 * The MCP endpoint against the REST routes it mirrors (contract section 15; target: a tool call
 * within 1.3x of the REST request): `tools/call get_member` against `GET .../members/{id}`, and
 * `tools/call list_pull_request_analytics` (a page of 100 of 300 pull requests) against
 * `GET /api/analytics/v1/prs`; and `tools/call get_member` with an OAuth access token (contract section
 * 19; target within 1.1x) against the same call with a key. Under `wrangler dev` on 127.0.0.1:9015
 * (or --port) with quotas counted and the local sign-in on (to approve the token). One
 * client at c=1 alternates request by request (REST, MCP, then MCP, REST, ...), so both sides see
 * the machine at the same moments. Every answer is checked (200, a result, no tool error).
 * Writes docs/performance.md (not with --smoke; CI runs the smoke version).
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { fmt, migrateLocalD1, percentiles, QUOTAS_ON, startWrangler, table, writeSection } from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";
import { oauthTokens } from "./lib/oauth-token.mjs";

const { values: opts } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    seconds: { type: "string" },
    "no-write": { type: "boolean", default: false },
    port: { type: "string", default: "9015" },
  },
});
const seconds = Number(opts.seconds ?? (opts.smoke ? 1 : 20));
const persistTo = opts.smoke ? ".bench/mcp-smoke" : ".bench/mcp";
const PORT = Number(opts.port);
const ADMIN_TOKEN = "bench-mcp-admin-token-0123456789abcdef";
const ORG = "bench-mcp";
const ADMIN = "9101";
const MEMBER = "9102";
const PRS = opts.smoke ? 30 : 300;

/** One REST request: its duration, after checking it answered 200. */
async function restRequest(url, path, key) {
  const started = performance.now();
  const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text}`);
  return ms;
}

let id = 0;
/** One `tools/call` as an MCP client sends it (stateless: no session); its duration, after checking the result. */
async function toolCall(url, key, name, args) {
  const started = performance.now();
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: args } }),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200 || !text.includes('"structuredContent"') || text.includes('"isError":true')) {
    throw new Error(`tools/call ${name} answered ${res.status}: ${text.slice(0, 500)}`);
  }
  return ms;
}

/** Alternates the two sides request by request for `seconds` after a warm-up; per side p50, p99 and count. */
async function interleaved(sides, runSeconds) {
  const samples = sides.map(() => []);
  const loop = async (untilMs, record) => {
    for (let i = 0; performance.now() < untilMs; i++) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const j of order) {
        const ms = await sides[j]();
        if (record) samples[j].push(ms);
      }
    }
  };
  await loop(performance.now() + 2000, false);
  await loop(performance.now() + runSeconds * 1000, true);
  return samples.map((xs) => ({ ...percentiles(xs), requests: xs.length }));
}

rmSync(persistTo, { recursive: true, force: true });
await migrateLocalD1(persistTo);
const server = await startWrangler({
  persistTo,
  port: PORT,
  adminToken: ADMIN_TOKEN,
  vars: { ...QUOTAS_ON, DEV_SIGN_IN: "true" },
});
try {
  const cp = controlPlaneClient(server.url, ADMIN_TOKEN);
  await cp.putOrganization(ORG, {
    installationId: 99_000_555,
    installedAt: "2025-01-01T00:00:00.000Z",
    blocked: false,
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 10 },
  });
  for (const [user, role] of [
    [ADMIN, "admin"],
    [MEMBER, "member"],
  ]) {
    await cp.putUser(user, { githubLogin: `user${user}` });
    await cp.putMember(ORG, user, {
      githubLogin: `user${user}`,
      workEmail: `u${user}@example.com`,
      role,
      seat: true,
      isBot: false,
    });
  }
  const events = [];
  for (let n = 1; n <= PRS; n++) {
    const day = String(1 + (n % 28)).padStart(2, "0");
    events.push(
      {
        type: "pull_request",
        org: ORG,
        repo: "api",
        prNumber: n,
        author: "alice",
        createdAt: `2026-10-${day}T08:00:00Z`,
        mergedAt: `2026-10-${day}T12:00:00Z`,
        linesAdded: n,
        linesDeleted: 1,
        updatedAt: "2026-11-01T00:00:00Z",
      },
      {
        type: "review",
        org: ORG,
        repo: "api",
        prNumber: n,
        reviewId: `r${n}`,
        status: "completed",
        completedAt: `2026-10-${day}T10:00:00Z`,
        updatedAt: "2026-11-01T00:00:00Z",
      },
    );
  }
  await cp.postEvents(events);
  const members = (await cp.createKey(ADMIN, "members")).key;
  const analytics = (await cp.createKey(ADMIN, "analytics")).key;
  const oauth = (await oauthTokens(server.url, ADMIN)).access_token;

  const window = { org: ORG, startDate: "2026-10-01", endDate: "2026-10-31", perPage: 100 };
  // Each row: the baseline, what is measured against it, and the target ratio of their medians.
  const cases = [
    {
      label: "get_member / GET member",
      rest: () => restRequest(server.url, `/api/v1/organizations/${ORG}/members/${MEMBER}`, members),
      mcp: () => toolCall(server.url, members, "get_member", { org: ORG, githubUserId: MEMBER }),
      target: 1.3,
    },
    {
      label: `list_pull_request_analytics / GET export (page of 100 of ${PRS})`,
      rest: () => restRequest(server.url, `/api/analytics/v1/prs?${new URLSearchParams(window)}`, analytics),
      mcp: () => toolCall(server.url, analytics, "list_pull_request_analytics", window),
      target: 1.3,
    },
    {
      label: "get_member with an OAuth token / with a cbk_ key (both MCP)",
      rest: () => toolCall(server.url, members, "get_member", { org: ORG, githubUserId: MEMBER }),
      mcp: () => toolCall(server.url, oauth, "get_member", { org: ORG, githubUserId: MEMBER }),
      target: 1.1,
    },
  ];
  const rows = [];
  for (const c of cases) {
    console.log(`Measuring ${c.label} (c=1, interleaved, ${seconds} s)...`);
    const [rest, mcp] = await interleaved([c.rest, c.mcp], seconds);
    const ratio = mcp.p50 / rest.p50;
    console.log(
      `  baseline p50 ${fmt(rest.p50)} ms, measured p50 ${fmt(mcp.p50)} ms: ${fmt(ratio)}x (${mcp.requests} requests each)`,
    );
    rows.push([
      c.label,
      fmt(rest.p50),
      fmt(rest.p99),
      fmt(mcp.p50),
      fmt(mcp.p99),
      `${fmt(ratio)}x`,
      ratio <= c.target ? `met (≤ ${c.target}x)` : `missed (> ${c.target}x)`,
      String(mcp.requests),
    ]);
  }
  const result = table(
    [
      "measured / baseline (c=1)",
      "baseline p50 (ms)",
      "baseline p99",
      "measured p50 (ms)",
      "measured p99",
      "ratio (p50)",
      "target",
      "requests each",
    ],
    rows,
  );
  console.log(`\n${result}`);
  if (!opts.smoke && !opts["no-write"]) {
    writeSection(
      "docs/performance.md",
      "mcp",
      [
        `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:mcp\` (contract section 15): a stateless`,
        "`tools/call` (one POST /mcp, answered as an SSE stream, quotas counted) against the REST request it mirrors, and",
        "(contract section 19) the same tool call with an OAuth access token against it with a key, under",
        `wrangler dev, one client at c=1 alternating request by request for ${seconds} s per row after a 2 s warm-up. On this`,
        "shared 2-core machine other work ran at the same time: the ratios hold (both sides saw the same moments), the absolute",
        "numbers are those of a loaded machine.",
        "",
        result,
      ].join("\n"),
    );
    console.log("\nWritten to docs/performance.md");
  }
} finally {
  await server.stop();
}
