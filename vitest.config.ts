import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Four projects, one run:
 * - `unit`: the pure rules (table tests) on Node, no workerd and no bindings: `npm run test:unit`.
 * - `worker`: inside workerd with real local D1, KV and Durable Objects, migrated from migrations/d1.
 * - `worker-fresh`: the same, in a workerd of its own whose storage no other file fills (walks over every organization).
 * - `node`: tooling that runs on Node (OpenAPI validation, the seed and benchmark scripts' logic).
 * Results also go to test-results.json, which .ci/run summarises.
 */
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations/d1");
  /** The worker projects' runtime: workerd with real local bindings, and the fake GitHub's URL and credentials. */
  const workerd = () => [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
          GITHUB_WEBHOOK_SECRET: "test-webhook-secret",
          GITHUB_WEBHOOK_SECRET_PREVIOUS: "test-webhook-secret-previous",
          // Local sign-in of the web app: the tests start sessions with it (never in wrangler.toml).
          DEV_SIGN_IN: "true",
          GITHUB_API_URL: inject("fakeGithubUrl"),
          GITHUB_APP_ID: inject("fakeGithubAppId"),
          GITHUB_APP_PRIVATE_KEY: inject("fakeGithubPrivateKey"),
          // GitHub sign-in runs its whole flow against the fake too (test/fake-github/oauth.ts).
          GITHUB_OAUTH_URL: inject("fakeGithubUrl"),
          GITHUB_CLIENT_ID: inject("fakeGithubClientId"),
          GITHUB_CLIENT_SECRET: inject("fakeGithubClientSecret"),
          // The public origin GitHub sends the person back to (never the request's Host): the tests' origin.
          APP_URL: "https://service.test",
          TEST_MIGRATIONS: migrations,
        },
      },
    })),
  ];
  return {
    test: {
      reporters: ["default", "json"],
      outputFile: { json: "test-results.json" },
      // Request logs are one JSON line per request; keep the test output readable. Error lines
      // caused by faults the tests inject on purpose carry "[expected-fault]" in their message and
      // are dropped too: a newcomer should not read them as failures (README, "Tests").
      onConsoleLog: (log: string) => !log.includes('"level":"info"') && !log.includes("[expected-fault]"),
      projects: [
        {
          // Pure functions as tables: one worker for every file (a fresh one per file cost more than
          // the tests themselves, ~0.5 s each quiet, seconds on a loaded machine). The property tests
          // (1,000 runs of fc.anything()) take about 1 s quiet and over 10 s on a loaded machine: the
          // worker project's budget, not the default 5 s. A budget, not a sleep: nothing waits on it.
          test: {
            name: "unit",
            include: ["test/unit/**/*.test.ts"],
            environment: "node",
            isolate: false,
            testTimeout: 30_000,
          },
        },
        {
          plugins: workerd(),
          test: {
            name: "worker",
            // One workerd for every file instead of one per file (each start-up cost ~0.4 s plus
            // re-transforming the sources). Storage is then shared across files, which the tests
            // allow: each test creates its own organizations, users and keys with unique names.
            isolate: false,
            include: ["test/worker/**/*.test.ts"],
            exclude: ["test/worker/fresh/**"],
            setupFiles: ["./test/worker/setup.ts"],
            globalSetup: ["./test/fake-github/global-setup.ts"],
            // Property and concurrency tests make hundreds of requests; on a loaded 2-core CI machine
            // they need more than the default 5 s. A budget, not a sleep: nothing waits on it.
            testTimeout: 30_000,
          },
        },
        {
          plugins: workerd(),
          test: {
            // Tests of a walk over every organization (the daily reconciliation's Cron Trigger): in
            // the shared storage above, that walk would cover the hundreds of organizations every
            // other file leaves behind (300 took 20 s), so these run in their own workerd, whose
            // storage holds only what they create.
            name: "worker-fresh",
            isolate: false,
            include: ["test/worker/fresh/**/*.test.ts"],
            setupFiles: ["./test/worker/setup.ts"],
            globalSetup: ["./test/fake-github/global-setup.ts"],
            testTimeout: 30_000,
          },
        },
        {
          resolve: {
            alias: {
              "cloudflare:workers": new URL(
                "./test/node/stubs/cloudflare-workers.ts",
                (import.meta as unknown as { url: string }).url,
              ).pathname,
            },
          },
          test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
        },
      ],
    },
  };
});
