#!/usr/bin/env node
/**
 * Bundles the web app's client (web/, Preact and uPlot, with their stylesheets) with esbuild into dist/app/, the Workers Static
 * Assets folder (wrangler.toml [assets]): /assets/app.js, /assets/app.css and their _headers.
 * wrangler runs it before `wrangler dev` and `wrangler deploy` ([build] in wrangler.toml), and
 * `npm run test:browser` before its run. About 50 ms. (The worker tests call the Worker's handler
 * directly and need no assets.)
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const out = new URL("../dist/app/", import.meta.url).pathname;
mkdirSync(`${out}assets`, { recursive: true });

/**
 * Writes a file only when its content changed, through a temporary file and a rename: several
 * `wrangler dev` may start at once (CI runs the browser tests and the benchmarks' smoke runs side
 * by side, each running this), and a server must never serve a half-written bundle.
 */
function publish(path, contents) {
  if (existsSync(path) && Buffer.compare(readFileSync(path), Buffer.from(contents)) === 0) return;
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

const bundles = await Promise.all([
  build({
    entryPoints: [new URL("../web/main.tsx", import.meta.url).pathname],
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    jsx: "automatic",
    jsxImportSource: "preact",
    outfile: `${out}assets/app.js`,
    write: false,
    logLevel: "warning",
  }),
  // The stylesheet with uPlot's bundled in (web/app.css imports it): nothing from another origin.
  build({
    entryPoints: [new URL("../web/app.css", import.meta.url).pathname],
    bundle: true,
    minify: true,
    outfile: `${out}assets/app.css`,
    write: false,
    logLevel: "warning",
  }),
]);
for (const file of bundles.flatMap((b) => b.outputFiles)) publish(file.path, file.contents);
// Revalidated on every load (an ETag makes that cheap), so a deployment's new bundle is seen at once.
publish(`${out}_headers`, "/assets/*\n  X-Content-Type-Options: nosniff\n  Cache-Control: no-cache\n");
