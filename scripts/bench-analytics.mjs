#!/usr/bin/env node
/**
 * npm run bench:analytics [-- --smoke] [--reuse] [--seconds N] [--no-write] [--writes-only]
 *
 * Builds an analytics data set at scale in a local D1 file (see lib/bench-data.mjs), starts
 * `wrangler dev` on it, and measures GET /api/analytics/v1/prs with autocannon at concurrency 1 and
 * 10 for each case, next to GET /readyz (one SELECT 1 on D1) as the baseline of the same run. It
 * also times the same page queries directly on the SQLite file (the floor) and records their
 * query plans. Before that it stores 1,000-event batches with the Worker's own write path on the
 * same D1 file and reports the rows D1 writes per event (first delivery, replay, older retry,
 * newer versions). Prints the tables and writes them to docs/performance.md (not with --smoke).
 * --writes-only stops after the event writes (row counts, which do not depend on the machine's load).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { experimental_readRawConfig, getPlatformProxy } from "wrangler";
import { mergedPullRequestsSql } from "../src/storage/analytics.ts";
import { storeEvents } from "../src/storage/events.ts";
import { fmt, load, migrateLocalD1, percentiles, startWrangler, table, writeSection } from "./lib/bench-common.mjs";
import { FULL, generate, reviewerBatch, SMOKE, smallOrg } from "./lib/bench-data.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

const { values: opts } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    reuse: { type: "boolean", default: false },
    seconds: { type: "string" },
    port: { type: "string", default: "8911" },
    "no-write": { type: "boolean", default: false },
    "writes-only": { type: "boolean", default: false },
  },
});
const spec = opts.smoke ? SMOKE : FULL;
const seconds = Number(opts.seconds ?? (opts.smoke ? 1 : 5));
const persistTo = opts.smoke ? ".bench/analytics-smoke" : ".bench/analytics";
const DAY = 86_400_000;
const BATCH_SHAPE = "per pull request 1 pull_request, 3 reviews, 10 findings, 1 AI-authorship event";
const now = Date.now();
const adminToken = `bench-${now}`;
const log = (...args) => console.log(...args);

// 1. Data.
if (!opts.reuse) rmSync(persistTo, { recursive: true, force: true });
mkdirSync(persistTo, { recursive: true });
log(`Applying D1 migrations to ${persistTo}...`);
const file = await migrateLocalD1(persistTo);
if (!opts.reuse) generate(file, { spec, now, log });

// 2. The cases, in storage terms (for the direct SQLite timing) and as HTTP queries.
const iso = (ms) => new Date(ms).toISOString();
const yearStart = now - 365 * DAY;
const base = {
  orgKey: "bigco",
  repoKey: null,
  accessibleRepoKeys: null,
  start: now - 30 * DAY,
  end: now,
  after: null,
  limit: 101,
};
const sqlite = new DatabaseSync(file, { readOnly: true });
const dialect = new SQLiteSyncDialect();
const prepared = (q) => {
  const { sql, params } = dialect.sqlToQuery(mergedPullRequestsSql(q));
  const statement = sqlite.prepare(sql);
  return {
    run: () => statement.all(...params),
    plan: () =>
      sqlite
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...params)
        .map((r) => r.detail),
  };
};
const depth = opts.smoke ? 500 : 50_000;
const oneRepo = `repo-${String(Math.min(42, spec.repos - 1)).padStart(3, "0")}`;
const deepRows = prepared({ ...base, start: yearStart, limit: depth }).run();
const deepLast = deepRows[deepRows.length - 1];
if (!deepLast || deepRows.length < depth) throw new Error(`the one-year window has only ${deepRows.length} rows; need ${depth}`);
const deepCursor = { mergedAt: deepLast.mergedAt, id: deepLast.id };

const cases = [
  { name: "first page, default window (30 days)", q: base, query: "org=bigco" },
  {
    name: "first page, one-year window",
    q: { ...base, start: yearStart },
    query: `org=bigco&startDate=${iso(yearStart)}&endDate=${iso(now)}`,
  },
  {
    name: `page ${depth.toLocaleString("en")} rows deep, one-year window`,
    q: { ...base, start: yearStart, after: deepCursor },
    query: `org=bigco&startDate=${iso(yearStart)}&endDate=${iso(now)}&cursor=${encodeURIComponent(`${iso(deepCursor.mergedAt)}|${deepCursor.id}`)}`,
  },
  {
    name: "one repository, one-year window",
    q: { ...base, start: yearStart, repoKey: oneRepo },
    query: `org=bigco&repo=${oneRepo}&startDate=${iso(yearStart)}&endDate=${iso(now)}`,
  },
  { name: "small organization, default window", q: { ...base, orgKey: smallOrg(1) }, query: `org=${smallOrg(1)}` },
];

// 3. The floor: the same statements straight on the SQLite file.
const floorRuns = opts.smoke ? 20 : 200;
for (const c of cases) {
  const p = prepared(c.q);
  p.run();
  const samples = [];
  for (let i = 0; i < floorRuns; i++) {
    const t = performance.now();
    c.rows = p.run().length;
    samples.push(performance.now() - t);
  }
  c.floor = percentiles(samples);
  c.plan = p.plan();
}
sqlite.close();

// 3b. Event writes: D1's meta.rows_written of the Worker's own write path (storeEvents), on the
// same D1 file (getPlatformProxy runs the same local D1 as wrangler dev), in an organization of
// its own so the read cases above are untouched.
const writes = await measureEventWrites();
const writesReport = table(
  ["1,000-event batch", "rows written", "rows written per event"],
  writes.map((w) => [w.name, String(w.rowsWritten), fmt(w.rowsWritten / w.events)]),
);
log(`\nEvent writes (${BATCH_SHAPE}):\n\n${writesReport}`);
if (!opts.smoke && !opts["no-write"]) {
  writeSection(
    "docs/performance.md",
    "bench:analytics:writes",
    [
      `Measured ${new Date(now).toISOString().slice(0, 10)} by \`npm run bench:analytics\` on its data set (above), in an organization of its own:`,
      `\`storeEvents\` (the write path of \`POST /internal/v1/events\`) through \`getPlatformProxy\`, one batch of 1,000`,
      `events each (${BATCH_SHAPE}). "rows written" is D1's \`meta.rows_written\``,
      "summed over the batch's statements; it counts index entries too.",
      "",
      writesReport,
    ].join("\n"),
  );
}
if (opts["writes-only"]) process.exit(0);

async function measureEventWrites() {
  // A configuration with the D1 binding only: the Durable Objects of the real one cannot run here.
  const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
  const configPath = join(persistTo, "wrangler.d1-only.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      name: "bench-events",
      compatibility_date: rawConfig.compatibility_date,
      d1_databases: rawConfig.d1_databases,
    }),
  );
  const proxy = await getPlatformProxy({ configPath, persist: { path: join(persistTo, "v3") } });
  try {
    const org = `events-${now.toString(36)}`;
    const batch = (version) => reviewerBatch({ org, now, version });
    const runs = [
      ["first delivery", batch(now - DAY)],
      ["replay of the same batch", batch(now - DAY)],
      ["delayed retry of an older version", batch(now - 2 * DAY)],
      ["newer version of every record", batch(now)],
    ];
    const results = [];
    for (const [name, events] of runs) {
      const { rowsWritten } = await storeEvents(proxy.env.DB, events);
      results.push({ name, events: events.length, rowsWritten });
    }
    if (results[1].rowsWritten !== 0 || results[2].rowsWritten !== 0) throw new Error("a replay or an older batch wrote rows");
    return results;
  } finally {
    await proxy.dispose();
  }
}

// 4. The Worker under wrangler dev.
log(`Starting wrangler dev on ${persistTo}...`);
const server = await startWrangler({ persistTo, port: Number(opts.port), adminToken });
try {
  const client = controlPlaneClient(server.url, adminToken);
  const installedAt = iso(now - 730 * DAY);
  const org = {
    installationId: 1,
    installedAt,
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 10 },
  };
  for (const login of ["bigco", ...Array.from({ length: spec.smallOrgs }, (_, i) => smallOrg(i))]) {
    await client.putOrganization(login, org);
    await client.putMember(login, "9001", {
      githubLogin: "bench",
      workEmail: "bench@example.com",
      role: "admin",
      seat: true,
      isBot: false,
    });
  }
  await client.putUser("9001", { githubLogin: "bench" });
  const { key } = await client.createKey("9001", "analytics");
  const headers = { Authorization: `Bearer ${key}` };

  const check = await fetch(`${server.url}/api/analytics/v1/prs?${cases[2].query}`, { headers });
  if (check.status !== 200) throw new Error(`deep page answered ${check.status}: ${await check.text()}`);

  const measure = async (path, h = {}) => {
    await load({ url: server.url, path, connections: 1, seconds: 1, headers: h }); // warm-up
    return {
      c1: await load({ url: server.url, path, connections: 1, seconds, headers: h }),
      c10: await load({ url: server.url, path, connections: 10, seconds, headers: h }),
    };
  };
  log("Measuring GET /readyz (baseline)...");
  const baseline = await measure("/readyz");
  for (const c of cases) {
    log(`Measuring ${c.name}...`);
    c.http = await measure(`/api/analytics/v1/prs?${c.query}`, headers);
  }

  // 5. Report.
  const ratio = (r, b) => (b > 0 ? `${(r / b).toFixed(2)}x` : "–");
  const rows = [
    [
      "GET /readyz (baseline)",
      "–",
      "–",
      "–",
      fmt(baseline.c1.p50),
      fmt(baseline.c1.p99),
      fmt(baseline.c1.rps, 0),
      "1.00x",
      fmt(baseline.c10.p50),
      fmt(baseline.c10.p99),
      fmt(baseline.c10.rps, 0),
      "1.00x",
    ],
    ...cases.map((c) => [
      c.name,
      String(c.rows),
      fmt(c.floor.p50, 3),
      fmt(c.floor.p99, 3),
      fmt(c.http.c1.p50),
      fmt(c.http.c1.p99),
      fmt(c.http.c1.rps, 0),
      ratio(c.http.c1.p50, baseline.c1.p50),
      fmt(c.http.c10.p50),
      fmt(c.http.c10.p99),
      fmt(c.http.c10.rps, 0),
      ratio(c.http.c10.p50, baseline.c10.p50),
    ]),
  ];
  const header = [
    "case",
    "rows",
    "SQLite p50 ms",
    "SQLite p99 ms",
    "c=1 p50 ms",
    "c=1 p99 ms",
    "c=1 req/s",
    "c=1 p50 vs baseline",
    "c=10 p50 ms",
    "c=10 p99 ms",
    "c=10 req/s",
    "c=10 p50 vs baseline",
  ];
  const unexpected = [baseline, ...cases.map((c) => c.http)].reduce((n, m) => n + m.c1.unexpected + m.c10.unexpected, 0);
  const report = table(header, rows);
  log(`\n${report}\n\nResponses other than 200: ${unexpected}`);

  const first = cases[1].http.c1.p50;
  const deep = cases[2].http.c1.p50;
  const targets = [
    [`every case's SQLite p50 under 5 ms`, cases.every((c) => c.floor.p50 < 5)],
    [`every case's endpoint p50 at c=1 within 2x the /readyz baseline`, cases.every((c) => c.http.c1.p50 <= 2 * baseline.c1.p50)],
    [`deep page within 1.5x the first page (c=1 p50: ${fmt(deep)} vs ${fmt(first)} ms)`, deep <= 1.5 * first],
    ["no response other than 200", unexpected === 0],
  ];
  const targetLines = targets.map(([t, ok]) => `- ${ok ? "met" : "MISSED"}: ${t}`).join("\n");
  log(`\nTargets:\n${targetLines}`);

  if (!opts.smoke && !opts["no-write"]) {
    const plans = cases.map((c) => `**${c.name}**\n\n\`\`\`\n${c.plan.join("\n")}\n\`\`\``).join("\n\n");
    writeSection(
      "docs/performance.md",
      "bench:analytics",
      [
        `Measured ${new Date(now).toISOString().slice(0, 10)} by \`npm run bench:analytics\` on this machine (2 cores), wrangler dev with`,
        `X_LOCAL_OBSERVABILITY=false, autocannon for ${seconds} s per cell after a 1 s warm-up. Data: ${spec.pullRequests.toLocaleString("en")} pull requests`,
        `in ${spec.repos} repositories over two years (bigco), ${spec.reviewsPerPr} reviews and ${spec.findingsPerPr} findings per pull request, AI authorship for`,
        `half of them, plus ${spec.smallOrgs} small organizations of ${spec.smallOrgPrs} pull requests. "SQLite" times the Worker's own statement`,
        `on the D1 file with node:sqlite (${floorRuns} runs). Page size 100 (101 rows fetched).`,
        "",
        report,
        "",
        `Responses other than 200: ${unexpected}.`,
        "",
        "Targets:",
        targetLines,
        "",
        "Query plans on this data set (EXPLAIN QUERY PLAN of the Worker's statement):",
        "",
        plans,
      ].join("\n"),
    );
    log("\nWritten to docs/performance.md");
  }
  process.exitCode = unexpected === 0 ? 0 : 1;
} finally {
  await server.stop();
}
