import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { SUMMARY_LIMITS, type SummaryLimits, summarizeGroupings } from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import { buildSummaryDays, buildSummaryMonths, wholeMonths } from "../../src/storage/summary-days";
import { MONTH_BLOCK, type PartRow } from "../../src/storage/summary-rows";
import { summaryStatement } from "../../src/storage/summary-statement";
import { appCall, signIn } from "./app-helpers";
import {
  addMember,
  admin,
  adminOk,
  call,
  createKey,
  createOrg,
  createUser,
  moveToOtherShard,
  postEventsOk,
  seededRandom,
  shardDb,
  unique,
} from "./helpers";
import { eventsOf, type Pr, pr, VERSION } from "./summary-attack-data";
import { type ExportRow, exportRows, type GroupBy, referenceAnswer, referenceSummary } from "./summary-reference";

/**
 * An outside review's attacks on the listed repositories' month blocks (issue 33: `summary_months`,
 * migration 0014, `buildSummaryMonths`, the statement's `withMonths` branches, `foldedBlocks`,
 * `addMonth`). The oracle is contract sections 12 and 21: the summary with a `repo` list is exactly
 * the export's rows with the same list (every page), grouped. Every summary is asked twice (the
 * first builds blocks, the second reads them); writes come between. A failing test is a finding.
 */

type Row = ExportRow;
const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);
const TIME: GroupBy[] = ["day", "week", "month"];

type Get = (path: string) => Promise<unknown>;
type Window = { start: number; end: number };

async function adminOrg(repos: string[]) {
  const org = await createOrg(unique("mbatk"), { plan: "pro", installedAt: "2024-01-01T00:00:00Z" });
  const user = await createUser();
  await addMember(org, user, "admin");
  for (const repo of repos) await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/${repo}`, { private: false });
  const { key } = await createKey(user, "analytics");
  const get: Get = async (path) => {
    SUMMARY_PLANS.clear(); // the blocks' statement, always (`SummaryPlans` would walk a window seen to hold few)
    const res = await call(path, { headers: { Authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${await res.text()}`);
    return res.json();
  };
  return { org, get, user };
}

const query = (org: string, w: Window, repos: string) =>
  `org=${org}&repo=${encodeURIComponent(repos)}&startDate=${encodeURIComponent(iso(w.start))}&endDate=${encodeURIComponent(iso(w.end))}`;

/** Each time grouping's summary (asked twice: building, then reading blocks) equals the export's rows grouped. */
async function agrees(get: Get, org: string, w: Window, repos: string, label = "", groupBys: GroupBy[] = TIME): Promise<Row[]> {
  const q = query(org, w, repos);
  const rows = await exportRows<Row>(get, q, { perPage: 50, maxPages: 200 });
  for (const groupBy of groupBys) {
    if (groupBy === "day" && w.end - w.start + 1 > 400 * DAY) continue;
    const want = referenceAnswer(org, rows, groupBy, w.start, w.end);
    for (const pass of ["first", "second"])
      expect(await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`), `${label} repo=${repos} ${groupBy} ${pass}`).toEqual(
        want,
      );
  }
  return rows;
}

const keysOf = (repos: string) => [...new Set(repos.split(",").map((r) => r.trim().toLowerCase()))].sort();

/** The storage's figures for a list under other limits, against the export's rows grouped (groups with rows only). */
async function storageAgrees(get: Get, org: string, w: Window, repos: string, limits: Partial<SummaryLimits>, label = "") {
  const rows = await exportRows<Row>(get, query(org, w, repos), { perPage: 50, maxPages: 200 });
  const figures = await summarizeGroupings(
    await shardDb(org),
    {
      orgKey: org,
      repoKeys: keysOf(repos),
      authorKeys: null,
      accessibleRepoKeys: null,
      start: w.start,
      end: w.end,
      groupBys: TIME,
    },
    { ...SUMMARY_LIMITS, ...limits },
  );
  TIME.forEach((groupBy, i) => {
    const ref = referenceSummary(rows, groupBy, w.start, w.end);
    const got = figures.groupings[i];
    expect(
      [...(got?.groups ?? [])].sort((a, b) => (a.key < b.key ? -1 : 1)),
      `${label} ${repos} ${groupBy} (storage)`,
    ).toEqual(ref.groups.filter((g) => g.pullRequests > 0));
    expect(got?.totals, `${label} ${repos} ${groupBy} totals (storage)`).toEqual(ref.totals);
  });
  return figures;
}

async function monthRows(org: string): Promise<{ rk: string; month: number; n: number; lo: number | null }[]> {
  const { results } = await (await shardDb(org))
    .prepare("SELECT repo_key AS rk, month, pull_requests AS n, lo FROM summary_months WHERE org_key = ?1 ORDER BY rk, month")
    .bind(org)
    .all<{ rk: string; month: number; n: number; lo: number | null }>();
  return results;
}

/** How many pull requests a listed summary reads from blocks (days or months) now. */
async function fromBlocks(org: string, w: Window, repos: string): Promise<number> {
  const figures = await summarizeGroupings(await shardDb(org), {
    orgKey: org,
    repoKeys: keysOf(repos),
    authorKeys: null,
    accessibleRepoKeys: null,
    start: w.start,
    end: w.end,
    groupBys: ["week"],
  });
  return figures.fromBlocks;
}

/**
 * How many pull requests the statement of a listed summary sends as month blocks now (day blocks
 * read as counts, so that none is folded into a row of a month's shape): the attacks are attacks
 * on month blocks only if months serve them.
 */
async function monthsServed(org: string, w: Window, repos: string): Promise<number> {
  const { sql, params } = summaryStatement(
    {
      orgKey: org,
      repoKeys: keysOf(repos),
      authorKeys: null,
      accessibleRepoKeys: null,
      start: w.start,
      end: w.end,
      groupBys: ["week"],
    },
    { ...SUMMARY_LIMITS, bucketsFrom: 0, bucketsPerBlock: 0 },
  );
  const { results } = await (await shardDb(org))
    .prepare(sql)
    .bind(...params)
    .all<PartRow>();
  return results.filter((r) => r.grouping === MONTH_BLOCK).reduce((n, r) => n + r.candidates, 0);
}

const OCT_NOV = { start: at("2026-10-01T00:00:00.000Z"), end: at("2026-11-30T23:59:59.999Z") };
const SEP_DEC = { start: at("2026-09-01T00:00:00.000Z"), end: at("2026-12-31T23:59:59.999Z") };

function boundaryData(): Pr[] {
  return [
    pr("api", 1, "2026-10-01T00:00:00.000Z", { author: "alice", ai: 4 }),
    pr("api", 2, "2026-10-15T10:00:00.000Z", { author: "bob", findings: [{ at: at("2026-10-15T08:00:00Z"), fixed: true }] }),
    pr("api", 3, "2026-10-31T23:59:59.999Z", { author: "carol" }),
    pr("api", 4, "2026-11-01T00:00:00.000Z", { author: "alice" }),
    pr("api", 5, "2026-11-30T23:59:59.999Z", { author: "dave" }),
    pr("web", 1, "2026-10-31T23:00:00.000Z", { author: "bob", ai: 2 }),
    pr("web", 2, "2026-11-01T00:00:01.000Z", { author: "erin" }),
    pr("Web", 3, "2026-11-16T12:00:00.000Z", { author: "alice" }),
    pr("docs", 1, "2026-10-20T12:00:00.000Z", { author: "carol" }),
    // Reviewed in the window, merged outside it (their own buckets).
    pr("api", 8, "2026-09-30T23:59:59.999Z", { ageH: 1, reviewH: 30 }),
    pr("web", 9, "2026-12-01T00:00:00.000Z", { ageH: 200, reviewH: 2 }),
  ];
}

const LISTS = ["api", "api,web", "web,WEB, Web ,web", "docs,web,api"];

describe("attack: the listed repositories' month blocks against the export", () => {
  it("merges moved across the Oct 31 / Nov 1 boundary after the months were built", { timeout: 180_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web", "docs"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "before");
    const built = await monthRows(org);
    expect(built.filter((m) => m.lo !== null).map((m) => m.rk)).toEqual(expect.arrayContaining(["api", "web", "docs"]));
    expect(await fromBlocks(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
    const later = "2026-12-05T00:00:00.000Z";
    await postEventsOk(
      eventsOf(org, [
        { ...pr("api", 3, "2026-11-01T00:00:00.000Z", { author: "carol" }), version: later },
        { ...pr("api", 4, "2026-10-31T23:59:59.999Z", { author: "alice" }), version: later },
        { ...pr("web", 2, "2026-10-31T23:59:59.999Z", { author: "erin" }), version: later },
        { ...pr("docs", 1, "2026-12-01T00:00:00.000Z", { author: "carol", ageH: 800, reviewH: 3 }), version: later },
      ]),
    );
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "after");
    for (const repos of LISTS) await agrees(get, org, SEP_DEC, repos, "wider");
    expect(await fromBlocks(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
  });

  it("a month's first or last day holds a pull request reviewed before or after the window", { timeout: 180_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    // Built over a wider window first: Oct and Nov whole months, every pull request inside.
    for (const repos of ["api", "api,web"]) await agrees(get, org, SEP_DEC, repos, "wide");
    // Reviewed Sep 30 and Oct 2 (the first before Oct), merged Oct 1; reviewed Nov 30 and Dec 2, merged Nov 30.
    await postEventsOk(
      eventsOf(org, [
        { ...pr("api", 20, "2026-10-01T12:00:00.000Z"), reviews: [at("2026-09-30T22:00:00Z"), at("2026-10-02T00:00:00Z")] },
        { ...pr("web", 21, "2026-11-30T12:00:00.000Z"), reviews: [at("2026-11-30T11:00:00Z"), at("2026-12-02T00:00:00Z")] },
        // A finding after the window on a pull request merged inside it.
        pr("api", 22, "2026-11-15T12:00:00.000Z", { findings: [{ at: at("2026-12-03T00:00:00Z"), fixed: true }] }),
      ]),
    );
    for (const repos of ["api", "api,web", "web"]) {
      await agrees(get, org, SEP_DEC, repos, "wide after");
      await agrees(get, org, OCT_NOV, repos, "exact months");
      // Windows a millisecond inside and outside the months' edges.
      await agrees(get, org, { start: OCT_NOV.start + 1, end: OCT_NOV.end - 1 }, repos, "ms inside");
      await agrees(get, org, { start: OCT_NOV.start - 1, end: OCT_NOV.end + 1 }, repos, "ms outside");
      await agrees(get, org, { start: at("2026-10-01T00:00:00.000Z"), end: at("2026-10-31T23:59:59.999Z") }, repos, "october");
    }
  });

  it("a leap February, empty months between others, and the epoch's first month", { timeout: 180_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    await postEventsOk(
      eventsOf(org, [
        pr("api", 1, "2028-02-28T23:59:59.999Z", { author: "alice" }),
        pr("api", 2, "2028-02-29T00:00:00.000Z", { author: "bob" }),
        pr("api", 3, "2028-02-29T23:59:59.999Z", { author: "carol" }),
        pr("api", 4, "2028-03-01T00:00:00.000Z", { author: "dave" }),
        pr("web", 1, "2028-05-10T10:00:00.000Z", { author: "erin" }),
        pr("api", 5, "2028-07-31T23:59:59.999Z", { author: "erin" }),
        pr("api", 6, "1970-01-01T12:00:00.000Z", { ageH: 11, reviewH: 1 }),
        pr("web", 7, "1970-01-31T23:59:59.999Z", { ageH: 11, reviewH: 1 }),
        pr("web", 8, "1970-02-01T00:00:00.000Z", { ageH: 11, reviewH: 1 }),
      ]),
    );
    const LEAP = { start: at("2028-01-01T00:00:00.000Z"), end: at("2028-08-31T23:59:59.999Z") };
    const FEB = { start: at("2028-02-01T00:00:00.000Z"), end: at("2028-02-29T23:59:59.999Z") };
    const EPOCH = { start: 0, end: at("1970-03-31T23:59:59.999Z") };
    for (const repos of ["api", "api,web", "web"]) {
      await agrees(get, org, LEAP, repos, "leap");
      await agrees(get, org, FEB, repos, "february");
      await agrees(get, org, EPOCH, repos, "epoch");
    }
    expect((await monthRows(org)).some((m) => m.month === Date.UTC(2028, 1, 1) / DAY && m.lo !== null)).toBe(true);
    await postEventsOk(
      eventsOf(org, [
        { ...pr("api", 3, "2028-03-01T00:00:00.000Z", { author: "carol" }), version: "2026-12-01T00:00:00.000Z" },
        pr("web", 9, "2028-04-15T10:00:00.000Z", { author: "zed" }),
        { ...pr("web", 7, "1970-02-01T00:00:00.000Z", { ageH: 11, reviewH: 1 }), version: "2026-12-01T00:00:00.000Z" },
      ]),
    );
    for (const repos of ["api", "api,web", "web"]) {
      await agrees(get, org, LEAP, repos, "leap after");
      await agrees(get, org, EPOCH, repos, "epoch after");
    }
    expect(await monthsServed(org, LEAP, "api,web")).toBeGreaterThan(0);
    expect(await monthsServed(org, FEB, "api")).toBe(2);
    expect(await monthsServed(org, EPOCH, "web")).toBeGreaterThan(0);
  });

  it("the last months before the latest instant", { timeout: 120_000 }, async () => {
    const { org, get } = await adminOrg(["api"]);
    await postEventsOk(
      eventsOf(org, [
        pr("api", 1, "9999-11-30T23:59:59.999Z", { ageH: 10, reviewH: 1 }),
        pr("api", 2, "9999-12-01T00:00:00.000Z", { ageH: 10, reviewH: 1 }),
        pr("api", 3, "9999-12-31T20:00:00.000Z", { ageH: 10, reviewH: 1 }),
      ]),
    );
    const END = { start: at("9999-10-01T00:00:00.000Z"), end: at("9999-12-31T23:59:59.999Z") };
    await agrees(get, org, END, "api", "end of time");
    await postEventsOk(eventsOf(org, [pr("api", 4, "9999-12-15T20:00:00.000Z", { ageH: 10, reviewH: 1 })]));
    await agrees(get, org, END, "api", "end of time after");
    expect(await monthsServed(org, END, "api")).toBe(4);
  });

  it("renames into and out of a listed repository after its months were built", { timeout: 180_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web", "docs"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "before");
    expect((await monthRows(org)).length).toBeGreaterThan(0);
    // web's rows into api (numbers 1..3 collide with api's, 9 does not), then docs's into web.
    await moveRows(await shardDb(org), { orgKey: org, repo: "web" }, { orgKey: org, repo: "api" });
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "web into api");
    await moveRows(await shardDb(org), { orgKey: org, repo: "docs" }, { orgKey: org, repo: "Web" });
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "docs into web");
    // A respelling only (same key), then api out to a new name.
    await moveRows(await shardDb(org), { orgKey: org, repo: "api" }, { orgKey: org, repo: "API" });
    await moveRows(await shardDb(org), { orgKey: org, repo: "api" }, { orgKey: org, repo: "core" });
    for (const repos of [...LISTS, "core", "core,api,web"]) await agrees(get, org, OCT_NOV, repos, "api out");
    expect(await fromBlocks(org, OCT_NOV, "core,web")).toBeGreaterThan(0);
    expect(await monthsServed(org, OCT_NOV, "core,web")).toBeGreaterThan(0);
  });

  it("a pull request unmerged, re-reviewed, given a finding, in a served month", { timeout: 180_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    for (const repos of ["api", "api,web"]) await agrees(get, org, OCT_NOV, repos, "before");
    const later = "2026-12-06T00:00:00.000Z";
    const unmerged = eventsOf(org, [{ ...pr("api", 2, "2026-10-15T10:00:00.000Z"), version: later }]).map((e) =>
      (e as { type: string }).type === "pull_request" ? { ...(e as object), mergedAt: null } : e,
    );
    await postEventsOk(unmerged);
    for (const repos of ["api", "api,web"]) await agrees(get, org, OCT_NOV, repos, "unmerged");
    await postEventsOk([
      // A second review inside, then a finding after the window, on pull requests of served months.
      {
        type: "review",
        org,
        repo: "web",
        prNumber: 3,
        reviewId: "r-web-3-1",
        status: "completed",
        completedAt: "2026-11-20T00:00:00Z",
        updatedAt: later,
      },
      {
        type: "finding",
        org,
        repo: "api",
        prNumber: 4,
        findingId: "f-api-4-9",
        createdAt: "2026-12-02T00:00:00Z",
        posted: true,
        aiAddressed: true,
        feedback: null,
        updatedAt: later,
      },
      { type: "ai_authorship", org, repo: "api", prNumber: 1, sourceId: "a-api-1", lines: 40, updatedAt: later },
    ]);
    for (const repos of ["api", "api,web", "web"]) await agrees(get, org, OCT_NOV, repos, "re-reviewed");
  });

  it("a day of more than a hundred pull requests beside small days (folding), and day blocks read as counts", {
    timeout: 240_000,
  }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    const made: Pr[] = [];
    for (let i = 0; i < 130; i++)
      made.push(
        pr("api", 100 + i, Date.UTC(2026, 9, 14, 0, 0, 0) + i * 11 * 60_000, {
          author: i % 2 ? "bob" : "alice",
          ageH: 1 + (i % 13),
          reviewH: 0,
        }),
      );
    for (let d = 10; d <= 31; d++)
      made.push(pr(d % 2 ? "api" : "web", 300 + d, Date.UTC(2026, 9, d, 12), { ageH: d, reviewH: 1 }));
    for (let d = 1; d <= 30; d += 3) made.push(pr("api", 400 + d, Date.UTC(2026, 10, d, 12), { ageH: d + 3, reviewH: 2 }));
    made.push(pr("web", 500, "2026-12-31T23:59:59.999Z"));
    await postEventsOk(eventsOf(org, made));
    const W = { start: at("2026-10-10T00:00:00.000Z"), end: at("2026-12-31T23:59:59.999Z") };
    const W2 = { start: at("2026-10-10T05:00:00.000Z"), end: at("2026-12-31T23:59:59.999Z") };
    for (const repos of ["api", "api,web", "web"]) {
      await agrees(get, org, W, repos, "fold");
      await agrees(get, org, W2, repos, "fold cut");
      // The day blocks read as counts, the months as durations.
      await storageAgrees(get, org, W, repos, { bucketsFrom: 0, bucketsPerBlock: 0 }, "counts");
    }
    expect(await fromBlocks(org, W, "api,web")).toBeGreaterThan(130);
    expect(await monthsServed(org, W, "api,web")).toBeGreaterThan(0);
    await postEventsOk(
      eventsOf(org, [{ ...made[5], merged: Date.UTC(2026, 9, 15, 1), version: "2026-12-07T00:00:00.000Z" } as Pr]),
    );
    for (const repos of ["api", "api,web"]) await agrees(get, org, W, repos, "fold after");
  });

  it("the bound of pull requests read from blocks, and month markers", { timeout: 240_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    const lists = ["api", "api,web"];
    // Markers first (every month over the limit), then served by day blocks.
    for (const repos of lists) await storageAgrees(get, org, OCT_NOV, repos, { monthBlockMax: 1 }, "markers built");
    for (const repos of lists) await storageAgrees(get, org, OCT_NOV, repos, { monthBlockMax: 1 }, "markers read");
    const markers = await monthRows(org);
    expect(markers.filter((m) => m.n > 1).every((m) => m.lo === null)).toBe(true);
    expect(markers.some((m) => m.lo === null)).toBe(true);
    for (const repos of lists) await agrees(get, org, OCT_NOV, repos, "markers");
    // A write to a marked month deletes its marker; built again with the default limit.
    await postEventsOk(eventsOf(org, [pr("api", 30, "2026-11-10T10:00:00.000Z")]));
    for (const repos of lists) await agrees(get, org, OCT_NOV, repos, "after marker");
    // The bound: none, exactly what the blocks hold, one below.
    const served = await fromBlocks(org, OCT_NOV, "api,web");
    expect(served).toBeGreaterThan(0);
    for (const blocksMax of [0, served - 1, served, served + 1])
      await storageAgrees(get, org, OCT_NOV, "api,web", { blocksMax }, `bound ${blocksMax}`);
    for (const repos of lists) await agrees(get, org, OCT_NOV, repos, "after bounds");
  });

  it("a write between the statement and the months' build", { timeout: 180_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    const db = await shardDb(org);
    const q = {
      orgKey: org,
      repoKeys: ["api", "web"],
      authorKeys: null,
      accessibleRepoKeys: null,
      start: OCT_NOV.start,
      end: OCT_NOV.end,
      groupBys: TIME,
    };
    let n = 40;
    const write = async () => {
      n++;
      await postEventsOk(
        eventsOf(org, [
          pr("api", n, "2026-11-12T10:00:00.000Z"),
          {
            ...pr("web", 1, `2026-10-${10 + n - 40}T23:00:00.000Z`, { author: "bob", ai: 2 }),
            version: `2026-12-0${n - 40}T00:00:00.000Z`,
          },
        ]),
      );
    };
    await summarizeGroupings(db, q, SUMMARY_LIMITS, { beforeMedians: write });
    for (const repos of ["api", "api,web", "web"]) await agrees(get, org, OCT_NOV, repos, "raced once");
    // Months built now: a write while the summary reads them, before the (nothing to) build.
    await summarizeGroupings(db, q, SUMMARY_LIMITS, { beforeWalk: write, beforeMedians: write });
    for (const repos of ["api", "api,web", "web"]) await agrees(get, org, OCT_NOV, repos, "raced twice");
    expect(await fromBlocks(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
  });

  it("twenty repositories listed over months, most empty, rows added to some", { timeout: 240_000 }, async () => {
    const names = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, "0")}`);
    const { org, get } = await adminOrg(names);
    await postEventsOk(
      eventsOf(
        org,
        [0, 4, 9, 19].flatMap((i, j) => [
          pr(names[i] as string, 1, `2026-10-${String(1 + j * 7).padStart(2, "0")}T10:00:00.000Z`, {
            author: j % 2 ? "bob" : "alice",
          }),
          pr(names[i] as string, 2, `2026-11-${String(30 - j * 7).padStart(2, "0")}T23:59:59.999Z`, { author: "carol" }),
        ]),
      ),
    );
    const all = names.join(",");
    const shuffled = [...names.slice(10), ...names.slice(0, 10)].map((n, i) => (i % 3 === 0 ? n.toUpperCase() : n)).join(",");
    await agrees(get, org, OCT_NOV, all, "20");
    expect((await monthRows(org)).length).toBe(40);
    await postEventsOk(
      eventsOf(org, [
        pr("r05", 1, "2026-10-31T23:59:59.999Z", { author: "dave" }),
        pr("r12", 1, "2026-11-01T00:00:00.000Z", { author: "dave" }),
        pr("r19", 3, "2026-11-30T23:59:59.999Z", { author: "alice" }),
      ]),
    );
    await agrees(get, org, OCT_NOV, all, "20 after");
    await agrees(get, org, OCT_NOV, shuffled, "20 shuffled");
    await agrees(get, org, SEP_DEC, shuffled, "20 wider");
    expect(await fromBlocks(org, OCT_NOV, all)).toBeGreaterThan(0);
    expect(await monthsServed(org, OCT_NOV, all)).toBeGreaterThan(0);
  });

  for (const seed of [2026]) // 1033 and 7 also held when the attack was written; one seed keeps CI short
    it(`seeded random writes and windows at months' edges, over five months (seed ${seed})`, { timeout: 420_000 }, async () => {
      const { org, get } = await adminOrg(["api", "web", "docs"]);
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
      const starts = [
        Date.UTC(2026, 8, 1),
        Date.UTC(2026, 9, 1),
        Date.UTC(2026, 10, 1),
        Date.UTC(2026, 11, 1),
        Date.UTC(2027, 0, 1),
      ];
      const edges = [0, -1, 1, -12 * HOUR, 12 * HOUR];
      const repos = ["api", "web", "docs", "Web"];
      let version = 0;
      const made = new Map<string, Pr>();
      const randomPr = (n: number): Pr => {
        const edge = next() < 0.3;
        const merged = edge
          ? pick(starts) + pick([0, -1, 1])
          : Date.UTC(2026, 8, 1) + Math.floor(next() * (Date.UTC(2027, 0, 31) - Date.UTC(2026, 8, 1)));
        const created = merged - Math.floor(next() * (next() < 0.2 ? 40 * DAY : 2 * DAY));
        const far = next();
        const review =
          far < 0.1
            ? merged + Math.floor(next() * 20 * DAY)
            : far < 0.2
              ? created - DAY
              : created + Math.floor(next() * (merged - created + 1));
        const reviews = next() < 0.15 ? [review, review + Math.floor(next() * 10 * DAY)] : [review];
        const findings = next() < 0.2 ? [{ at: review + Math.floor((next() - 0.5) * 6 * DAY), fixed: next() < 0.5 }] : undefined;
        return {
          repo: pick(repos),
          n,
          author: pick(["alice", "bob", "Carol"]),
          created,
          merged,
          reviews,
          ...(findings ? { findings } : {}),
          ...(next() < 0.3 ? { ai: Math.floor(next() * 50) } : {}),
          version: `2026-11-01T00:00:${String(version).padStart(2, "0")}.000Z`,
        };
      };
      const write = async (count: number) => {
        version++;
        const batch: Pr[] = [];
        for (let i = 0; i < count; i++) {
          const existing = next() < 0.4 && made.size > 0 ? pick([...made.values()]) : null;
          const p = randomPr(existing ? existing.n : 1 + Math.floor(next() * 400));
          const keep = existing ? { ...p, repo: existing.repo, findings: undefined } : p;
          made.set(`${keep.repo.toLowerCase()}#${keep.n}`, keep);
          batch.push(keep);
        }
        await postEventsOk(eventsOf(org, batch));
      };
      await write(80);
      const lists = ["api", "api,web", "docs,WEB,api", "web"];
      let servedMonths = 0;
      for (let round = 0; round < 8; round++) {
        const a = Math.floor(next() * 3);
        const b = a + 1 + Math.floor(next() * (4 - a));
        const w = { start: (starts[a] as number) + pick(edges), end: (starts[b] as number) - 1 + pick(edges) };
        for (const repos of lists) await agrees(get, org, w, repos, `round ${round}`);
        if (round === 3) await moveRows(await shardDb(org), { orgKey: org, repo: "docs" }, { orgKey: org, repo: "web" });
        else await write(6);
        for (const repos of lists) await agrees(get, org, w, repos, `round ${round} after`);
        servedMonths += await monthsServed(org, w, "api,web,docs");
      }
      // Month blocks served some of the rounds' windows (or the attack did not reach them).
      expect(servedMonths).toBeGreaterThan(0);
    });

  it("a leap year's window of 366 days, every month a marker, small days folded across months and weeks", {
    timeout: 240_000,
  }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    const made: Pr[] = [];
    for (let d = 0; d < 366; d += 3)
      made.push(
        pr(d % 2 ? "api" : "web", 1 + d, Date.UTC(2028, 0, 1 + d, 3 + (d % 20)), {
          ageH: 2,
          reviewH: 1,
          author: d % 5 ? "bob" : "alice",
        }),
      );
    made.push(pr("api", 900, "2028-12-31T23:59:59.999Z", { ageH: 2, reviewH: 1 }));
    await postEventsOk(eventsOf(org, made));
    const YEAR = { start: at("2028-01-01T00:00:00.000Z"), end: at("2028-12-31T23:59:59.999Z") };
    for (const repos of ["api", "api,web"]) await agrees(get, org, YEAR, repos, "leap year, months", ["week", "month"]);
    expect(await monthsServed(org, YEAR, "api,web")).toBe(made.length);
    // Months made markers by a lower limit (a write deletes the stored ones first), then served by folded day blocks.
    await postEventsOk(
      eventsOf(
        org,
        made.map((p) => ({ ...p, version: "2026-12-09T00:00:00.000Z", ai: 1 })),
      ),
    );
    for (const repos of ["api", "api,web"]) {
      await storageAgrees(get, org, YEAR, repos, { monthBlockMax: 1 }, "markers built");
      await storageAgrees(get, org, YEAR, repos, { monthBlockMax: 1 }, "markers read");
      await agrees(get, org, YEAR, repos, "leap year, markers", ["week", "month"]);
    }
    expect(await monthsServed(org, YEAR, "api,web")).toBe(0);
    expect(await fromBlocks(org, YEAR, "api,web")).toBe(made.length);
  });

  it("extreme durations: created at the epoch, created after the merge, reviewed before creation, null lines", {
    timeout: 180_000,
  }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    const m = at("2026-10-15T10:00:00.000Z");
    await postEventsOk(
      eventsOf(org, [
        ...boundaryData(),
        { repo: "api", n: 50, created: 0, merged: m, reviews: [m - HOUR] },
        { repo: "api", n: 51, created: m + 5 * DAY, merged: m, reviews: [m + HOUR] },
        { repo: "web", n: 52, created: m - HOUR, merged: m + 2 * DAY, reviews: [m - 3 * DAY] },
        {
          repo: "web",
          n: 53,
          created: at("2026-11-20T00:00:00Z"),
          merged: at("2026-11-10T00:00:00Z"),
          reviews: [at("2026-11-25T00:00:00Z")],
        },
      ]),
    );
    await postEventsOk([
      {
        type: "pull_request",
        org,
        repo: "api",
        prNumber: 54,
        author: "nul",
        createdAt: "2026-11-03T00:00:00Z",
        mergedAt: "2026-11-04T00:00:00Z",
        linesAdded: null,
        linesDeleted: null,
        updatedAt: VERSION,
      },
      {
        type: "review",
        org,
        repo: "api",
        prNumber: 54,
        reviewId: "r-api-54",
        status: "completed",
        completedAt: "2026-11-03T05:00:00Z",
        updatedAt: VERSION,
      },
    ]);
    for (const repos of ["api", "api,web", "web"]) await agrees(get, org, OCT_NOV, repos, "extreme");
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
  });

  it("a write between a month's day blocks and its month block; a rename between the statement and the build", {
    timeout: 180_000,
  }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    const db = await shardDb(org);
    const first = Date.UTC(2026, 9, 1) / DAY;
    const months = wholeMonths(first, Date.UTC(2026, 10, 30) / DAY);
    const days = Array.from({ length: 61 }, (_, i) => first + i);
    for (const repoKey of ["api", "web"]) await buildSummaryDays(db, org, days, { repoKey });
    // The write lands after the day blocks, before the months are made from them.
    await postEventsOk(eventsOf(org, [pr("api", 60, "2026-10-20T10:00:00.000Z"), pr("web", 61, "2026-11-05T10:00:00.000Z")]));
    for (const repoKey of ["api", "web"]) await buildSummaryMonths(db, org, repoKey, months);
    for (const repos of ["api", "api,web", "web"]) await agrees(get, org, OCT_NOV, repos, "day blocks, write, months");
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
    // A rename of web into api after the statement, before its build of the missing months.
    await moveRows(db, { orgKey: org, repo: "api" }, { orgKey: org, repo: "core" });
    const q = {
      orgKey: org,
      repoKeys: ["core", "web"],
      authorKeys: null,
      accessibleRepoKeys: null,
      start: OCT_NOV.start,
      end: OCT_NOV.end,
      groupBys: TIME,
    };
    await summarizeGroupings(db, q, SUMMARY_LIMITS, {
      beforeMedians: async () => void (await moveRows(db, { orgKey: org, repo: "web" }, { orgKey: org, repo: "core" })),
    });
    for (const repos of ["core", "core,web", "web", "api,core"]) await agrees(get, org, OCT_NOV, repos, "renamed while building");
    expect(await monthsServed(org, OCT_NOV, "core")).toBeGreaterThan(0);
  });

  it("a month over the default limit of 2,000 pull requests (a marker) beside months under it", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    const next = seededRandom(2001);
    const made: Pr[] = [];
    for (let i = 0; i < 2001; i++) {
      const merged = Date.UTC(2026, 9, 1 + (i % 31), Math.floor(next() * 24), Math.floor(next() * 60));
      const created = merged - Math.floor(next() * 5 * DAY);
      made.push({
        repo: "api",
        n: i + 1,
        author: i % 3 ? "bob" : "alice",
        created,
        merged,
        reviews: [Math.max(created, Date.UTC(2026, 9, 1))],
      });
    }
    for (let i = 0; i < 30; i++) made.push(pr(i % 2 ? "api" : "web", 3000 + i, Date.UTC(2026, 10, 1 + i, 12)));
    await postEventsOk(eventsOf(org, made));
    for (const repos of ["api", "api,web"]) await agrees(get, org, OCT_NOV, repos, "over the limit");
    const months = await monthRows(org);
    expect(months.find((m) => m.rk === "api" && m.month === Date.UTC(2026, 9, 1) / DAY)).toMatchObject({ n: 2001, lo: null });
    expect(months.find((m) => m.rk === "api" && m.month === Date.UTC(2026, 10, 1) / DAY)?.lo).not.toBeNull();
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBe(30);
    // One pull request leaves October: the month is made again, now under the limit, and served.
    await postEventsOk(
      eventsOf(org, [{ ...(made[7] as Pr), merged: Date.UTC(2026, 10, 15, 12), version: "2026-12-10T00:00:00.000Z" }]),
    );
    for (const repos of ["api", "api,web"]) await agrees(get, org, OCT_NOV, repos, "under the limit");
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBe(2031);
  });

  it("another organization's rows moved in after the months were built; the dashboard's time groupings", {
    timeout: 180_000,
  }, async () => {
    const { org, get, user } = await adminOrg(["api", "web"]);
    const other = await adminOrg(["api", "web"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    await postEventsOk(
      eventsOf(other.org, [
        pr("api", 1, "2026-10-31T23:59:59.999Z", { author: "zed" }),
        pr("api", 70, "2026-11-01T00:00:00.000Z", { author: "zed", version: "2026-12-11T00:00:00.000Z" }),
        pr("web", 71, "2026-10-05T10:00:00.000Z", { author: "yan" }),
      ]),
    );
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "before");
    await agrees(other.get, other.org, OCT_NOV, "api,web", "other before");
    // Both organizations on one shard, then the other's rows into this one (as an organization rename into an existing one).
    const shardOf = async (o: string) =>
      ((await (await admin("GET", `/internal/v1/organizations/${o}/move`)).json()) as { shard: string }).shard;
    if ((await shardOf(org)) !== (await shardOf(other.org))) await moveToOtherShard(other.org);
    expect(await shardOf(other.org)).toBe(await shardOf(org));
    await moveRows(await shardDb(org), { orgKey: other.org }, { orgKey: org });
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "after");
    const moved = await agrees(get, org, OCT_NOV, "api,web", "after, both");
    // api #1 is in both (same version: this organization's row stays); #70 and #71 came in.
    expect(moved.filter((r) => r.author === "zed" || r.author === "yan").length).toBe(2);
    expect(await monthsServed(org, OCT_NOV, "api,web")).toBeGreaterThan(0);
    const session = await signIn(user);
    for (const w of [OCT_NOV, SEP_DEC])
      for (const repos of ["api,web", "web"]) {
        const q = query(org, w, repos);
        for (let pass = 0; pass < 2; pass++) {
          const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=day,week,month`, session);
          expect(res.status).toBe(200);
          const { summaries } = (await res.json()) as { summaries: { groupBy: string }[] };
          expect(summaries.map((x) => x.groupBy)).toEqual(["day", "week", "month"]);
          for (const summary of summaries)
            expect(summary, `${repos} ${summary.groupBy} dashboard`).toEqual(
              await get(`/api/analytics/v1/summary?${q}&groupBy=${summary.groupBy}`),
            );
        }
        await agrees(get, org, w, repos, "dashboard's reference");
      }
  });

  it("a write while a summary of months and counted day blocks reads its medians' buckets (read again)", {
    timeout: 180_000,
  }, async () => {
    const { org, get } = await adminOrg(["api", "web"]);
    const W = { start: at("2026-09-15T00:00:00.000Z"), end: OCT_NOV.end };
    const made = [...boundaryData()];
    for (let d = 15; d <= 30; d++)
      made.push(pr(d % 2 ? "api" : "web", 100 + d, Date.UTC(2026, 8, d, 12), { ageH: d, reviewH: 1 }));
    await postEventsOk(eventsOf(org, made));
    for (const repos of ["api,web"]) await agrees(get, org, W, repos, "built");
    const db = await shardDb(org);
    const q = {
      orgKey: org,
      repoKeys: ["api", "web"],
      authorKeys: null,
      accessibleRepoKeys: null,
      start: W.start,
      end: W.end,
      groupBys: TIME,
    };
    const limits = { ...SUMMARY_LIMITS, bucketsFrom: 0, bucketsPerBlock: 0 };
    let writes = 0;
    const figures = await summarizeGroupings(db, q, limits, {
      beforeMedians: async () => {
        if (writes++ > 0) return;
        await postEventsOk(
          eventsOf(org, [
            { ...pr("api", 117, Date.UTC(2026, 8, 20, 12), { ageH: 300, reviewH: 1 }), version: "2026-12-12T00:00:00.000Z" },
            pr("web", 200, Date.UTC(2026, 9, 20, 12), { ageH: 1, reviewH: 0 }),
          ]),
        );
      },
    });
    expect(writes).toBeGreaterThan(1);
    const rows = await exportRows<Row>(get, query(org, W, "api,web"), { perPage: 50, maxPages: 200 });
    TIME.forEach((groupBy, i) => {
      const ref = referenceSummary(rows, groupBy, W.start, W.end);
      expect(
        [...(figures.groupings[i]?.groups ?? [])].sort((a, b) => (a.key < b.key ? -1 : 1)),
        groupBy,
      ).toEqual(ref.groups.filter((g) => g.pullRequests > 0));
      expect(figures.groupings[i]?.totals, `${groupBy} totals`).toEqual(ref.totals);
    });
    await agrees(get, org, W, "api,web", "after the raced read");
    expect(await monthsServed(org, W, "api,web")).toBeGreaterThan(0);
  });

  it("months built on one shard, the organization moved, written, and moved back", { timeout: 240_000 }, async () => {
    const { org, get } = await adminOrg(["api", "web", "docs"]);
    await postEventsOk(eventsOf(org, boundaryData()));
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "before move");
    await moveToOtherShard(org);
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "moved");
    await postEventsOk(
      eventsOf(org, [
        { ...pr("web", 1, "2026-11-02T08:00:00.000Z", { author: "bob", ai: 3 }), version: "2026-12-08T00:00:00.000Z" },
        pr("docs", 2, "2026-11-30T10:00:00.000Z", { author: "erin" }),
      ]),
    );
    await moveToOtherShard(org);
    for (const repos of LISTS) await agrees(get, org, OCT_NOV, repos, "moved back");
    expect(await fromBlocks(org, OCT_NOV, "docs,web")).toBeGreaterThan(0);
    expect(await monthsServed(org, OCT_NOV, "docs,web")).toBeGreaterThan(0);
  });
});
