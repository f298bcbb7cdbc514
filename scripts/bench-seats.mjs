#!/usr/bin/env node
/**
 * npm run bench:seats [-- --smoke] [--seconds N] [--rounds N] [--only events|list] [--port P] [--no-write]
 *
 * Contract section 20 (issue 32): what seats that follow the work cost. Starts `wrangler dev` on a
 * fresh local state and measures, each pair interleaved request by request on one server (A B,
 * then B A, ...), so both sides see the machine at the same moments:
 *
 * 1. The event write path (`POST /internal/v1/events`): batches of new pull requests by members
 *    without a seat, in an organization with automatic seat assignment against one with manual.
 *    Every batch's pull requests are new, so each one reaches the automatic rule (seats are given
 *    until none is left, then authors join the waiting list). Events per second of each side.
 *    Target: automatic at most 1.1x slower.
 * 2. The member list of a 5,000-member organization, first page of 100, with `inactiveDays=90`
 *    against without (half the members have activity, half of that older than 90 days). Target:
 *    within 1.2x.
 *
 * Prints the tables and writes each to its section of docs/performance.md (not with --smoke or
 * --no-write); `--only` runs one of the two.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { fmt, interleave, migrateLocalD1, percentiles, span, startWrangler, table, writeSection } from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

const { values: opts } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    seconds: { type: "string" },
    port: { type: "string", default: "9701" },
    rounds: { type: "string" },
    only: { type: "string" },
    "no-write": { type: "boolean", default: false },
  },
});
const seconds = Number(opts.seconds ?? (opts.smoke ? 2 : 20));
const BIG = opts.smoke ? 300 : 5000;
/** Seatless authors per event organization, seats bought there, and pull requests per batch. */
const AUTHORS = opts.smoke ? 50 : 400;
const SEATS = opts.smoke ? 10 : 100;
const BATCH = 50;
const ROUNDS = Number(opts.rounds ?? (opts.smoke ? 4 : 100));
const runs = (part) => opts.only === undefined || opts.only === part;
const write = !opts.smoke && !opts["no-write"];
const persistTo = opts.smoke ? ".bench/seats-smoke" : ".bench/seats";
const adminToken = `bench-${crypto.randomUUID()}`;
const log = (...args) => console.log(...args);
const DAY = 86_400_000;

rmSync(persistTo, { recursive: true, force: true });
log(`Applying D1 migrations to ${persistTo}...`);
await migrateLocalD1(persistTo);
log(`Starting wrangler dev on ${persistTo} (port ${opts.port})...`);
const server = await startWrangler({ persistTo, port: Number(opts.port), adminToken });
try {
  const client = controlPlaneClient(server.url, adminToken);
  const caller = "9101";
  let installations = 0;
  const org = (seats) => ({
    installationId: ++installations,
    installedAt: "2025-01-01T00:00:00Z",
    plan: "team",
    subscription: { status: "active", billedThroughService: true, purchasedSeats: seats },
  });
  const member = (login, role = "member") => ({
    githubLogin: login,
    workEmail: `${login}@example.com`,
    role,
    seat: false,
    isBot: false,
  });
  const inParallel = async (items, n, f) => {
    for (let i = 0; i < items.length; i += n) await Promise.all(items.slice(i, i + n).map(f));
  };

  const now = Date.now();
  const stamp = `Measured by \`npm run bench:seats\` (wrangler dev, local state, \`X_LOCAL_OBSERVABILITY=false\`, quotas on; ${new Date(now).toISOString().slice(0, 10)}).`;
  await client.putUser(caller, { githubLogin: "bench-admin" });
  const { key } = await client.createKey(caller, "members");
  const auth = { Authorization: `Bearer ${key}` };
  if (runs("events")) await events();
  if (runs("list")) await list();

  async function events() {
    log("Registering the event organizations...");
    const sides = { automatic: "seats-auto", manual: "seats-manual" };
    for (const [mode, login] of Object.entries(sides)) {
      await client.putOrganization(login, org(SEATS));
      await client.putMember(login, caller, member("bench-admin", "admin"));
      const ids = Array.from({ length: AUTHORS }, (_, i) => String(300000 + i));
      await inParallel(ids, 8, (id) => client.putMember(login, id, member(`author-${id}`)));
      if (mode === "automatic") {
        const res = await fetch(`${server.url}/api/v1/organizations/${login}/settings`, {
          method: "PATCH",
          headers: { ...auth, "Content-Type": "application/json" },
          body: JSON.stringify({ seatAssignment: "automatic", expectedSeatAssignment: "manual" }),
        });
        if (res.status !== 200) throw new Error(`settings → ${res.status}: ${await res.text()}`);
      }
    }

    // 1. Events: batches of new pull requests, automatic and manual interleaved.
    log(`Measuring the event write path: ${ROUNDS} batches of ${BATCH} new pull requests per side, interleaved...`);
    let prNumber = 0;
    // Each side cycles through its own authors: every one of them writes pull requests.
    const written = new Map();
    const batchOf = (login) =>
      Array.from({ length: BATCH }, () => {
        prNumber += 1;
        const n = (written.get(login) ?? 0) + 1;
        written.set(login, n);
        const at = new Date(now - (prNumber % 1000) * 60_000).toISOString();
        return {
          type: "pull_request",
          org: login,
          repo: "api",
          prNumber,
          author: `author-${300000 + (n % AUTHORS)}`,
          createdAt: at,
          mergedAt: null,
          linesAdded: 10,
          linesDeleted: 1,
          updatedAt: at,
        };
      });
    const post = async (events) => {
      const started = performance.now();
      const res = await fetch(`${server.url}/internal/v1/events`, {
        method: "POST",
        headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ events }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`events → ${res.status}`);
      return performance.now() - started;
    };
    const samples = { automatic: [], manual: [] };
    for (let warm = 0; warm < 3; warm++) for (const login of Object.values(sides)) await post(batchOf(login));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["automatic", "manual"] : ["manual", "automatic"];
      for (const mode of order) samples[mode].push(await post(batchOf(sides[mode])));
    }
    const eventsRow = (mode) => {
      const { p50, p99 } = percentiles(samples[mode]);
      return { p50, p99, eventsPerSecond: (BATCH * 1000) / p50 };
    };
    const auto = eventsRow("automatic");
    const manual = eventsRow("manual");
    const seatsAfter = await (
      await fetch(`${server.url}/api/v1/organizations/${sides.automatic}/members?seat=true&limit=1`, { headers: auth })
    ).json();
    const waitingAfter = await (
      await fetch(`${server.url}/api/v1/organizations/${sides.automatic}/seat-requests`, { headers: auth })
    ).json();
    const eventsReport = table(
      [
        "seatAssignment",
        "batches",
        "events per batch",
        "p50 ms per batch",
        "p99 ms",
        "events/s (p50)",
        "manual ÷ automatic events/s",
      ],
      [
        ["manual", String(ROUNDS), String(BATCH), fmt(manual.p50), fmt(manual.p99), fmt(manual.eventsPerSecond, 0), "1.00x"],
        [
          "automatic",
          String(ROUNDS),
          String(BATCH),
          fmt(auto.p50),
          fmt(auto.p99),
          fmt(auto.eventsPerSecond, 0),
          `${fmt(manual.eventsPerSecond / auto.eventsPerSecond)}x`,
        ],
      ],
    );
    const seatsCheck = `automatic: ${seatsAfter.seats.used} of ${SEATS} seats used, ${waitingAfter.data.length} on the waiting list`;
    // Every author of the automatic side wrote a new pull request: each holds a seat or waits, never over the seats bought.
    if (seatsAfter.seats.used !== SEATS || waitingAfter.data.length !== AUTHORS - SEATS) throw new Error(seatsCheck);
    log(`\n${eventsReport}\n${seatsCheck}\n`);
    if (write) {
      const content = [
        stamp,
        "",
        `\`POST /internal/v1/events\`: ${ROUNDS} batches of ${BATCH} new pull requests per side, the two organizations interleaved batch by batch (A B, then B A; ${AUTHORS} seatless authors each, ${SEATS} seats bought; after 3 warm-up batches each).`,
        "",
        eventsReport,
        "",
        `After the run: ${seatsCheck}.`,
      ].join("\n");
      writeSection("docs/performance.md", "bench-seats-events", content);
      log("Wrote docs/performance.md (bench-seats-events).");
    }
  }

  async function list() {
    // 2. The member list of a large organization, with and without inactiveDays.
    log(`Registering a ${BIG}-member organization with activity...`);
    await client.putOrganization("seats-big", org(BIG));
    await client.putMember("seats-big", caller, member("bench-admin", "admin"));
    const bigIds = Array.from({ length: BIG - 1 }, (_, i) => String(100000 + i));
    await inParallel(bigIds, 8, (id) => client.putMember("seats-big", id, member(`${(Number(id) * 7919) % 10007}-M${id}`)));
    // Every other member authored a pull request: half of them 10 days ago, half 200 days ago.
    const activity = bigIds
      .filter((_, i) => i % 2 === 0)
      .map((id, i) => {
        const at = new Date(now - (i % 2 === 0 ? 10 : 200) * DAY).toISOString();
        const login = `${(Number(id) * 7919) % 10007}-M${id}`;
        return {
          type: "pull_request",
          org: "seats-big",
          repo: "api",
          prNumber: i + 1,
          author: login,
          createdAt: at,
          mergedAt: null,
          linesAdded: 1,
          linesDeleted: 0,
          updatedAt: at,
        };
      });
    for (let i = 0; i < activity.length; i += 1000) await client.postEvents(activity.slice(i, i + 1000));
    const listPath = "/api/v1/organizations/seats-big/members?limit=100";
    const idlePath = `${listPath}&inactiveDays=90`;
    const idlePage = await (await fetch(`${server.url}${idlePath}`, { headers: auth })).json();
    if (idlePage.data?.length !== 100) throw new Error(`inactiveDays page: ${JSON.stringify(idlePage).slice(0, 200)}`);
    log(`Measuring the member list of ${BIG}, first page of 100, with and without inactiveDays=90, interleaved...`);
    const [plain, idle] = await interleave(
      [
        { url: server.url, path: listPath, headers: auth },
        { url: server.url, path: idlePath, headers: auth },
      ],
      span(opts.smoke, seconds),
    );
    const listReport = table(
      ["case", "requests", "p50 ms", "p99 ms", "÷ without"],
      [
        [`member list of ${BIG}, first page of 100`, String(plain.requests), fmt(plain.p50), fmt(plain.p99), "1.00x"],
        [`the same with inactiveDays=90`, String(idle.requests), fmt(idle.p50), fmt(idle.p99), `${fmt(idle.p50 / plain.p50)}x`],
      ],
    );
    log(`\n${listReport}\n`);

    if (write) {
      const content = [
        stamp,
        "",
        `Interleaved request by request for ${seconds} s at one connection, after a warm-up (half the members with activity, half of that older than 90 days):`,
        "",
        listReport,
      ].join("\n");
      writeSection("docs/performance.md", "bench-seats-list", content);
      log("Wrote docs/performance.md (bench-seats-list).");
    }
  }
} finally {
  await server.stop();
}
