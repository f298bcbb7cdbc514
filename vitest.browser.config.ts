import { defineConfig } from "vitest/config";

/**
 * `npm run test:browser`: the web app in Debian's Chromium (playwright-core) against `wrangler dev`
 * with the demo data (test/browser/global-setup.ts). A run of its own (one server, one browser,
 * the flows in order); its results go to test-results-browser.json, which .ci/run adds to the
 * main run's counts.
 */
export default defineConfig({
  test: {
    name: "browser",
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/browser/global-setup.ts"],
    reporters: ["default", "json"],
    outputFile: { json: "test-results-browser.json" },
    // One browser, flows that build on each other's sign-in: one file, run in order.
    fileParallelism: false,
    // A budget for a loaded 2-core machine (Chromium, workerd and the tests share it), not a sleep.
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
