#!/usr/bin/env node
/**
 * npm run seed -- [--url http://127.0.0.1:8787] [--admin-token TOKEN] [--keys-only]
 * Loads the demo data into a running instance through the control plane and prints demo keys.
 * The admin token defaults to $ADMIN_TOKEN, then to ADMIN_TOKEN in .dev.vars.
 */
import { parseArgs } from "node:util";
import { adminTokenFromDevVars } from "./lib/dev-vars.mjs";
import { keyReport, seedDemo } from "./lib/seed.mjs";

const USAGE = `Usage: npm run seed -- [--url URL] [--admin-token TOKEN] [--keys-only]
  --url          base URL of a running instance (default http://127.0.0.1:8787)
  --admin-token  the Worker's ADMIN_TOKEN (default: $ADMIN_TOKEN, then .dev.vars)
  --keys-only    only mint fresh demo keys (the previous demo keys stop working)`;

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      url: { type: "string", default: "http://127.0.0.1:8787" },
      "admin-token": { type: "string" },
      "keys-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  console.error(`${error instanceof Error ? error.message : error}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
const adminToken = options["admin-token"] ?? process.env.ADMIN_TOKEN ?? adminTokenFromDevVars();
if (!adminToken) {
  console.error(`No admin token: pass --admin-token, set ADMIN_TOKEN, or put ADMIN_TOKEN in .dev.vars.\n\n${USAGE}`);
  process.exit(2);
}

try {
  const keys = await seedDemo({ url: options.url, adminToken, keysOnly: options["keys-only"] });
  console.log(keyReport(options.url, keys, { adminToken }));
} catch (error) {
  console.error(`Seeding failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
