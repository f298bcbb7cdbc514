#!/usr/bin/env node
/**
 * npm start [-- <wrangler dev arguments>]
 * Applies the local D1 migrations to every analytics shard (honouring --persist-to), runs
 * `wrangler dev`, and when no shard holds a pull request loads the demo data and prints working keys with curl examples.
 * Without an ADMIN_TOKEN (from --var ADMIN_TOKEN:..., .dev.vars or the environment) a random one
 * is generated for this run and printed.
 * While the demo data loads, wrangler's output is shown without its per-request lines (a few
 * hundred control-plane calls would bury the keys); after that, every request is logged as usual.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { controlPlaneClient, waitForHealthy } from "./lib/control-plane-client.mjs";
import { quietWhileLoading, relay } from "./lib/dev-output.mjs";
import { adminTokenFromDevVars } from "./lib/dev-vars.mjs";
import { keyReport, seedDemo } from "./lib/seed.mjs";
import { analyticsShardBindings } from "./lib/shards.mjs";

const args = process.argv.slice(2);
process.env.WRANGLER_SEND_METRICS ??= "false";

/** The value of `--name value` or `--name=value` among the wrangler dev arguments. */
function argValue(name) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === name) return args[i + 1];
    if (a?.startsWith(`${name}=`)) return a.slice(name.length + 1);
  }
  return undefined;
}

const persistTo = argValue("--persist-to");
const persistArgs = persistTo ? ["--persist-to", persistTo] : [];
const port = argValue("--port") ?? "8787";
const ip = argValue("--ip") ?? "127.0.0.1";
const hostForUrl = ip === "0.0.0.0" || ip === "*" ? "127.0.0.1" : ip.includes(":") ? `[${ip}]` : ip;
const url = `http://${hostForUrl}:${port}`;

const varArgs = args.flatMap((a, i) => (a === "--var" ? [args[i + 1] ?? ""] : a.startsWith("--var=") ? [a.slice(6)] : []));
let adminToken = varArgs.find((v) => v.startsWith("ADMIN_TOKEN:"))?.slice("ADMIN_TOKEN:".length);
const devArgs = [...args];
adminToken ??= adminTokenFromDevVars() ?? process.env.ADMIN_TOKEN;
if (adminToken && adminToken.length < 32) {
  console.warn("ADMIN_TOKEN is shorter than 32 characters: the Worker answers 404 on /internal until a longer one is set.");
}
if (!adminToken) {
  // 24 random bytes are 32 base64url characters: the Worker's minimum.
  adminToken = randomBytes(24).toString("base64url");
  devArgs.push("--var", `ADMIN_TOKEN:${adminToken}`);
  console.log(`No ADMIN_TOKEN configured: using ${adminToken} for this run (put one in .dev.vars to keep it).`);
}
// The web app's local sign-in ("sign in as" the demo users): only ever from here, never wrangler.toml.
if (!varArgs.some((v) => v.startsWith("DEV_SIGN_IN:"))) devArgs.push("--var", "DEV_SIGN_IN:true");
if (!argValue("--ip")) devArgs.push("--ip", ip);
if (!argValue("--port")) devArgs.push("--port", port);

const wrangler = (wranglerArgs, options = {}) =>
  execFileSync("wrangler", wranglerArgs, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], ...options });

// Every analytics shard (DB, the main database, first) gets the same migrations.
// wrangler's migration table is a dozen lines a newcomer does not need; a failure still shows (stderr, exit).
const shards = analyticsShardBindings();
let empty = true;
for (const shard of shards) {
  process.stdout.write(`Applying local D1 migrations to ${shard}... `);
  const applied = wrangler(["d1", "migrations", "apply", shard, "--local", ...persistArgs]);
  console.log(/No migrations to apply/i.test(applied) ? "up to date." : "done.");
  const countOut = wrangler([
    "d1",
    "execute",
    shard,
    "--local",
    ...persistArgs,
    "--json",
    "--command",
    "SELECT COUNT(*) AS n FROM pull_requests",
  ]);
  if (Number(JSON.parse(countOut)?.[0]?.results?.[0]?.n ?? 0) > 0) empty = false;
}

const marker = `npm-start-${randomBytes(6).toString("hex")}`;
const output = quietWhileLoading(marker);
const dev = spawn("wrangler", ["dev", ...devArgs], { stdio: ["inherit", "pipe", "pipe"] });
relay(dev.stdout, process.stdout, output.show);
relay(dev.stderr, process.stderr, output.show);

/** The load's last request: once its log line has come through, everything printed comes after the load's output. */
async function caughtUp() {
  await fetch(`${url}/healthz`, { headers: { "X-Correlation-Id": marker } });
  await Promise.race([output.caughtUp, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
}
const stop = () => dev.kill("SIGINT");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => process.exit(code ?? 0));

try {
  await waitForHealthy(url, 120_000);
  if (empty) {
    console.log("\nEmpty local database: loading demo data...");
    const keys = await seedDemo({ url, adminToken });
    await caughtUp();
    console.log(`\nThe service is running at ${url} (Ctrl-C stops it); requests are logged from here on.`);
    console.log(keyReport(url, keys, { app: true, adminToken }));
  } else {
    // Prove the admin token works, so the hint below is accurate.
    await controlPlaneClient(url, adminToken).request("PUT", "/internal/v1/users/1001", { githubLogin: "ada-admin" });
    await caughtUp();
    console.log(
      `\nDemo data already loaded. The web app: ${url}/ (sign in as a demo user). For fresh demo keys: npm run seed -- --keys-only --url ${url} --admin-token ${adminToken}\n`,
    );
  }
} catch (error) {
  output.live();
  console.error(`Could not load the demo data: ${error instanceof Error ? error.message : error}`);
}
