#!/usr/bin/env node
/**
 * npm run bench:members [-- --smoke] [--seconds N] [--no-write]
 *
 * Starts `wrangler dev` on a fresh local state, registers organizations and members through the
 * control plane, and measures with autocannon: GET /healthz (the baseline), GET member at
 * concurrency 1 and 10, and guarded PATCHes: one client, ten clients toggling different members
 * of one organization, and fifty clients on fifty organizations. Every client toggles its own
 * member's seat with the guard it expects, so every answer must be 200; afterwards each member's
 * seat must equal its start value flipped once per successful PATCH. A last case has ten clients
 * contend for one member: stale guards get 409 (expected) and the clients continue with the
 * current value from the answer, as a client would after re-reading.
 *
 * The admin surface (contract section 8): GET the member list of a 5,000-member organization
 * (pages of 100: the first, one from the middle by cursor, and a search that matches few), and a
 * batch PATCH of 100 changes against the same 100 changes as single PATCHes, sent one after the
 * other by one client as a script would (wall time of each, median of several rounds).
 * Prints the tables and writes them to docs/performance.md (not with --smoke).
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  fmt,
  interleave,
  load,
  migrateLocalD1,
  QUOTAS_ON,
  reportQuotaCost,
  span,
  startWrangler,
  table,
  writeSection,
} from "./lib/bench-common.mjs";
import { controlPlaneClient } from "./lib/control-plane-client.mjs";

const { values: opts } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    seconds: { type: "string" },
    port: { type: "string", default: "8912" },
    "big-members": { type: "string" },
    "no-write": { type: "boolean", default: false },
  },
});
const seconds = Number(opts.seconds ?? (opts.smoke ? 1 : 5));
const perClient = opts.smoke ? 20 : 300;
const ORGS = opts.smoke ? 5 : 50;
/** Members of the large organization whose list is measured. */
const BIG = Number(opts["big-members"] ?? (opts.smoke ? 300 : 5000));
/** Changes per batch, and rounds of "batch vs singles". */
const BATCH = opts.smoke ? 20 : 100;
const ROUNDS = opts.smoke ? 1 : 5;
const persistTo = opts.smoke ? ".bench/members-smoke" : ".bench/members";
const adminToken = `bench-${crypto.randomUUID()}`; // the Worker refuses tokens under 32 characters
const log = (...args) => console.log(...args);

rmSync(persistTo, { recursive: true, force: true });
// Organizations are resolved through the directory in D1 (src/directory/resolve.ts).
log(`Applying D1 migrations to ${persistTo}...`);
await migrateLocalD1(persistTo);
log(`Starting wrangler dev on ${persistTo}...`);
// The runs send far more than the default quota of 1,000 requests per key and window.
const server = await startWrangler({ persistTo, port: Number(opts.port), adminToken, vars: QUOTAS_ON });
/** The GET member request whose cost of quota counting is measured once the main server is stopped. */
let quotaProbe = null;
try {
  const client = controlPlaneClient(server.url, adminToken);
  const caller = "9101";
  // Every organization has its own installation id, as on GitHub (the control plane finds an
  // organization by it: a shared id would make them all one organization).
  let installations = 0;
  const org = (plan) => ({
    installationId: ++installations,
    installedAt: "2025-01-01T00:00:00Z",
    plan,
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 1000 },
  });
  const member = (login) => ({
    githubLogin: login,
    workEmail: `${login}@example.com`,
    role: "member",
    seat: false,
    isBot: false,
  });

  log("Registering organizations and members...");
  await client.putUser(caller, { githubLogin: "bench-admin" });
  await client.putOrganization("bench-one", org("team"));
  await client.putMember("bench-one", caller, { ...member("bench-admin"), role: "admin" });
  const oneOrgMembers = Array.from({ length: 12 }, (_, i) => String(20000 + i));
  for (const id of oneOrgMembers) await client.putMember("bench-one", id, member(`m${id}`));
  const manyOrgs = Array.from({ length: ORGS }, (_, i) => ({
    org: `bench-org-${String(i).padStart(2, "0")}`,
    id: String(30000 + i),
  }));
  for (const { org: login, id } of manyOrgs) {
    await client.putOrganization(login, org("pro"));
    await client.putMember(login, caller, { ...member("bench-admin"), role: "admin" });
    await client.putMember(login, id, member(`m${id}`));
  }
  log(`Registering a ${BIG}-member organization and a batch organization...`);
  await client.putOrganization("bench-big", org("team"));
  await client.putMember("bench-big", caller, { ...member("bench-admin"), role: "admin" });
  const bigIds = Array.from({ length: BIG - 1 }, (_, i) => String(100000 + i));
  for (let i = 0; i < bigIds.length; i += 8) {
    // Logins in a random-looking order, mixed case, so the list order is not the insertion order.
    await Promise.all(
      bigIds.slice(i, i + 8).map((id) => client.putMember("bench-big", id, member(`${(Number(id) * 7919) % 10007}-M${id}`))),
    );
  }
  await client.putOrganization("bench-batch", org("team"));
  await client.putMember("bench-batch", caller, { ...member("bench-admin"), role: "admin" });
  const batchIds = Array.from({ length: BATCH }, (_, i) => String(200000 + i));
  for (const id of batchIds) await client.putMember("bench-batch", id, member(`b${id}`));

  const { key } = await client.createKey(caller, "members");
  const auth = { Authorization: `Bearer ${key}` };

  const measure = async (path, connections) => {
    await load({ url: server.url, path, connections, ...span(opts.smoke, 1), headers: auth }); // warm-up
    return load({ url: server.url, path, connections, ...span(opts.smoke, seconds), headers: auth });
  };

  /**
   * Each client toggles one member's seat and always sends the guard it expects. The toggles
   * that answered 200 are counted per member for the final-state check.
   */
  const toggles = new Map();
  const patchRun = async (targets) => {
    let next = 0;
    const setupClient = (c) => {
      const target = targets[next++ % targets.length];
      const request = () => ({
        method: "PATCH",
        path: `/api/v1/organizations/${target.org}/members/${target.id}`,
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ seat: !target.seat, expectedSeat: target.seat }),
      });
      c.setRequests([request()]);
      c.on("response", (status) => {
        if (status === 200) {
          target.seat = !target.seat;
          toggles.set(target.key, (toggles.get(target.key) ?? 0) + 1);
        }
        c.setRequests([request()]);
      });
    };
    const first = targets[0];
    return load({
      url: server.url,
      path: `/api/v1/organizations/${first.org}/members/${first.id}`,
      connections: targets.length,
      amount: targets.length * perClient,
      method: "PATCH",
      setupClient,
    });
  };
  /**
   * Contention: every client toggles the same member. A client whose guard is stale gets 409 and
   * takes the current value from the answer's details, as a real client would after re-reading.
   */
  const contentionRun = async (target, connections) => {
    let conflicts = 0;
    const setupClient = (c) => {
      let believed = target.seat;
      let lastBody = "";
      const request = () => ({
        method: "PATCH",
        path: `/api/v1/organizations/${target.org}/members/${target.id}`,
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ seat: !believed, expectedSeat: believed }),
      });
      c.setRequests([request()]);
      c.on("body", (b) => {
        lastBody = b.toString();
      });
      c.on("response", (status) => {
        if (status === 200) {
          believed = !believed;
          toggles.set(target.key, (toggles.get(target.key) ?? 0) + 1);
        } else if (status === 409) {
          conflicts++;
          const current = /current value is (true|false)/.exec(lastBody)?.[1];
          if (current) believed = current === "true";
        }
        c.setRequests([request()]);
      });
    };
    const result = await load({
      url: server.url,
      path: `/api/v1/organizations/${target.org}/members/${target.id}`,
      connections,
      amount: connections * perClient,
      method: "PATCH",
      expect: [200, 409],
      setupClient,
    });
    return { ...result, conflicts };
  };
  const targetOf = (orgLogin, id) => ({ org: orgLogin, id, key: `${orgLogin}/${id}`, seat: false, start: false });

  log("Measuring GET /healthz (baseline)...");
  const base1 = await measure("/healthz", 1);
  const base10 = await measure("/healthz", 10);
  const base50 = await measure("/healthz", ORGS);
  log("Measuring GET member...");
  const get1 = await measure(`/api/v1/organizations/bench-one/members/${oneOrgMembers[0]}`, 1);
  quotaProbe = { path: `/api/v1/organizations/bench-one/members/${oneOrgMembers[0]}`, headers: auth };
  const get10 = await measure(`/api/v1/organizations/bench-one/members/${oneOrgMembers[0]}`, 10);
  log("Measuring PATCH: one client...");
  const soloTargets = [targetOf("bench-one", oneOrgMembers[0])];
  const patch1 = await patchRun(soloTargets);
  log("Measuring PATCH: ten clients, one organization...");
  const tenTargets = oneOrgMembers.slice(1, 11).map((id) => targetOf("bench-one", id));
  const patch10 = await patchRun(tenTargets);
  log(`Measuring PATCH: ${ORGS} clients, ${ORGS} organizations...`);
  const manyTargets = manyOrgs.map(({ org: o, id }) => targetOf(o, id));
  const patch50 = await patchRun(manyTargets);

  log("Measuring PATCH: ten clients contending for one member...");
  const contended = targetOf("bench-one", oneOrgMembers[11]);
  const contention = await contentionRun(contended, 10);

  log(`Measuring the member list of ${BIG} members (pages of 100)...`);
  const listPath = "/api/v1/organizations/bench-big/members?limit=100";
  const firstPage = await (await fetch(`${server.url}${listPath}`, { headers: auth })).json();
  // A page from the middle: walk to it once, then measure that cursor.
  let middleCursor = firstPage.nextCursor;
  for (let i = 1; i < Math.floor(BIG / 200) && middleCursor; i++) {
    middleCursor = (await (await fetch(`${server.url}${listPath}&cursor=${middleCursor}`, { headers: auth })).json()).nextCursor;
  }
  const list1 = await measure(listPath, 1);
  const listMiddle = await measure(`${listPath}&cursor=${middleCursor}`, 1);
  const listSearch = await measure(`${listPath}&search=M10001`, 1);
  const list10 = await measure(listPath, 10);
  const listOk = firstPage.data?.length === 100 && firstPage.seats?.used === 0;

  log(`Measuring a batch of ${BATCH} changes against ${BATCH} single PATCHes (${ROUNDS} rounds)...`);
  const send = async (path, body) => {
    const res = await fetch(`${server.url}${path}`, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  };
  const singlesMs = [];
  const batchMs = [];
  let batchUnexpected = 0;
  let seat = false;
  for (let round = 0; round < ROUNDS; round++) {
    // Singles turn every seat on, the batch turns them all off again (same changes, same guards).
    let started = performance.now();
    for (const id of batchIds) {
      if ((await send(`/api/v1/organizations/bench-batch/members/${id}`, { seat: !seat, expectedSeat: seat })) !== 200) {
        batchUnexpected++;
      }
    }
    singlesMs.push(performance.now() - started);
    seat = !seat;
    started = performance.now();
    const changes = batchIds.map((id) => ({ githubUserId: id, seat: !seat, expectedSeat: seat }));
    if ((await send("/api/v1/organizations/bench-batch/members", { changes })) !== 200) batchUnexpected++;
    batchMs.push(performance.now() - started);
    seat = !seat;
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const singles = median(singlesMs);
  const batched = median(batchMs);
  const batchReport = table(
    ["case", "changes", "wall ms (median)", "per change ms", "singles ÷ batch"],
    [
      [`${BATCH} single PATCHes, one after the other`, String(BATCH), fmt(singles), fmt(singles / BATCH), "1.00x"],
      ["one batch PATCH", String(BATCH), fmt(batched), fmt(batched / BATCH), `${fmt(singles / batched, 1)}x`],
    ],
  );

  // Final state: every member's seat flipped once per successful PATCH.
  let wrongState = 0;
  for (const t of [...soloTargets, ...tenTargets, ...manyTargets, contended]) {
    const res = await fetch(`${server.url}/api/v1/organizations/${t.org}/members/${t.id}`, { headers: auth });
    const m = await res.json();
    const expected = (toggles.get(t.key) ?? 0) % 2 === 1 ? !t.start : t.start;
    if (m.seat !== expected) wrongState++;
  }
  const successes = [...toggles.values()].reduce((a, b) => a + b, 0);

  const ratio = (r, b) => (b.p50 > 0 ? `${(r.p50 / b.p50).toFixed(2)}x` : "–");
  const row = (name, conns, r, b) => [
    name,
    String(conns),
    fmt(r.p50),
    fmt(r.p99),
    fmt(r.rps, 0),
    ratio(r, b),
    String(r.unexpected),
  ];
  const rows = [
    row("GET /healthz (baseline)", 1, base1, base1),
    row("GET /healthz (baseline)", 10, base10, base10),
    row("GET /healthz (baseline)", ORGS, base50, base50),
    row("GET member", 1, get1, base1),
    row("GET member", 10, get10, base10),
    row("PATCH seat toggle, one client", 1, patch1, base1),
    row("PATCH seat toggle, 10 members of one organization", 10, patch10, base10),
    row(`PATCH seat toggle, ${ORGS} organizations in parallel`, ORGS, patch50, base50),
    [
      ...row("PATCH seat toggle, 10 clients contending for one member", 10, contention, base10).slice(0, 6),
      `${contention.unexpected} (${contention.conflicts} expected 409s)`,
    ],
    row(`GET member list of ${BIG}, first page of 100`, 1, list1, base1),
    row(`GET member list of ${BIG}, page of 100 from the middle (cursor)`, 1, listMiddle, base1),
    row(`GET member list of ${BIG}, search matching few`, 1, listSearch, base1),
    row(`GET member list of ${BIG}, first page of 100`, 10, list10, base10),
  ];
  const report = table(
    ["case", "connections", "p50 ms", "p99 ms", "req/s", "p50 vs /healthz at same concurrency", "non-200"],
    rows,
  );
  const unexpected =
    [get1, get10, patch1, patch10, patch50, contention, list1, listMiddle, listSearch, list10].reduce(
      (n, r) => n + r.unexpected,
      0,
    ) + batchUnexpected;
  log(`\n${report}\n`);
  for (const [name, r] of Object.entries({
    get1,
    get10,
    patch1,
    patch10,
    patch50,
    contention,
    list1,
    listMiddle,
    listSearch,
    list10,
  })) {
    if (r.unexpected > 0) log(`${name}: status codes ${JSON.stringify(r.statusCodes)}`);
  }
  log(`${batchReport}\n`);
  log(`Successful PATCHes: ${successes}; members whose final seat differs from the sum of their changes: ${wrongState}`);

  // Contract section 18 (issue 29): an organization key's verdict is one call to its organization's
  // object, as a person's is one call to theirs. Member GET with each, one client alternating
  // request by request, so both see the same machine at the same moment.
  log("Measuring member GET with an organization key against a personal key (interleaved)...");
  const created = await fetch(`${server.url}/internal/v1/organizations/bench-one/api-keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "members", name: "bench" }),
  });
  if (created.status !== 201) throw new Error(`organization key: ${created.status} ${await created.text()}`);
  const orgKeyAuth = { Authorization: `Bearer ${(await created.json()).key}` };
  const memberPath = `/api/v1/organizations/bench-one/members/${oneOrgMembers[0]}`;
  const [personalKeyGet, orgKeyGet] = await interleave(
    [
      { url: server.url, path: memberPath, headers: auth },
      { url: server.url, path: memberPath, headers: orgKeyAuth },
    ],
    span(opts.smoke, seconds),
  );
  const keyRatio = orgKeyGet.p50 / personalKeyGet.p50;
  const keyReport = table(
    ["Key (member GET, c=1, interleaved)", "p50 ms", "p99 ms", "requests"],
    [
      ["personal key (verdict in the UserObject)", fmt(personalKeyGet.p50), fmt(personalKeyGet.p99), personalKeyGet.requests],
      ["organization key (verdict in the OrganizationObject)", fmt(orgKeyGet.p50), fmt(orgKeyGet.p99), orgKeyGet.requests],
    ],
  );
  log(`${keyReport}
`);

  const targets = [
    [
      `member GET with an organization key within 1.05x of a personal key, interleaved (${fmt(keyRatio)}x: ${fmt(orgKeyGet.p50)} vs ${fmt(personalKeyGet.p50)} ms)`,
      keyRatio <= 1.05,
    ],
    [`GET member p50 at c=1 within 2x the baseline (${fmt(get1.p50)} vs ${fmt(base1.p50)} ms)`, get1.p50 <= 2 * base1.p50],
    [`PATCH p50 at c=1 within 3x the baseline (${fmt(patch1.p50)} vs ${fmt(base1.p50)} ms)`, patch1.p50 <= 3 * base1.p50],
    [`no responses other than 200 and the contention case's expected 409s (${contention.conflicts})`, unexpected === 0],
    ["final state equals the sum of the successful changes", wrongState === 0],
    [
      `member list page of 100 (${BIG} members) p50 at c=1 within 3x the baseline (${fmt(list1.p50)} vs ${fmt(base1.p50)} ms), middle page too (${fmt(listMiddle.p50)} ms)`,
      list1.p50 <= 3 * base1.p50 && listMiddle.p50 <= 3 * base1.p50,
    ],
    ["the first list page holds 100 members and the seat summary", listOk],
    [
      `one batch of ${BATCH} at least 10x faster than ${BATCH} single PATCHes (${fmt(singles / batched, 1)}x)`,
      singles >= 10 * batched,
    ],
  ];
  const targetLines = targets.map(([t, ok]) => `- ${ok ? "met" : "MISSED"}: ${t}`).join("\n");
  log(`Targets:\n${targetLines}`);

  if (!opts.smoke && !opts["no-write"]) {
    writeSection(
      "docs/performance.md",
      "bench:members",
      [
        `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:members\` on this machine (2 cores), wrangler dev with X_LOCAL_OBSERVABILITY=false.`,
        `GET cases: autocannon for ${seconds} s after a 1 s warm-up. PATCH cases: ${perClient} requests per client, each client toggling its own`,
        "member's seat with the guard it expects (so every answer should be 200), every PATCH a full transaction in the organization's Durable Object.",
        "In the contention case ten clients toggle one member; a client with a stale guard gets 409 and continues with the current value from its details.",
        `List cases: a ${BIG}-member organization, limit=100 (the middle page by its cursor; the search matches a handful of logins, so it reads every row).`,
        `Batch case: ${BATCH} seat changes as ${BATCH} single PATCHes sent one after the other by one Node fetch client (keep-alive),`,
        `then the same ${BATCH} changes back as one batch PATCH; wall time, median of ${ROUNDS} rounds.`,
        "",
        report,
        "",
        batchReport,
        "",
        keyReport,
        "",
        `Successful PATCHes: ${successes}. Members whose final seat differs from their start value flipped once per successful PATCH: ${wrongState}.`,
        "",
        "Targets:",
        targetLines,
      ].join("\n"),
    );
    log("\nWritten to docs/performance.md");
  }
  process.exitCode = unexpected === 0 && wrongState === 0 && listOk ? 0 : 1;
} finally {
  await server.stop();
}

// Issue 8: what the exact quota costs. Copies of the same data, servers with quotas off and on side by side, requests interleaved.
if (quotaProbe && process.exitCode !== 1) {
  await reportQuotaCost({
    persistTo,
    port: Number(opts.port),
    adminToken,
    label: "GET member",
    ...quotaProbe,
    seconds,
    smoke: opts.smoke,
    log,
    section: "bench:members-quota",
    script: "npm run bench:members",
    write: !opts.smoke && !opts["no-write"],
  });
}
