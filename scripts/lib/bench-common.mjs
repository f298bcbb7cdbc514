import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join } from "node:path";
import autocannon from "autocannon";
import { waitForHealthy } from "./control-plane-client.mjs";
import { analyticsShardBindings } from "./shards.mjs";

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
 *
 * Servers started side by side (CI starts several at once) can lose a race for a port that
 * wrangler or workerd probed free a moment earlier ("Address already in use"): such a start is
 * tried again, up to three times; any other failure is thrown at once. The race seen most was for
 * the devtools inspector's port, which wrangler otherwise probes from 9229 upwards in every server
 * at once: each server gets a port of its own from the kernel instead (`--inspector-port`).
 * `cwd`: the checkout whose Worker to serve (another build's worktree; `persistTo` then absolute).
 * @param {{ persistTo: string, port: number, adminToken: string, vars?: Record<string, string>, cwd?: string }} options
 */
/**
 * The Workers runtime the benchmarks run on, as installed: "wrangler X, workerd Y", where workerd is
 * the one wrangler itself resolves (its own copy under `node_modules/wrangler/node_modules` when the
 * top-level one is another version: the test pool's). Ratios against `/readyz` depend on it
 * (docs/performance.md, "The statement's compile and the local runtime").
 */
export function runtimeLabel() {
  const wranglerRequire = createRequire(require.resolve("wrangler/package.json"));
  const version = (resolve, name) => JSON.parse(readFileSync(resolve.resolve(`${name}/package.json`), "utf8")).version;
  return `wrangler ${version(require, "wrangler")}, workerd ${version(wranglerRequire, "workerd")}`;
}

const require = createRequire(import.meta.url);

export async function startWrangler(options) {
  for (let attempt = 1; ; attempt++) {
    const started = await startWranglerOnce(options);
    if (started.server) return started.server;
    if (!started.portRace || attempt === 3) throw started.error;
    console.error(`wrangler dev on port ${options.port} lost a race for a port (attempt ${attempt}); starting it again`);
  }
}

const PORT_RACE = /address already in use/i;

async function startWranglerOnce({ persistTo, port, adminToken, vars = QUOTAS_ON, cwd = undefined }) {
  const inspectorPort = await kernelChosenPort();
  const child = spawn(
    "wrangler",
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      persistTo,
      "--var",
      `ADMIN_TOKEN:${adminToken}`,
      ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
      "--log-level",
      "error",
    ],
    {
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, X_LOCAL_OBSERVABILITY: "false", WRANGLER_SEND_METRICS: "false" },
    },
  );
  // Whether wrangler said it lost a port race, at any point: the message can be followed by
  // kilobytes of a crashing esbuild's goroutine dump, so a tail of the output would miss it. The
  // window keeps the end of the previous chunk, in case the message straddles two chunks.
  let portRace = false;
  let window = "";
  child.stderr.on("data", (chunk) => {
    process.stderr.write(chunk);
    window = window.slice(-64) + chunk.toString();
    if (PORT_RACE.test(window)) portRace = true;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(url, 120_000, () => child.exitCode === null && child.signalCode === null);
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    return { error, portRace };
  }
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGINT");
    });
  return { server: { url, stop } };
}

/**
 * A loopback port free now, chosen by the kernel (which hands servers asking at the same moment
 * different ports, unlike a probe of a fixed port in each of them).
 * @returns {Promise<number>}
 */
export function kernelChosenPort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const chosen = typeof address === "object" && address ? address.port : 0;
      server.close(() => (chosen > 0 ? resolve(chosen) : reject(new Error("the kernel chose no port"))));
    });
  });
}

/**
 * Applies the D1 migrations to every analytics shard in a local state folder and returns the path
 * of the main database's (DB's) SQLite file, where the benchmarks load their data.
 *
 * A fresh (missing or empty) folder gets a copy of a migrated template instead: one
 * `wrangler d1 migrations apply` per shard costs several CPU seconds, and CI's smoke runs each
 * want the same freshly migrated state. The template (`.bench/d1-template-<hash>`) is keyed by the
 * migrations and wrangler.toml, built once (into a folder of its own, then renamed, so runs that
 * start together never see half of one) and never written after.
 */
export async function migrateLocalD1(persistTo) {
  const fresh = !existsSync(persistTo) || readdirSync(persistTo).length === 0;
  if (!fresh) return migrateInPlace(persistTo);
  const template = join(".bench", `d1-template-${migrationsHash()}`);
  if (!existsSync(template)) {
    const building = `${template}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    await migrateInPlace(building);
    try {
      renameSync(building, template);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another run finished its template first
    }
  }
  mkdirSync(persistTo, { recursive: true });
  cpSync(template, persistTo, { recursive: true });
  return join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject", readFileSync(join(template, "db-file.txt"), "utf8").trim());
}

/** What a migrated state depends on: the D1 migrations and wrangler.toml (bindings, database ids). */
function migrationsHash() {
  const hash = createHash("sha256").update(readFileSync("wrangler.toml"));
  const dir = join("migrations", "d1");
  for (const name of readdirSync(dir).sort()) {
    if (name.endsWith(".sql")) hash.update(name).update(readFileSync(join(dir, name)));
  }
  return hash.digest("hex").slice(0, 16);
}

async function migrateInPlace(persistTo) {
  const dir = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite") : []);
  // DB first: its file is the one there after its migrations (a fresh folder; or the only one).
  const [main, ...others] = analyticsShardBindings();
  const before = new Set(files());
  await run("wrangler", ["d1", "migrations", "apply", main ?? "DB", "--local", "--persist-to", persistTo]);
  // Remembered for a reused folder, where every shard's file exists already.
  const remembered = join(persistTo, "db-file.txt");
  const created = files().filter((f) => !before.has(f));
  const file = created[0] ?? (existsSync(remembered) ? readFileSync(remembered, "utf8").trim() : undefined);
  if (!file) throw new Error(`cannot tell DB's file under ${dir} (start from an empty --persist-to folder)`);
  writeFileSync(remembered, file);
  for (const shard of others) await run("wrangler", ["d1", "migrations", "apply", shard, "--local", "--persist-to", persistTo]);
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

/** A data set size as `bench:analytics` names its directory and sections: `300k`, `1m`. */
export const sizeLabelOf = (pullRequests) =>
  pullRequests % 1_000_000 === 0 ? `${pullRequests / 1_000_000}m` : `${Math.round(pullRequests / 1000)}k`;

/** The data set directory of `bench:analytics` for a size (`.bench/analytics-300k`) or its smoke run. */
export const analyticsDataDir = (pullRequests, smoke = false) =>
  smoke ? ".bench/analytics-smoke" : `.bench/analytics-${sizeLabelOf(pullRequests)}`;

/** Requests per connection (and rounds of `interleave`) of one smoke-run measurement. */
export const SMOKE_REQUESTS = 5;

/**
 * How much load one measurement sends: `{ seconds }` to measure, or a fixed number of requests per
 * connection (`{ requests }`) for a smoke run. A smoke run (CI) checks answers and final states,
 * never latency, so it needs no time-boxed load: a fixed count costs the same few requests on a
 * quiet or a loaded machine, where seconds of load would only keep the shared cores busy.
 * Pass the result to `load` and `interleave`.
 * @param {boolean} smoke
 * @param {number} seconds
 */
export const span = (smoke, seconds) => (smoke ? { requests: SMOKE_REQUESTS } : { seconds });

/**
 * One load-generator run: for `seconds`, or `requests` per connection, or `amount` in all.
 * Latency percentiles come from autocannon's per-response hrtime durations (its own histogram
 * keeps whole milliseconds only). Any status not in `expect` is counted.
 */
export async function load({
  url,
  path,
  connections,
  seconds,
  requests,
  amount = requests === undefined ? undefined : requests * connections,
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
 * Requests at c=1 that alternate between targets one by one (A B, then B A, ...) for `seconds`
 * after a warm-up of each, so every target sees the machine as it is at the same moments: the
 * ratio of two targets' p50 is not moved by drift or by other processes, which runs one after
 * the other cannot promise on a shared machine. With `requests` instead (a smoke run, `span`):
 * that many rounds after two warm-up rounds. Any status but 200 throws. Returns, per target,
 * p50, p99 and the number of requests.
 */
export async function interleave(targets, { seconds, requests, warmupSeconds = 2 }) {
  const one = async ({ url, path, headers = {} }) => {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    return performance.now() - started;
  };
  const samples = targets.map(() => []);
  /** Rounds until `more(round)` is false. */
  const loop = async (more, record) => {
    for (let i = 0; more(i); i++) {
      const order = targets.map((_, j) => j);
      if (i % 2 === 1) order.reverse();
      for (const j of order) {
        const ms = await one(targets[j]);
        if (record) samples[j].push(ms);
      }
    }
  };
  const until = (ms) => {
    const end = performance.now() + ms;
    return () => performance.now() < end;
  };
  if (requests === undefined) {
    await loop(until(warmupSeconds * 1000), false);
    await loop(until(seconds * 1000), true);
  } else {
    await loop((i) => i < 2, false);
    await loop((i) => i < requests, true);
  }
  return samples.map((xs) => ({ ...percentiles(xs), requests: xs.length }));
}

/**
 * The cost of the exact quota (contract section 7, issue 8): one endpoint's p50 at c=1 with quotas
 * off and on. Two servers run at once on two copies of the same persisted data, and one client
 * alternates between them request by request (off, on, on, off, ...), so both see the same machine
 * at the same moment: drift and noise from other processes fall on both sides alike, which
 * sequential runs (server A for a while, then server B) cannot promise on a shared machine. Returns
 * the p50s and the ratio (target: under 1.1x, since counting happens in the call that already
 * judges the key, with no extra round trip).
 */
export async function measureQuotaCost({ persistTo, port, adminToken, label, path, headers, seconds, smoke, log = console.log }) {
  const copies = { off: `${persistTo}-quota-off`, on: `${persistTo}-quota-on` };
  for (const dir of Object.values(copies)) {
    rmSync(dir, { recursive: true, force: true });
    cpSync(persistTo, dir, { recursive: true });
  }
  const servers = {};
  try {
    // Both servers start at once (each start is seconds of wrangler's build and workerd's start-up).
    const [off, on] = await Promise.allSettled([
      startWrangler({ persistTo: copies.off, port: port + 1, adminToken, vars: QUOTAS_OFF }),
      startWrangler({ persistTo: copies.on, port: port + 2, adminToken, vars: QUOTAS_ON }),
    ]);
    if (off.status === "fulfilled") servers.off = off.value;
    if (on.status === "fulfilled") servers.on = on.value;
    if (off.status === "rejected") throw off.reason;
    if (on.status === "rejected") throw on.reason;
    const [offRun, onRun] = await interleave(
      [servers.off, servers.on].map((server) => ({ url: server.url, path, headers })),
      span(smoke, 2 * seconds),
    );
    log(`  quotas off: p50 ${fmt(offRun.p50)} ms, on: p50 ${fmt(onRun.p50)} ms (${onRun.requests} requests each, interleaved)`);
    return { label, off: offRun.p50, on: onRun.p50, ratio: onRun.p50 / offRun.p50, requests: onRun.requests };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    for (const dir of Object.values(copies)) rmSync(dir, { recursive: true, force: true });
  }
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
  log(`\nMeasuring the cost of quota counting (${measure.label}, c=1, quotas off / on, interleaved)...`);
  const cost = await measureQuotaCost({ ...measure, seconds, log });
  const costTable = quotaCostTable([cost]);
  console.log(`\n${costTable}`);
  if (!write) return;
  writeSection(
    "docs/performance.md",
    section,
    [
      `Measured ${new Date().toISOString().slice(0, 10)} by \`${script}\`: the cost of exact quotas (contract section 7),`,
      `${measure.label} at c=1 on two copies of the same data, one server with the quota var 0 (off) and one with 10^9 (counted,`,
      `never refused), one client alternating between them request by request for ${2 * seconds} s (${cost.requests} requests each).`,
      "Counting happens in the UserObject call that already judges the key; the count is written within RATE_LIMIT_PERSIST_MS (1 s).",
      "",
      costTable,
    ].join("\n"),
  );
}
