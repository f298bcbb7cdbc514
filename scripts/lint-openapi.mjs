#!/usr/bin/env node
/**
 * npm run lint:openapi
 * Lints docs/openapi/public.json and docs/openapi/internal.json (written by `npm run openapi`) with
 * Redocly CLI (recommended ruleset, redocly.yaml) and Spectral (spectral:oas and the OWASP API
 * Security ruleset, .spectral.yaml). Both always run; the exit status is 1 if either found an error.
 * Warnings are printed and do not fail.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const files = ["docs/openapi/public.json", "docs/openapi/internal.json"];
const linters = [
  { name: "Redocly", command: "redocly", args: ["lint", "--config", "redocly.yaml", "--format", "stylish", ...files] },
  { name: "Spectral", command: "spectral", args: ["lint", "--ruleset", ".spectral.yaml", "--fail-severity", "error", ...files] },
];

const failed = [];
for (const { name, command, args } of linters) {
  console.log(`\n-- ${name}: ${command} ${args.join(" ")}`);
  const run = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (run.error) console.error(`${name} did not start: ${run.error.message} (run through npm, after npm install)`);
  if (run.status !== 0) failed.push(name);
}

if (failed.length > 0) {
  console.error(`\nlint:openapi: ${failed.join(" and ")} found errors in the OpenAPI documents.`);
  console.error("Fix them in the generator (src/openapi); a rule that does not apply is turned off in");
  console.error("redocly.yaml or .spectral.yaml with its reason, never with an ignore file.");
  process.exit(1);
}
console.log("\nlint:openapi: no errors.");
