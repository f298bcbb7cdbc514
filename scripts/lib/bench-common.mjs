import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { waitForHealthy } from "./control-plane-client.mjs";

/**
 * Starts `wrangler dev` on a persisted state folder, with request tracing off (it halves latency).
 * `vars` become `--var NAME:value` (this run only).
 */
export async function startWrangler({ persistTo, port, adminToken, vars = {} }) {
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
