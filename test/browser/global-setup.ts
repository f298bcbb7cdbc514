import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { kernelChosenPort, migrateLocalD1 } from "../../scripts/lib/bench-common.mjs";
import { waitForHealthy } from "../../scripts/lib/control-plane-client.mjs";
import { seedDemo } from "../../scripts/lib/seed.mjs";

/**
 * The browser tests' service: `wrangler dev` on 127.0.0.1 (port BROWSER_TEST_PORT, default 8991)
 * with a fresh local state in a temporary folder, local sign-in on, and the demo data loaded
 * through the control plane as `npm start` loads it. Stopped (its whole process group) afterwards.
 */
export default async function setup(project: TestProject) {
  const port = process.env.BROWSER_TEST_PORT ?? "8991";
  const url = `http://127.0.0.1:${port}`;
  const state = mkdtempSync(join(tmpdir(), "browser-tests-"));
  const adminToken = randomBytes(24).toString("base64url");
  const wrangler = join(process.cwd(), "node_modules", ".bin", "wrangler");
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

  // Every analytics shard gets the migrations, as `npm start` applies them (a copy of the
  // benchmarks' migrated template when one is there: scripts/lib/bench-common.mjs).
  await migrateLocalD1(state);
  // Servers started side by side (CI runs this beside the benchmarks' smoke runs) can lose a race
  // for a port probed free a moment earlier: such a start is tried again, up to three times. The
  // devtools inspector gets a port of the kernel's choosing (wrangler would probe 9229 in each).
  for (let attempt = 1; ; attempt++) {
    const inspectorPort = String(await kernelChosenPort());
    const dev: ChildProcess = spawn(
      wrangler,
      [
        "dev",
        ...["--ip", "127.0.0.1", "--port", port, "--inspector-port", inspectorPort, "--persist-to", state],
        ...["--var", `ADMIN_TOKEN:${adminToken}`, "--var", "DEV_SIGN_IN:true", "--show-interactive-dev-session=false"],
      ],
      { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    dev.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    dev.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    const stopServer = () => {
      if (dev.pid !== undefined && dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid, "SIGTERM");
    };
    const stop = () => {
      stopServer();
      rmSync(state, { recursive: true, force: true });
    };
    try {
      await waitForHealthy(url, 120_000, () => dev.exitCode === null && dev.signalCode === null);
    } catch (error) {
      stopServer();
      if (attempt < 3 && /address already in use/i.test(output)) continue;
      stop();
      throw new Error(`wrangler dev did not come up: ${error}\n${output.slice(-3000)}`);
    }
    try {
      const keys = await seedDemo({ url, adminToken, log: () => {} });
      project.provide("appUrl", url);
      project.provide("adminToken", adminToken);
      project.provide("demoMembersKey", keys.membersKey);
    } catch (error) {
      stop();
      throw new Error(`the demo data did not load: ${error}\n${output.slice(-3000)}`);
    }
    return stop;
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    appUrl: string;
    adminToken: string;
    demoMembersKey: string;
  }
}
