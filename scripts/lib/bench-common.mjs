import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { waitForHealthy } from "./control-plane-client.mjs";

/**
 * Benchmarks count quotas on every request, as production does, with limits too large to refuse one
 * (a benchmark sends far more than a real client's 1,000 requests per 15 minutes per key).
 * `QUOTAS_OFF` exists to measure what counting costs (`measureQuotaCost`).
 */
export const QUOTAS_ON = { RATE_LIMIT_ANALYTICS: "1000000000", RATE_LIMIT_MEMBERS: "1000000000" };
export const QUOTAS_OFF = { RATE_LIMIT_ANALYTICS: "0", RATE_LIMIT_MEMBERS: "0" };

/**
 * Starts `wrangler dev` on a persisted state folder, with request tracing off (it halves latency).
 * `vars` are `--var NAME:value` pairs (quotas by default; add e.g. the webhook secret).
 */
export async function startWrangler({ persistTo, port, adminToken, vars = QUOTAS_ON }) {
  const child = spawn(
    "wrangler",
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--persist-to",
      persistTo,
      "--var",
      `ADMIN_TOKEN:${adminToken}`,
      ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
      "--log-level",
      "error",
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, X_LOCAL_OBSERVABILITY: "false", WRANGLER_SEND_METRICS: "false" },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthy(url, 120_000);
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGINT");
    });
  return { url, stop };
}

/** Applies the D1 migrations to a local state folder and returns the path of its SQLite file. */
export async function migrateLocalD1(persistTo) {
  await run("wrangler", ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo]);
  const dir = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(dir).find((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (!file) throw new Error(`no D1 database file under ${dir}`);
  return join(dir, file);
}

export function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited ${code}`))));
  });
}

/**
 * One load-generator run. Latency percentiles come from autocannon's per-response hrtime durations
 * (its own histogram keeps whole milliseconds only). Any status not in `expect` is counted.
 */
export async function load({
  url,
  path,
  connections,
  seconds,
  amount,
  headers = {},
  method = "GET",
  body,
  expect = [200],
  setupClient,
}) {
  const samples = [];
  const instance = autocannon({
    url: `${url}${path}`,
    connections,
    ...(amount ? { amount } : { duration: seconds }),
    headers,
    method,
    body,
    setupClient,
  });
  instance.on("response", (_client, _status, _bytes, ms) => samples.push(ms));
  const started = performance.now();
  const result = await instance;
  const elapsedSeconds = (performance.now() - started) / 1000;
  const unexpected = Object.entries(result.statusCodeStats ?? {})
    .filter(([code]) => !expect.includes(Number(code)))
    .reduce((n, [, s]) => n + s.count, 0);
  return {
    ...percentiles(samples),
    rps: samples.length / elapsedSeconds,
    total: result.requests.total,
    unexpected: unexpected + result.errors + result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([c, s]) => [c, s.count])),
  };
}

/** Median and 99th percentile of a list of durations. */
export function percentiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { p50: at(0.5), p99: at(0.99) };
}

const fmt = (n, digits = 2) => (n === undefined || n === null || Number.isNaN(n) ? "–" : Number(n).toFixed(digits));

export { fmt };

/** A Markdown table from a header row and rows of cells. */
export function table(header, rows) {
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const r of rows) lines.push(`| ${r.join(" | ")} |`);
  return lines.join("\n");
}

/** Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` in a Markdown file. */
export function writeSection(file, name, content) {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const block = `${start}\n${content.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  const next = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}

/**
 * The cost of the exact quota (contract section 7, issue 8): one endpoint's p50 at c=1 with quotas
 * off and on, in the same run, on the same persisted data, alternating servers twice to spread
 * drift. Returns the table row cells and the ratio (target: under 1.1x, since counting happens in
 * the call that already judges the key, with no extra round trip).
 */
export async function measureQuotaCost({ persistTo, port, adminToken, label, path, headers, seconds, log = console.log }) {
  const runs = { off: [], on: [] };
  const modes = ["off", "on", "off", "on"];
  for (const [i, mode] of modes.entries()) {
    // A fresh port per server: a stopped wrangler's runtime can hold its socket for a moment.
    const server = await startWrangler({
      persistTo,
      port: port + 1 + i,
      adminToken,
      vars: mode === "on" ? QUOTAS_ON : QUOTAS_OFF,
    });
    try {
      await load({ url: server.url, path, headers, connections: 1, seconds: 1 }); // warm-up
      const r = await load({ url: server.url, path, headers, connections: 1, seconds });
      if (r.unexpected > 0)
        throw new Error(`quota cost (${mode}): ${r.unexpected} unexpected responses ${JSON.stringify(r.statusCodes)}`);
      runs[mode].push(r.p50);
      log(`  quotas ${mode}: p50 ${fmt(r.p50)} ms`);
    } finally {
      await server.stop();
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const off = Math.min(...runs.off);
  const on = Math.min(...runs.on);
  const ratio = on / off;
  return { label, off, on, ratio, median: { off: median(runs.off), on: median(runs.on) } };
}

/** The Markdown table of quota-cost measurements. */
export function quotaCostTable(results) {
  return table(
    ["endpoint (c=1)", "p50 quotas off (ms)", "p50 quotas on (ms)", "on / off", "target"],
    results.map((r) => [r.label, fmt(r.off), fmt(r.on), `${fmt(r.ratio)}x`, r.ratio < 1.1 ? "met (< 1.1x)" : "missed (≥ 1.1x)"]),
  );
}

/**
 * Measures the cost of exact quotas (`measureQuotaCost`), prints its table and, unless `write` is
 * false, writes it to docs/performance.md as section `section`. Both benchmarks end with it.
 */
export async function reportQuotaCost({ section, script, write, seconds, log = console.log, ...measure }) {
  log(`\nMeasuring the cost of quota counting (${measure.label}, c=1, quotas off / on, alternating)...`);
  const cost = await measureQuotaCost({ ...measure, seconds, log });
  const costTable = quotaCostTable([cost]);
  console.log(`\n${costTable}`);
  if (!write) return;
  writeSection(
    "docs/performance.md",
    section,
    [
      `Measured ${new Date().toISOString().slice(0, 10)} by \`${script}\`: the cost of exact quotas (contract section 7),`,
      `${measure.label} at c=1 for ${seconds} s per run on the same data, with the quota var 0 (off) and 10^9 (counted, never refused),`,
      "two runs each, alternating servers; the better run of each. Counting happens in the UserObject call that already judges the key.",
      "",
      costTable,
    ].join("\n"),
  );
}
