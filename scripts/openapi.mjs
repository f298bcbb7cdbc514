#!/usr/bin/env node
/**
 * npm run openapi [-- --check]
 * Writes docs/openapi/public.json and docs/openapi/internal.json from publicDocument() and
 * internalDocument() in src/interfaces.ts. With --check, writes nothing and fails when the
 * committed files differ from what the code produces (CI runs that).
 *
 * The Worker's modules are bundled for Node with esbuild first: their import graph may reach
 * `cloudflare:workers` (Durable Object classes) and `.sql` migrations, which Node cannot load.
 * `cloudflare:*` resolves to scripts/lib/cloudflare-stub.mjs; text files load like wrangler's rules.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const USAGE = `Usage: npm run openapi [-- --check]
  (no option)  write docs/openapi/public.json and docs/openapi/internal.json
  --check      write nothing; exit 1 if the committed files differ from the generated ones`;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "src/interfaces.ts");
const stub = join(root, "scripts/lib/cloudflare-stub.mjs");
const OUTPUTS = [
  { exportName: "publicDocument", file: "docs/openapi/public.json" },
  { exportName: "internalDocument", file: "docs/openapi/internal.json" },
];

let options;
try {
  ({ values: options } = parseArgs({
    options: { check: { type: "boolean", default: false }, help: { type: "boolean", short: "h", default: false } },
  }));
} catch (error) {
  console.error(`${error instanceof Error ? error.message : error}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const cloudflareStub = {
  name: "cloudflare-stub",
  setup(build) {
    build.onResolve({ filter: /^cloudflare:/ }, () => ({ path: stub }));
  },
};

/** Bundles documents.ts for Node, imports it, and returns its module namespace. */
async function loadDocumentsModule() {
  const dir = mkdtempSync(join(tmpdir(), "openapi-"));
  const outfile = join(dir, "documents.mjs");
  try {
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      sourcemap: "inline",
      // Same text rules as wrangler's defaults and wrangler.toml (Durable Object migrations import .sql).
      loader: { ".sql": "text", ".txt": "text", ".html": "text", ".bin": "binary" },
      // Bundled CommonJS dependencies may call require() for Node built-ins.
      banner: {
        js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
      },
      plugins: [cloudflareStub],
      logLevel: "silent",
    });
    process.setSourceMapsEnabled(true);
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A problem with documents.ts itself: its message says everything, a stack trace would not help. */
class DocumentsError extends Error {}

/** Pretty JSON in the key order the generator produced, with a trailing newline. */
const serialise = (document) => `${JSON.stringify(document, null, 2)}\n`;

function firstDifference(expected, actual) {
  const want = expected.split("\n");
  const have = actual.split("\n");
  const line = want.findIndex((text, index) => text !== have[index]);
  const at = line === -1 ? want.length : line;
  return `first difference at line ${at + 1}:\n    committed: ${have[at] ?? "(end of file)"}\n    generated: ${want[at] ?? "(end of file)"}`;
}

let documents;
try {
  const module = await loadDocumentsModule();
  // Awaited: a document function that returns a promise works too.
  documents = await Promise.all(
    OUTPUTS.map(async ({ exportName, file }) => {
      if (typeof module[exportName] !== "function") throw new DocumentsError(`src/interfaces.ts does not export ${exportName}()`);
      const document = await module[exportName]();
      if (typeof document?.openapi !== "string" || !document.paths)
        throw new DocumentsError(`${exportName}() did not return an OpenAPI document`);
      return { file, text: serialise(document) };
    }),
  );
} catch (error) {
  // esbuild's errors carry file, line and text; print them the way esbuild would.
  const messages = error?.errors?.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`);
  const detail = messages?.join("\n  ") ?? (error instanceof DocumentsError ? error.message : error?.stack || error);
  console.error(`openapi: cannot build the documents: ${detail}`);
  process.exit(1);
}

if (options.check) {
  const stale = [];
  for (const { file, text } of documents) {
    let committed;
    try {
      committed = readFileSync(join(root, file), "utf8");
    } catch {
      stale.push(`${file}: missing`);
      continue;
    }
    if (committed !== text) stale.push(`${file}: differs from the generated document, ${firstDifference(text, committed)}`);
  }
  if (stale.length > 0) {
    console.error(`openapi --check: the committed OpenAPI documents are out of date.\n  ${stale.join("\n  ")}`);
    console.error("Run `npm run openapi` and commit docs/openapi/.");
    process.exit(1);
  }
  console.log(`openapi --check: ${documents.map((d) => d.file).join(" and ")} are up to date.`);
} else {
  for (const { file, text } of documents) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
    console.log(`wrote ${relative(process.cwd(), join(root, file)) || file}`);
  }
}
