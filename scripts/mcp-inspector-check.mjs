#!/usr/bin/env node
// The MCP endpoint as a user checks it when configuring a client: the MCP Inspector's CLI
// (`mcp-inspector-cli --cli`, built on the SDK v1 client, so the 2025 protocol revision) lists the
// tools and calls one against `wrangler dev` on 127.0.0.1:9014, which this script starts and stops.
// Exit 0 when both answers are right, 1 otherwise. Run by .ci/run (`npm run mcp:inspector`).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { migrateLocalD1, startWrangler } from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

// MCP_INSPECTOR_PORT: another port (CI on a machine where 9014 is taken).
const PORT = Number(process.env.MCP_INSPECTOR_PORT ?? 9014);
const ADMIN_TOKEN = "mcp-inspector-check-admin-token-0123456789";
const ORG = "inspector-acme";
const USER = "8001";

/**
 * inspector-cli 1.0.3 checks for its own package.json with a path relative to the working
 * directory but imports it relative to its module, so it fails unless started from its build
 * folder: run it there (the arguments name no relative path).
 */
const INSPECTOR_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "node_modules",
  "@modelcontextprotocol",
  "inspector-cli",
  "build",
);

/** Runs the Inspector's CLI with these arguments; resolves to its parsed JSON output. */
function inspector(args) {
  return new Promise((resolve, reject) => {
    const child = spawn("mcp-inspector-cli", ["--cli", ...args], { cwd: INSPECTOR_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`mcp-inspector-cli exited ${code}: ${err}${out}`));
      try {
        resolve(JSON.parse(out.slice(out.indexOf("{"))));
      } catch {
        reject(new Error(`mcp-inspector-cli printed no JSON: ${out}${err}`));
      }
    });
  });
}

const persistTo = mkdtempSync(join(tmpdir(), "mcp-inspector-"));
let server;
let failed = false;
try {
  await migrateLocalD1(persistTo);
  server = await startWrangler({ persistTo, port: PORT, adminToken: ADMIN_TOKEN });
  const cp = controlPlaneClient(server.url, ADMIN_TOKEN);
  await cp.putOrganization(ORG, {
    installationId: 99_000_321,
    installedAt: "2025-01-01T00:00:00.000Z",
    blocked: false,
    plan: "pro",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
  });
  await cp.putUser(USER, { githubLogin: `user${USER}` });
  await cp.putMember(ORG, USER, {
    githubLogin: `user${USER}`,
    workEmail: "u@example.com",
    role: "admin",
    seat: true,
    isBot: false,
  });
  const { key } = await cp.createKey(USER, "members");
  const connection = [`${server.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${key}`];

  const listed = await inspector([...connection, "--method", "tools/list"]);
  const names = listed.tools.map((tool) => tool.name).sort();
  console.log(`tools/list: ${names.join(", ")}`);
  const expected = ["get_member", "list_members", "list_organizations", "read_audit_log", "update_member", "update_members"];
  if (JSON.stringify(names) !== JSON.stringify(expected)) throw new Error(`expected the member tools, got ${names}`);

  const called = await inspector([
    ...connection,
    "--method",
    "tools/call",
    "--tool-name",
    "get_member",
    "--tool-arg",
    `org=${ORG}`,
    `githubUserId=${USER}`,
  ]);
  console.log(`tools/call get_member: ${JSON.stringify(called.structuredContent)}`);
  if (called.isError || called.structuredContent?.githubUserId !== USER || called.structuredContent?.role !== "admin") {
    throw new Error(`unexpected get_member result: ${JSON.stringify(called)}`);
  }
  console.log("MCP Inspector CLI: ok");
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  failed = true;
} finally {
  await server?.stop();
  rmSync(persistTo, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
