#!/usr/bin/env node
/**
 * npm run runtime:check
 *
 * The dev server (`wrangler dev`) and the tests (`@cloudflare/vitest-plugin`, which depends on a
 * wrangler and a miniflare of its own) must run one build of the Workers runtime: the same
 * wrangler, miniflare and workerd, each locked once in package-lock.json. Two builds diverge in
 * ways that matter here: workerd 1.20261110.1 and later compile every local D1 statement again
 * for every query (the earlier builds keep compiled statements), and miniflare's D1 asks for a
 * session bookmark on every query in 5.20261102 and only for sessions' queries in 5.20261117; a benchmark
 * measured on one build and a test passing on another would describe two different systems
 * (docs/performance.md, "One runtime for the dev server and the tests").
 *
 * Exits 1 and names the packages locked at more than one version; prints one line and exits 0
 * otherwise. Reads only package-lock.json.
 */
import { readFileSync } from "node:fs";

const RUNTIME_PACKAGES = ["wrangler", "miniflare", "workerd", "@cloudflare/workerd-linux-64"];

const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8"));
/** Every locked version of each runtime package, with the paths that lock it. */
const versions = new Map(RUNTIME_PACKAGES.map((name) => [name, new Map()]));
for (const [path, entry] of Object.entries(lock.packages ?? {})) {
  const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const found = versions.get(name);
  if (!path.includes("node_modules/") || found === undefined || typeof entry.version !== "string") continue;
  found.set(entry.version, [...(found.get(entry.version) ?? []), path]);
}

const problems = [];
for (const [name, byVersion] of versions) {
  if (byVersion.size === 0) problems.push(`${name} is not in package-lock.json`);
  else if (byVersion.size > 1)
    problems.push(
      `${name} is locked at ${byVersion.size} versions: ${[...byVersion].map(([v, paths]) => `${v} (${paths.join(", ")})`).join("; ")}`,
    );
}
if (problems.length > 0) {
  console.error("runtime:check: the dev server and the tests would run different runtimes.");
  for (const problem of problems) console.error(`- ${problem}`);
  console.error(
    "Pin wrangler in package.json to the version @cloudflare/vitest-plugin depends on (npm view @cloudflare/vitest-plugin dependencies), then npm install.",
  );
  process.exit(1);
}
console.log(
  `runtime:check: one runtime: ${RUNTIME_PACKAGES.map((name) => `${name} ${[...versions.get(name).keys()][0]}`).join(", ")}`,
);
