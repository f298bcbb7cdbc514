#!/usr/bin/env node
/**
 * npm run bench:sync [-- --smoke] [--members N] [--repos N] [--pulls N] [--api both|graphql|rest] [--no-write]
 *
 * Issue 18 item 7: an installation sync of a large organization against the fake GitHub, once with
 * the history through GraphQL (the default) and once through REST (the fake answers `POST /graphql`
 * 404 for the installation, as a server without GitHub's GraphQL API: the sync's fallback), each
 * on fresh local state, so the two are measured on the same organization.
 * 1. Starts the fake GitHub (test/fake-github/server.ts) in this process on 127.0.0.1:9032, with an
 *    App key pair made for this run, and seeds it through its `/__fake/...` control API: members
 *    (1% admins), repositories (every 10th private, with 3 member collaborators), merged pull
 *    requests spread over the backfill window (40% in the largest 1% of repositories, so some
 *    histories take many pages; the rest spread evenly).
 * 2. Starts `wrangler dev` on 127.0.0.1:9031 (fresh local state) with the App's bindings pointing at
 *    the fake, registers the organization with its installation id through the control plane and
 *    starts a sync with `POST /internal/v1/organizations/{org}/sync`.
 * 3. Polls `GET .../sync` every 250 ms until it completes: wall time per step (the moment each step
 *    shows `done`) and in total. GitHub calls and rate points per step come from the fake's request
 *    log (a REST request with the installation token costs a point, a GraphQL query the cost the
 *    fake computed by GitHub's formula; the App JWT's calls cost none).
 * 4. Counts rows in the local D1 file and the organization's Durable Object before and after, and
 *    checks that members, repositories, collaborators and pull requests (with their line counts)
 *    equal what was seeded, and that the fake recorded no drift from GitHub's description.
 * Prints a table per way and one comparing them; a full run of both (not --smoke, not --no-write)
 * writes them to docs/performance.md.
 */
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { startFakeGithub } from "../test/fake-github/server.ts";
import { fmt, migrateLocalD1, QUOTAS_ON, startWrangler, table, writeSection } from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

const { values: opts } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    members: { type: "string" },
    repos: { type: "string" },
    pulls: { type: "string" },
    port: { type: "string", default: "9031" },
    "fake-port": { type: "string", default: "9032" },
    "no-write": { type: "boolean", default: false },
    api: { type: "string", default: "both" },
  },
});
if (!["both", "graphql", "rest"].includes(opts.api)) throw new Error("--api must be both, graphql or rest");
const APIS = opts.api === "both" ? ["rest", "graphql"] : [opts.api];
const FULL = { members: 5000, repos: 2000, pulls: 20000 };
const size = {
  members: Number(opts.members ?? (opts.smoke ? 50 : FULL.members)),
  repos: Number(opts.repos ?? (opts.smoke ? 20 : FULL.repos)),
  pulls: Number(opts.pulls ?? (opts.smoke ? 100 : FULL.pulls)),
};
const isFull = size.members === FULL.members && size.repos === FULL.repos && size.pulls === FULL.pulls;
const persistTo = opts.smoke ? ".bench/sync-smoke" : ".bench/sync";
const adminToken = `bench-${crypto.randomUUID()}`;
const ORG = "bench-sync-org";
const BACKFILL_DAYS = 90;
const DAY = 86_400_000;
const timeoutMs = opts.smoke ? 120_000 : 3 * 3600_000;
const log = (...args) => console.log(...args);
const n = (x) => Number(x).toLocaleString("en-US");
const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

// ---- the organization at GitHub -----------------------------------------------------------------

/** Deterministic data: members, repositories (with visibility and collaborators) and pull requests per repository. */
function organization({ members, repos, pulls }, now) {
  const admins = Math.max(2, Math.floor(members / 100));
  const people = Array.from({ length: members }, (_, i) => ({
    login: `m-${String(i + 1).padStart(5, "0")}`,
    role: i < admins ? "admin" : "member",
  }));
  const heavy = Math.max(1, Math.floor(repos / 100));
  const heavyPulls = Math.floor(pulls * 0.4);
  const counts = Array.from({ length: repos }, (_, i) => {
    if (i < heavy) return Math.floor(heavyPulls / heavy) + (i < heavyPulls % heavy ? 1 : 0);
    const rest = pulls - heavyPulls;
    const light = repos - heavy;
    const j = i - heavy;
    return Math.floor(rest / light) + (j < rest % light ? 1 : 0);
  });
  let k = 0;
  const repositories = counts.map((count, i) => {
    const isPrivate = i % 10 === 9;
    const collaborators = isPrivate ? [0, 1, 2].map((c) => ({ login: people[(i * 31 + c * 7) % members].login })) : undefined;
    const prs = Array.from({ length: count }, (_, n) => {
      k += 1;
      // Merged between 1 hour and 89 days ago, spread evenly over the window (interleaved across repositories).
      const mergedAt = now - 3600_000 - Math.floor(((k * 7919) % pulls) * ((89 * DAY) / pulls));
      return {
        number: n + 1,
        author: people[(k * 13) % members].login,
        createdAt: iso(mergedAt - 2 * DAY),
        updatedAt: iso(mergedAt + 60_000),
        mergedAt: iso(mergedAt),
        additions: (k % 400) + 1,
        deletions: k % 97,
      };
    });
    return { name: `repo-${String(i + 1).padStart(4, "0")}`, private: isPrivate, collaborators, pulls: prs };
  });
  return { people, admins, repositories };
}

// ---- rows in the local state ---------------------------------------------------------------------

const USER_TABLES =
  "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' AND name NOT LIKE '__drizzle%'";

/** Rows per table of a SQLite file (read-only; wrangler dev may have it open). */
function rowsOf(file) {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const rows = {};
    for (const { name } of db.prepare(USER_TABLES).all())
      rows[name] = Number(db.prepare(`SELECT count(*) AS n FROM "${name}"`).get().n);
    return rows;
  } finally {
    db.close();
  }
}
const total = (rows) => Object.values(rows).reduce((a, b) => a + b, 0);

/** The organization's Durable Object: the SQLite file with a `sync_runs` table. */
function organizationFile() {
  const root = join(persistTo, "v3", "do");
  if (!existsSync(root)) return undefined;
  for (const dir of readdirSync(root)) {
    for (const f of readdirSync(join(root, dir))) {
      if (!f.endsWith(".sqlite") || f === "metadata.sqlite") continue;
      const file = join(root, dir, f);
      const db = new DatabaseSync(file, { readOnly: true });
      const has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sync_runs'").get();
      db.close();
      if (has) return file;
    }
  }
  return undefined;
}

// ---- GitHub calls per step -----------------------------------------------------------------------

function stepOf(path) {
  if (/^\/app\/installations\/\d+\/access_tokens/.test(path)) return "tokens";
  if (/^\/app\/installations\/\d+/.test(path)) return "installation";
  if (path.startsWith("/installation/repositories")) return "repositories";
  if (/^\/orgs\/[^/]+\/members/.test(path)) return "members";
  if (/^\/repos\/[^/]+\/[^/]+\/collaborators/.test(path)) return "collaborators";
  if (/^\/repos\/[^/]+\/[^/]+\/pulls\/\d+/.test(path)) return "pullRequests:single";
  if (/^\/repos\/[^/]+\/[^/]+\/pulls/.test(path)) return "pullRequests:list";
  if (path === "/graphql") return "pullRequests:graphql";
  return "other";
}

function usageBySteps(requests) {
  const by = {};
  for (const r of requests) {
    const step = stepOf(r.path);
    by[step] ??= { calls: 0, points: 0, notOk: 0 };
    by[step].calls += 1;
    // A GraphQL query costs what the fake computed (none when refused); a REST request one point.
    if (r.path === "/graphql") by[step].points += r.cost ?? 0;
    else if (r.auth === "token") by[step].points += 1;
    if (r.status >= 300) by[step].notOk += 1;
  }
  return by;
}

// ---- the run -------------------------------------------------------------------------------------

const startedAll = performance.now();
const { publicKey, privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  publicKeyEncoding: { type: "spki", format: "pem" },
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
});
const github = await startFakeGithub(undefined, Number(opts["fake-port"]));
const control = async (method, path, body) => {
  const res = await fetch(`${github.url}/__fake/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`fake control ${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
};

let server;
let failed = false;
try {
  // 1. The organization at GitHub.
  const { appId } = await control("POST", "apps", { publicKey });
  const { installationId } = await control("POST", "installations", { appId, account: { login: ORG, type: "Organization" } });
  const now = Date.now();
  const org = organization(size, now);
  log(`Seeding the fake GitHub: ${size.members} members, ${size.repos} repositories, ${size.pulls} merged pull requests...`);
  const seedStarted = performance.now();
  await control("PUT", `orgs/${ORG}/members`, { members: org.people });
  let collaboratorPairs = 0;
  let linesAdded = 0;
  for (const repo of org.repositories) {
    await control("PUT", `repos/${ORG}/${repo.name}`, { private: repo.private, collaborators: repo.collaborators ?? [] });
    collaboratorPairs += repo.collaborators?.length ?? 0;
    for (let i = 0; i < repo.pulls.length; i += 1000) {
      await control("PUT", `repos/${ORG}/${repo.name}/pulls`, { pulls: repo.pulls.slice(i, i + 1000) });
    }
    for (const p of repo.pulls) linesAdded += p.additions;
  }
  const privates = org.repositories.filter((r) => r.private).length;
  log(`  seeded in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`);
  const expected = {
    members: size.members,
    admins: org.admins,
    repositories: size.repos,
    privates,
    collaborators: collaboratorPairs,
    pullRequests: size.pulls,
    linesAdded,
  };

  /** One sync on fresh local state, the history through `api`: what it took, cost and wrote. */
  async function measure(api) {
    await control("PUT", `installations/${installationId}/graphql`, { enabled: api === "graphql" });
    const logged = (await control("GET", `installations/${installationId}`)).requests.length;

    // 2. The service, pointed at the fake.
    rmSync(persistTo, { recursive: true, force: true });
    const d1File = await migrateLocalD1(persistTo);
    log(`[${api}] Starting wrangler dev on 127.0.0.1:${opts.port} (${persistTo})...`);
    server = await startWrangler({
      persistTo,
      port: Number(opts.port),
      adminToken,
      vars: {
        ...QUOTAS_ON,
        GITHUB_WEBHOOK_SECRET: `bench-secret-${now}`,
        GITHUB_API_URL: github.url,
        GITHUB_APP_ID: String(appId),
        GITHUB_APP_PRIVATE_KEY: privateKey,
        GITHUB_BACKFILL_DAYS: String(BACKFILL_DAYS),
      },
    });
    const client = controlPlaneClient(server.url, adminToken);
    await client.putOrganization(ORG, {
      installationId,
      installedAt: iso(now),
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 10 },
    });
    const d1Before = rowsOf(d1File);
    const objectFile = organizationFile();
    const objectBefore = objectFile ? rowsOf(objectFile) : {};

    // 3. The sync, polled to its end.
    log(`[${api}] Starting the sync (POST .../sync) and polling GET .../sync every 250 ms...`);
    const t0 = performance.now();
    const started = await client.request("POST", `/internal/v1/organizations/${ORG}/sync`);
    const doneAt = {};
    let run;
    let lastLog = 0;
    for (;;) {
      const status = await client.request("GET", `/internal/v1/organizations/${ORG}/sync`);
      run = status.running ?? status.last;
      const elapsed = performance.now() - t0;
      if (run?.id === started.id) {
        for (const [step, p] of Object.entries(run.steps))
          if (p.state === "done" && doneAt[step] === undefined) doneAt[step] = elapsed;
        if (run.state !== "running") break;
      }
      if (elapsed - lastLog > 10_000) {
        lastLog = elapsed;
        const counts = run ? Object.entries(run.steps).map(([s, p]) => `${s} ${p.state} ${p.count}`) : [];
        log(
          `  ${fmt(elapsed / 1000, 0)} s: ${counts.join(", ")}${run?.lastError ? ` (last error: ${run.lastError.message})` : ""}`,
        );
      }
      if (elapsed > timeoutMs) throw new Error(`the sync did not finish within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const wall = performance.now() - t0;
    if (run.state !== "complete") throw new Error(`the sync ended ${run.state}: ${JSON.stringify(run.lastError)}`);
    log(`  complete in ${fmt(wall / 1000, 1)} s`);

    // 4. What it cost and what it wrote.
    const stats = await control("GET", `installations/${installationId}`);
    const usage = usageBySteps(stats.requests.slice(logged));
    const d1After = rowsOf(d1File);
    const objectAfter = rowsOf(organizationFile());
    await server.stop();
    server = undefined;

    // Correctness: what the service holds equals what was seeded.
    const db = new DatabaseSync(d1File, { readOnly: true });
    const pr = db.prepare("SELECT count(*) AS n, coalesce(sum(lines_added), 0) AS added FROM pull_requests").get();
    db.close();
    const odb = new DatabaseSync(organizationFile(), { readOnly: true });
    const one = (sql) => Number(odb.prepare(sql).get().n);
    const held = {
      members: one("SELECT count(*) AS n FROM members"),
      admins: one("SELECT count(*) AS n FROM members WHERE role = 'admin'"),
      repositories: one("SELECT count(*) AS n FROM repositories WHERE removed = 0"),
      privates: one("SELECT count(*) AS n FROM repositories WHERE removed = 0 AND private = 1"),
      collaborators: one("SELECT count(*) AS n FROM collaborators"),
      pullRequests: Number(pr.n),
      linesAdded: Number(pr.added),
    };
    odb.close();
    for (const [what, n] of Object.entries(expected)) {
      const ok = held[what] === n;
      if (!ok) failed = true;
      log(`  check ${what}: ${held[what]} held, ${n} seeded${ok ? "" : "  ← MISMATCH"}`);
    }
    const counts = run.steps;
    for (const step of ["repositories", "members", "collaborators", "pullRequests"]) {
      const want = {
        repositories: size.repos,
        members: size.members,
        collaborators: collaboratorPairs,
        pullRequests: size.pulls,
      }[step];
      if (counts[step].count !== want) {
        failed = true;
        log(`  check progress ${step}: ${counts[step].count}, expected ${want}  ← MISMATCH`);
      }
    }
    if (stats.drifts.length > 0) {
      failed = true;
      log(`  the fake recorded ${stats.drifts.length} drift(s) from GitHub's description: ${stats.drifts[0]}`);
    }
    // The REST way's one expected refusal: the GraphQL query answered 404 (the sync then falls back).
    const refused = Object.entries(usage).reduce(
      (n, [k, u]) => n + (api === "rest" && k === "pullRequests:graphql" ? 0 : u.notOk),
      0,
    );
    const fallback = api === "rest" ? (usage["pullRequests:graphql"]?.notOk ?? 0) : 0;
    if (api === "graphql" && (usage["pullRequests:list"] || usage["pullRequests:single"])) {
      failed = true;
      log("  the GraphQL sync read pull requests through REST  ← MISMATCH");
    }
    if (api === "rest" && fallback === 0) {
      failed = true;
      log("  the REST sync never asked GraphQL first  ← MISMATCH");
    }
    return { api, wall, doneAt, usage, refused, fallback, d1Before, d1After, objectBefore, objectAfter };
  }

  const results = {};
  for (const api of APIS) results[api] = await measure(api);

  // The tables.
  const changed = (before, after) =>
    Object.keys(after)
      .filter((t) => after[t] !== (before[t] ?? 0))
      .map((t) => `${t} +${after[t] - (before[t] ?? 0)}`)
      .join(", ");
  const summary = (r) => {
    const u = (k) => r.usage[k] ?? { calls: 0, points: 0 };
    const d = (k) => r.doneAt[k] ?? r.wall;
    const history = ["pullRequests:list", "pullRequests:single", "pullRequests:graphql"];
    return {
      u,
      d,
      historyMs: d("pullRequests") - d("collaborators"),
      historyCalls: history.reduce((n, k) => n + u(k).calls, 0),
      historyPoints: history.reduce((n, k) => n + u(k).points, 0),
      totalCalls: Object.values(r.usage).reduce((n, x) => n + x.calls, 0),
      totalPoints: Object.values(r.usage).reduce((n, x) => n + x.points, 0),
      d1Added: total(r.d1After) - total(r.d1Before),
      objectAdded: total(r.objectAfter) - total(r.objectBefore),
    };
  };
  const stepTable = (r) => {
    const { u, d } = summary(r);
    const step = (name, from, to, keys, records) => {
      const calls = keys.reduce((n, k) => n + u(k).calls, 0);
      const points = keys.reduce((n, k) => n + u(k).points, 0);
      return { name, ms: to - from, calls, points, records };
    };
    const history =
      r.api === "graphql"
        ? "pull requests (GraphQL: 50 repositories a query)"
        : "pull requests (REST: list pages + one per merged)";
    const steps = [
      step("installation, repositories", 0, d("repositories"), ["tokens", "installation", "repositories"], size.repos),
      step("members", d("repositories"), d("members"), ["members"], size.members),
      step("collaborators (private repositories)", d("members"), d("collaborators"), ["collaborators"], privates),
      step(
        history,
        d("collaborators"),
        d("pullRequests"),
        ["pullRequests:list", "pullRequests:single", "pullRequests:graphql"],
        size.pulls,
      ),
      step("finish", d("pullRequests"), r.wall, [], undefined),
    ];
    const s = summary(r);
    const rows = steps.map((x) => [
      x.name,
      x.records === undefined ? "–" : n(x.records),
      fmt(x.ms / 1000, 1),
      x.records ? fmt(x.ms / x.records, 2) : "–",
      n(x.calls),
      n(x.points),
    ]);
    rows.push(["**total**", "", `**${fmt(r.wall / 1000, 1)}**`, "", `**${n(s.totalCalls)}**`, `**${n(s.totalPoints)}**`]);
    return table(["Step", "Records", "Wall time (s)", "ms per record", "GitHub calls", "Rate points"], rows);
  };
  const budget = Math.min(12_500, 5000 + 50 * Math.max(0, size.repos - 20) + 50 * Math.max(0, size.members - 20));
  const [load1, load5] = loadavg();
  const label = { graphql: "GraphQL (the default)", rest: "REST (GitHub without GraphQL: the fallback)" };

  const text = [
    `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench:sync\`${isFull ? "" : ` at ${n(size.members)} members, ${n(size.repos)} repositories, ${n(size.pulls)} pull requests`} ` +
      `under \`wrangler dev\` (127.0.0.1, local Workflows, D1 and Durable Objects) against the fake GitHub ` +
      `(test/fake-github/, in the script's process; every REST answer validated against GitHub's OpenAPI description, ` +
      `every GraphQL query validated against and executed on GitHub's published schema). ` +
      `Organization: ${n(size.members)} members (${n(org.admins)} admins), ${n(size.repos)} repositories (${n(privates)} private, ` +
      `3 collaborators each), ${n(size.pulls)} pull requests merged within the ${BACKFILL_DAYS}-day backfill window ` +
      `(40% in the largest 1% of repositories). The sync ran ${APIS.length === 2 ? "twice, each on fresh local state: the history through REST (the fake answering `POST /graphql` 404, so the sync takes its fallback), then through GraphQL" : `once, the history through ${APIS[0] === "graphql" ? "GraphQL" : "REST"}`}. ` +
      `Machine: ${cpus().length} cores shared with three other engineers' work; ` +
      `load average ${fmt(load1, 1)} (1 min) / ${fmt(load5, 1)} (5 min) at the end of the run, so the times are ` +
      "upper bounds of this machine, not of Cloudflare, and vary by tens of percent between runs. Wall time per step is from `POST .../sync` to the poll " +
      "(every 250 ms) that first showed the step `done`; GitHub calls and rate points are counted by the fake per " +
      "request (a point for each REST request with the installation token, the App JWT's two calls none; a GraphQL " +
      "query the cost the fake computed by GitHub's formula, which it reports in `rateLimit { cost }`). " +
      '"ms per record": the step\'s wall time over what it stored (repositories, members, private repositories, ' +
      "pull requests).",
    "",
  ];
  if (APIS.length === 2) {
    const rs = summary(results.rest);
    const gs = summary(results.graphql);
    const ratio = (a, b) => (b > 0 ? `${fmt(a / b, a / b >= 10 ? 0 : 1)}×` : "–");
    text.push(
      "**The history, REST against GraphQL** (measured, the same organization):",
      "",
      table(
        ["", "REST", "GraphQL", "REST / GraphQL"],
        [
          [
            "history step: wall time (s)",
            fmt(rs.historyMs / 1000, 1),
            fmt(gs.historyMs / 1000, 1),
            ratio(rs.historyMs, gs.historyMs),
          ],
          ["history step: GitHub calls", n(rs.historyCalls), n(gs.historyCalls), ratio(rs.historyCalls, gs.historyCalls)],
          ["history step: rate points", n(rs.historyPoints), n(gs.historyPoints), ratio(rs.historyPoints, gs.historyPoints)],
          [
            "whole sync: wall time (s)",
            fmt(results.rest.wall / 1000, 1),
            fmt(results.graphql.wall / 1000, 1),
            ratio(results.rest.wall, results.graphql.wall),
          ],
          ["whole sync: GitHub calls", n(rs.totalCalls), n(gs.totalCalls), ratio(rs.totalCalls, gs.totalCalls)],
          ["whole sync: rate points", n(rs.totalPoints), n(gs.totalPoints), ratio(rs.totalPoints, gs.totalPoints)],
          ["D1 rows added", n(rs.d1Added), n(gs.d1Added), ""],
          ["Durable Object rows added", n(rs.objectAdded), n(gs.objectAdded), ""],
        ],
      ),
      "",
      `REST's history calls include the one refused GraphQL query (404) per step attempt before the fallback (${n(results.rest.fallback)}). ` +
        "The rows written are the same either way: the history is stored through the same event write path. Only the " +
        "history step differs between the two runs; the other steps do the same work, and their times differ with the " +
        "machine's load (the members step above all), so the whole sync's wall-time ratio is the loosest figure here.",
      "",
    );
  }
  for (const api of APIS) {
    const r = results[api];
    const s = summary(r);
    text.push(
      `**${label[api]}**, per step:`,
      "",
      stepTable(r),
      "",
      `D1 rows added: ${n(s.d1Added)} (${changed(r.d1Before, r.d1After)}); the organization's Durable Object: ${n(s.objectAdded)} ` +
        `(${changed(r.objectBefore, r.objectAfter)}). Counted in the local SQLite files before and after: rows added, not ` +
        "D1's `rows_written` (which also counts index entries and rewrites). Check: members, admins, repositories, " +
        "private repositories, collaborators, pull requests and their lines added equal what was seeded" +
        `${failed ? " (FAILED)" : ""}; answers other than 2xx from the fake: ${r.refused}.`,
      "",
    );
  }
  const worst = Math.max(...APIS.map((a) => summary(results[a]).totalPoints));
  const best = Math.min(...APIS.map((a) => summary(results[a]).totalPoints));
  text.push(
    `**Rate points on real GitHub.** The fake reports GitHub's primary limits but does not enforce them. An App installation on an ` +
      "organization gets 5,000 points per hour plus 50 per repository and 50 per user beyond 20 of each, at most " +
      `12,500, for REST and as much again for GraphQL (GitHub's documentation, "Rate limits for the REST API" and "for the GraphQL API"): ${n(budget)} per hour for this organization. ` +
      (worst > budget
        ? `The REST way's ${n(worst)} points need at least ${fmt(worst / budget, 1)} hours there: the sync sleeps in its ` +
          'Workflow until GitHub\'s reset (docs/architecture.md, "Installation sync"), so on GitHub the budget, not ' +
          `the service, sets that sync's time. ${APIS.includes("graphql") ? `With GraphQL the sync's ${n(best)} points (REST for repositories, members and collaborators; GraphQL for the history, from its own budget) fit in one hour.` : ""}`
        : `Its ${n(worst)} points fit in one hour's budget.`),
  );
  const out = text.join("\n");
  log(`\n${out}\n`);
  if (!opts.smoke && !opts["no-write"] && !failed && APIS.length === 2) {
    writeSection("docs/performance.md", "bench:sync", `## Installation sync\n\n${out}`);
    log("Written to docs/performance.md.");
  }
  log(`Run took ${fmt((performance.now() - startedAll) / 1000, 1)} s in all.`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  if (server) await server.stop();
  await new Promise((resolve) => {
    github.server.close(() => resolve());
    github.server.closeAllConnections();
  });
  if (opts.smoke) rmSync(persistTo, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
