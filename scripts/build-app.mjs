#!/usr/bin/env node
/**
 * Bundles the web app's client (web/, Preact and uPlot, with their stylesheets) with esbuild into dist/app/, the Workers Static
 * Assets folder (wrangler.toml [assets]): /assets/app.js, /assets/app.css and their _headers.
 * wrangler runs it before `wrangler dev` and `wrangler deploy` ([build] in wrangler.toml), and
 * `npm run test:browser` before its run. About 50 ms. (The worker tests call the Worker's handler
 * directly and need no assets.)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const out = new URL("../dist/app/", import.meta.url).pathname;
mkdirSync(`${out}assets`, { recursive: true });
await build({
  entryPoints: [new URL("../web/main.tsx", import.meta.url).pathname],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  outfile: `${out}assets/app.js`,
  logLevel: "warning",
});
// The stylesheet with uPlot's bundled in (web/app.css imports it): nothing from another origin.
await build({
  entryPoints: [new URL("../web/app.css", import.meta.url).pathname],
  bundle: true,
  minify: true,
  outfile: `${out}assets/app.css`,
  logLevel: "warning",
});
// Revalidated on every load (an ETag makes that cheap), so a deployment's new bundle is seen at once.
writeFileSync(`${out}_headers`, "/assets/*\n  X-Content-Type-Options: nosniff\n  Cache-Control: no-cache\n");
