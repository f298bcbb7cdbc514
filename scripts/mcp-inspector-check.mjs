#!/usr/bin/env node
// The README's MCP Inspector lines, run exactly as written (contract section 15): every
// `npm run inspector -- ...` line of README.md's "MCP for AI agents" block, through bash from the
// repository root with MKEY set to the demo members key, against `wrangler dev` with the demo data
// (what `npm start` serves) on 127.0.0.1:9014 (MCP_INSPECTOR_PORT), which this script starts and
// stops. The only change to a line is that address for the README's 127.0.0.1:8787, so that it
// runs beside a developer's `npm start`. Exit 0 when every line answered as expected, 1 otherwise.
// Run by .ci/run (`npm run mcp:inspector`).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MCP_TOOL_NAMES } from "../src/mcp/tools.ts";
import { migrateLocalD1, startWrangler } from "./lib/bench-common.mjs";
import { seedDemo } from "./lib/seed.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.MCP_INSPECTOR_PORT ?? 9014);
const ADMIN_TOKEN = "mcp-inspector-check-admin-token-0123456789";
const README_ORIGIN = "http://127.0.0.1:8787";

/** The README's Inspector lines, continuation lines joined, in order. */
export function inspectorLines(readme) {
  const joined = readme.replace(/\\\n\s*/g, "");
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("npm run inspector -- "));
}

/** Runs one line through bash from the repository root; resolves to its exit code and output. */
function runLine(line, env) {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", line], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}

/** The Inspector's JSON answer: npm's banner lines come first, the JSON starts at a line of its own. */
function answerOf(out) {
  const start = out.search(/^\{/m);
  if (start < 0) throw new Error(`no JSON in the output:\n${out}`);
  return JSON.parse(out.slice(start));
}

/** A tools/list over plain HTTP (for the key kinds the README's lines do not use). */
async function listedNames(url, key) {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  const text = await res.text();
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  const message = JSON.parse(data ? data.slice(5) : text);
  return message.result.tools.map((tool) => tool.name);
}

async function restGet(url, key, path) {
  const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return res.json();
}

/** What each kind of line must answer; a line of another kind fails the check until it is taught here. */
async function check(line, answer, { url, keys }) {
  const equal = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const method = /--method (\S+)/.exec(line)?.[1];
  const tool = /--tool-name (\S+)/.exec(line)?.[1];
  if (method === "tools/list") {
    const names = answer.tools.map((t) => t.name).sort();
    const others = await listedNames(url, keys.analyticsKey);
    // Every tool of src/mcp/tools.ts is listed for exactly one key kind.
    const expected = MCP_TOOL_NAMES.filter((name) => !others.includes(name)).sort();
    if (!equal(names, expected) || names.some((name) => others.includes(name))) {
      throw new Error(`tools/list: expected ${expected}, got ${names}`);
    }
    // Section 15: every tool has a title and annotations (the Inspector shows what the client sees).
    if (!answer.tools.every((t) => typeof t.title === "string" && t.title !== "" && t.annotations?.idempotentHint === true)) {
      throw new Error(`tools/list: a tool without its title or annotations: ${JSON.stringify(answer.tools)}`);
    }
    return `tools/list: ${names.join(", ")}`;
  }
  if (method === "tools/call" && tool === "get_member") {
    const rest = await restGet(url, keys.membersKey, "/api/v1/organizations/acme/members/1002");
    if (answer.isError || !equal(answer.structuredContent, rest)) throw new Error(`get_member: ${JSON.stringify(answer)}`);
    return `tools/call get_member: ${JSON.stringify(answer.structuredContent)}`;
  }
  if (method === "tools/call" && tool === "update_member") {
    // A stale guard on the demo data: a refusal the Inspector (the SDK's v1 client) shows as such.
    const error = answer.isError === true && answer.structuredContent === undefined && JSON.parse(answer.content[0].text).error;
    if (error?.code !== "expected_value_mismatch") throw new Error(`update_member: ${JSON.stringify(answer)}`);
    const after = await restGet(url, keys.membersKey, "/api/v1/organizations/acme/members/1002");
    if (after.seat !== true) throw new Error(`update_member changed the member: ${JSON.stringify(after)}`);
    return `tools/call update_member refused: ${error.code} ${JSON.stringify(error.details)}`;
  }
  throw new Error(`this check does not know what to expect of: ${line}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lines = inspectorLines(readFileSync(join(ROOT, "README.md"), "utf8"));
  const persistTo = mkdtempSync(join(tmpdir(), "mcp-inspector-"));
  let server;
  let failed = false;
  try {
    if (lines.length < 2)
      throw new Error(`README.md shows ${lines.length} \`npm run inspector -- ...\` lines; expected at least 2`);
    await migrateLocalD1(persistTo);
    server = await startWrangler({ persistTo, port: PORT, adminToken: ADMIN_TOKEN });
    const keys = await seedDemo({ url: server.url, adminToken: ADMIN_TOKEN, log: () => {} });
    for (const line of lines) {
      const { code, out, err } = await runLine(line.replaceAll(README_ORIGIN, server.url), { MKEY: keys.membersKey });
      if (code !== 0) throw new Error(`exit ${code}: ${line}\n${err}${out}`);
      console.log(await check(line, answerOf(out), { url: server.url, keys }));
    }
    console.log(`MCP Inspector CLI: the README's ${lines.length} lines answered as expected`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    failed = true;
  } finally {
    await server?.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}
