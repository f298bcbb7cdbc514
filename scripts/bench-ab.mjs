#!/usr/bin/env node
/**
 * npm run bench:ab -- --base REV [--smoke | --size N] [--cases LIST] [--seconds N] [--port N]
 *
 * Two builds side by side: the working tree and the commit REV (checked out in a temporary git
 * worktree), each under its own `wrangler dev` on its own copy of the same benchmark data set
 * (`.bench/analytics-<size>`, made by `npm run bench:analytics -- --size N`; `--smoke`: the smoke
 * data set). One client alternates between them request by request (`interleave`), so both p50s
 * are taken at the same moments: a change of a few percent shows, which runs one after the other
 * on this shared machine cannot resolve. Every case's answers are first checked equal on both.
 *
 * Cases (`--cases`, comma-separated): `DAYS:GROUPBY` a summary of the last DAYS days
 * (`GET /api/analytics/v1/summary`, groupBy day, week, month, repo or author), `prs:DAYS` the
 * export's first page of the last DAYS days. The window ends at the moment the script starts.
 * Prints a table; writes nothing. Both servers run on the same cores, so each is slower than
 * alone: read the ratio, not the milliseconds.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { analyticsDataDir, fmt, interleave, migrateLocalD1, span, startWrangler, table } from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

const { values: opts } = parseArgs({
  options: {
    base: { type: "string" },
    smoke: { type: "boolean", default: false },
    size: { type: "string", default: "1000000" },
    cases: { type: "string", default: "30:week,365:week,365:repo,365:author,prs:30" },
    seconds: { type: "string", default: "15" },
    port: { type: "string", default: "8961" },
  },
});
const fail = (message) => {
  console.error(`bench:ab: ${message}`);
  process.exit(2);
};
if (!opts.base) fail("--base REV is required (the commit to compare the working tree with)");
const seconds = Number(opts.seconds);
if (!Number.isFinite(seconds) || seconds <= 0) fail(`--seconds must be a positive number, got ${opts.seconds}`);
const port = Number(opts.port);
if (!Number.isSafeInteger(port) || port < 1024 || port > 65534) fail(`--port must be 1024 to 65534, got ${opts.port}`);
const size = Number(opts.size);
if (!opts.smoke && (!Number.isSafeInteger(size) || size <= 0)) fail(`--size must be a whole number, got ${opts.size}`);
const data = resolve(analyticsDataDir(size, opts.smoke));
if (!existsSync(data))
  fail(`no data set at ${data}: run npm run bench:analytics -- ${opts.smoke ? "--smoke" : `--size ${size}`} first`);

const DAY = 86_400_000;
const now = Date.now();
const iso = (ms) => new Date(ms).toISOString();
const GROUP_BYS = ["day", "week", "month", "repo", "author"];
const cases = opts.cases.split(",").map((text) => {
  const [first, second, extra] = text.split(":");
  const days = Number(first === "prs" ? second : first);
  if (extra !== undefined || !Number.isSafeInteger(days) || days <= 0)
    fail(`a case is DAYS:GROUPBY or prs:DAYS with DAYS a positive whole number, got "${text}"`);
  const window = `org=bigco&startDate=${iso(now - days * DAY)}&endDate=${iso(now)}`;
  if (first === "prs") return { name: `export first page, ${days} days`, path: `/api/analytics/v1/prs?${window}` };
  if (!GROUP_BYS.includes(second)) fail(`groupBy must be one of ${GROUP_BYS.join(", ")}, got "${second}" in "${text}"`);
  return { name: `summary, ${days} days by ${second}`, path: `/api/analytics/v1/summary?${window}&groupBy=${second}` };
});

const git = (...args) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
let base;
try {
  base = git("rev-parse", "--verify", `${opts.base}^{commit}`).trim();
} catch {
  fail(`--base ${opts.base} is no commit of this repository`);
}
if (git("show", `${base}:package-lock.json`) !== readFileSync("package-lock.json", "utf8"))
  fail(`${opts.base} locks other dependencies than the working tree: the comparison would share this node_modules`);

const scratch = mkdtempSync(join(tmpdir(), "bench-ab-"));
const tree = join(scratch, "base");
const copies = { base: join(scratch, "data-base"), head: join(scratch, "data-head") };
const servers = [];
const adminToken = `bench-ab-${now}-${crypto.randomUUID()}`;
try {
  console.log(`Checking out ${base.slice(0, 12)} in ${tree}, copying ${data} twice...`);
  git("worktree", "add", "--detach", tree, base);
  symlinkSync(resolve("node_modules"), join(tree, "node_modules"), "dir");
  // Both copies at the working tree's migrations (a data set made by an older run lacks the newer
  // ones; a base build older than them runs on tables it does not read).
  for (const copy of Object.values(copies)) {
    cpSync(data, copy, { recursive: true });
    await migrateLocalD1(copy);
  }
  console.log("Starting both servers...");
  const started = await Promise.allSettled([
    startWrangler({ persistTo: copies.base, port, adminToken, cwd: tree }),
    startWrangler({ persistTo: copies.head, port: port + 1, adminToken }),
  ]);
  for (const s of started) if (s.status === "fulfilled") servers.push(s.value);
  for (const s of started) if (s.status === "rejected") throw s.reason;
  const keys = [];
  for (const server of servers) keys.push((await controlPlaneClient(server.url, adminToken).createKey("9001", "analytics")).key);
  const rows = [];
  for (const c of cases) {
    const targets = servers.map((server, i) => ({
      url: server.url,
      path: c.path,
      headers: { Authorization: `Bearer ${keys[i]}` },
    }));
    const bodies = [];
    for (const t of targets) {
      const res = await fetch(`${t.url}${t.path}`, { headers: t.headers });
      if (res.status !== 200) throw new Error(`${c.name}: ${t.url} answered ${res.status}: ${await res.text()}`);
      bodies.push(await res.text());
    }
    const equal = bodies[0] === bodies[1];
    console.log(`Measuring ${c.name}${equal ? "" : " (the two builds' answers differ)"}...`);
    const [before, after] = await interleave(targets, span(opts.smoke, seconds));
    rows.push([
      c.name,
      fmt(before.p50),
      fmt(after.p50),
      `${fmt(after.p50 / before.p50, 3)}x`,
      before.requests,
      equal ? "yes" : "NO",
    ]);
  }
  console.log(`\n${base.slice(0, 12)} (base) against the working tree, one client alternating request by request:\n`);
  console.log(
    table(["case", "base p50 ms", "working tree p50 ms", "working tree / base", "requests each", "answers equal"], rows),
  );
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  try {
    git("worktree", "remove", "--force", tree);
  } catch (error) {
    console.error(`bench:ab: the worktree ${tree} was not removed (${error.message}); git worktree prune clears it`);
  }
  rmSync(scratch, { recursive: true, force: true });
}
