#!/usr/bin/env node
/**
 * npm run --silent export -- --org acme [--start 2026-09-01] [--end 2026-11-30] [--repo api,web] [--author LOGINS] [--format csv|json] > prs.csv
 * Every page of the analytics export, followed through its Link headers, as one file on stdout.
 * Progress goes to stderr. The logic lives in scripts/lib/export.mjs.
 */
import { parseArgs } from "node:util";
import { EXIT, ExportError, exportAnalytics } from "./lib/export.mjs";

const USAGE = `Usage: npm run --silent export -- --org ORG [--start DATE] [--end DATE] [--repo REPOS] [--author LOGINS] [--format csv|json] [options] > FILE
  --org        GitHub organization (required)
  --start      startDate: YYYY-MM-DD (UTC) or an ISO 8601 timestamp with a zone
  --end        endDate: YYYY-MM-DD (through 23:59:59.999Z UTC) or a timestamp with a zone
  --repo       only these repositories: one name or a comma-separated list of at most 20
  --author     only pull requests by these authors: one login or a comma-separated list of at most 20
  --format     csv (default): one header row, then every record (RFC 4180, CRLF)
               json: one JSON array of every row
  --per-page   rows per request, 1 to 100 (default 100)
  --url        base URL of the service (default http://127.0.0.1:8787)
  --key        analytics API key (cak_...; default: $ANALYTICS_API_KEY)
  -h, --help   this text

Give --start and --end for a long export: without them the window moves with the clock.
Rate limited (429): waits Retry-After and retries, up to 5 times in a row. A 5xx or a network
failure is retried 3 times. The key is never sent to another origin than --url.
Exit codes: 0 done; 1 the service or the network failed; 2 usage; 3 the service refused the
request (bad parameters, key, access, unknown organization).`;

function usage(message) {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(EXIT.usage);
}

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      org: { type: "string" },
      start: { type: "string" },
      end: { type: "string" },
      repo: { type: "string" },
      author: { type: "string" },
      format: { type: "string", default: "csv" },
      "per-page": { type: "string", default: "100" },
      url: { type: "string", default: "http://127.0.0.1:8787" },
      key: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
if (options.help) {
  console.log(USAGE);
  process.exit(EXIT.ok);
}
if (!options.org?.trim()) usage("--org is required.");
if (!["csv", "json"].includes(options.format)) usage(`--format must be csv or json, not ${options.format}.`);
if (!/^\d+$/.test(options["per-page"]) || Number(options["per-page"]) < 1 || Number(options["per-page"]) > 100) {
  usage("--per-page must be an integer from 1 to 100.");
}
try {
  if (!["http:", "https:"].includes(new URL(options.url).protocol)) throw new Error();
} catch {
  usage(`--url must be an http(s) URL, not ${options.url}.`);
}
const key = options.key ?? process.env.ANALYTICS_API_KEY;
if (!key) usage("No key: pass --key or set ANALYTICS_API_KEY.");

// A reader that goes away (`| head`) ends the export quietly.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(EXIT.ok);
  throw error;
});
const write = (chunk) =>
  new Promise((resolve, reject) => {
    process.stdout.write(chunk, (error) => (error ? reject(error) : resolve()));
  });

const tty = process.stderr.isTTY;
const progress = (event) => {
  if (event.kind === "rate-limited") process.stderr.write(`${tty ? "\n" : ""}rate limited: waiting ${event.seconds} s\n`);
  else process.stderr.write(`${tty ? "\r" : ""}page ${event.pages}, ${event.rows} rows${tty ? "" : "\n"}`);
};

try {
  const { pages, rows } = await exportAnalytics({
    url: options.url,
    key,
    org: options.org.trim(),
    repo: options.repo,
    author: options.author,
    start: options.start,
    end: options.end,
    format: options.format,
    perPage: Number(options["per-page"]),
    write,
    progress,
  });
  process.stderr.write(`${tty ? "\n" : ""}done: ${rows} rows in ${pages} pages\n`);
} catch (error) {
  if (tty) process.stderr.write("\n");
  if (error instanceof ExportError) {
    console.error(`export failed: ${error.message}`);
    process.exit(error.exitCode);
  }
  console.error(`export failed: ${error instanceof Error ? error.message : error}`);
  process.exit(EXIT.failed);
}
