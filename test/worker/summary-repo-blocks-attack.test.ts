import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { summarizeGroupings } from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import { appCall, signIn } from "./app-helpers";
import { adminOk, call, moveToOtherShard, postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr, pr } from "./summary-attack-data";
import { summaryOrg } from "./summary-attack-http";
import { type ExportRow, exportRows, GROUP_BYS, referenceAnswer } from "./summary-reference";
import { deliverQueued, example, repoId, world } from "./webhook-helpers";

/**
 * An outside review's attacks on the listed repositories' day blocks (issue 33: `summary_days`
 * keyed by repository, migration 0013, `summaryStatement`, `readBlocks`), through the HTTP API.
 * The oracle is contract sections 12 and 21: the summary with a `repo` list is exactly the
 * export's rows with the same list (every page), grouped. Each test first has summaries build the
 * listed repositories' blocks, then writes (renames, changed pull requests, moves, access lists),
 * then compares every grouping with the export. A failing test is a finding.
 */

type Row = ExportRow;
const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);

// ---- The organization, its caller and the data. ----

type Get = (path: string) => Promise<unknown>;

async function orgWith(role: "admin" | "member", repos: Record<string, { private: boolean; collaborator?: boolean }>) {
  const { org, user, key, get } = await summaryOrg("rbatk", role, repos);
  // Every request reads the blocks' statement (`SummaryPlans` would walk a window seen to hold few).
  const raw = (path: string) => {
    SUMMARY_PLANS.clear();
    return call(path, { headers: { Authorization: `Bearer ${key}` } });
  };
  return { org, user, get, raw };
}

function query(org: string, w: { start: number; end: number }, repos: string | null, authors: string | null = null) {
  const lists = `${repos ? `&repo=${encodeURIComponent(repos)}` : ""}${authors ? `&author=${encodeURIComponent(authors)}` : ""}`;
  return `org=${org}${lists}&startDate=${encodeURIComponent(iso(w.start))}&endDate=${encodeURIComponent(iso(w.end))}`;
}

/** Every grouping's summary equals the export's rows grouped; answers the rows (to check a test's expectations on them). */
async function agrees(
  get: Get,
  org: string,
  w: { start: number; end: number },
  repos: string | null,
  authors: string | null = null,
  label = "",
  perPage = 7,
): Promise<Row[]> {
  const q = query(org, w, repos, authors);
  const rows = await exportRows<Row>(get, q, { perPage, maxPages: 100 });
  for (const groupBy of GROUP_BYS) {
    if (groupBy === "day" && w.end - w.start + 1 > 400 * DAY) continue;
    const summary = await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`);
    expect(summary, `${label} repo=${repos} author=${authors} groupBy=${groupBy}`).toEqual(
      referenceAnswer(org, rows, groupBy, w.start, w.end),
    );
  }
  return rows;
}

/** Summaries that build the listed repositories' blocks (and the organization's) of the window's full days. */
async function buildBlocks(get: Get, org: string, w: { start: number; end: number }, lists: (string | null)[]) {
  for (const repos of lists)
    for (const groupBy of ["week", "repo"] as const)
      await get(`/api/analytics/v1/summary?${query(org, w, repos)}&groupBy=${groupBy}`);
}

/** The stored blocks of listed repositories (repo_key not ''), with pull requests or empty. */
async function repoBlocks(org: string): Promise<{ rk: string; n: number }[]> {
  const { results } = await (await shardDb(org))
    .prepare(
      "SELECT repo_key AS rk, SUM(pull_requests) AS n FROM summary_days WHERE org_key = ?1 AND repo_key <> '' GROUP BY repo_key",
    )
    .bind(org)
    .all<{ rk: string; n: number }>();
  return results;
}

/**
 * How many pull requests the admin's summary of this list reads from blocks now (storage directly,
 * on the organization's shard): the attacks above are only attacks if blocks served them.
 */
async function servedFromBlocks(
  org: string,
  w: { start: number; end: number },
  repos: string[],
  groupBy: "repo" | "week" = "repo",
  read: "fromBlocks" | "bucketValues" = "fromBlocks",
): Promise<number> {
  const repoKeys = [...new Set(repos.map((r) => r.trim().toLowerCase()))].sort();
  const figures = await summarizeGroupings(await shardDb(org), {
    orgKey: org,
    repoKeys,
    authorKeys: null,
    accessibleRepoKeys: null,
    start: w.start,
    end: w.end,
    groupBys: [groupBy],
  });
  return figures[read];
}

/** September 28 to October 4 2026 (whole UTC days): a month boundary and two ISO weeks. */
const WEEK = { start: at("2026-09-28T00:00:00.000Z"), end: at("2026-10-04T23:59:59.999Z") };
/** The same, its edges inside days (the first and last day walked, the others served). */
const CUT = { start: at("2026-09-28T13:00:00.000Z"), end: at("2026-10-04T06:00:00.000Z") };

/** Merges around the month boundary, in api and web (same numbers in both), some a millisecond from midnight. */
function boundaryData(): Pr[] {
  return [
    pr("api", 1, "2026-09-29T10:00:00.000Z", { author: "alice" }),
    pr("api", 2, "2026-09-30T23:59:59.999Z", { author: "Bob", findings: [{ at: at("2026-09-30T20:00:00Z"), fixed: true }] }),
    pr("api", 3, "2026-10-01T00:00:00.000Z", { author: "carol", ai: 7 }),
    pr("api", 4, "2026-10-02T12:00:00.000Z", { author: "alice", linesAdded: null }),
    pr("web", 1, "2026-09-30T08:00:00.000Z", { author: "bob", ai: 3 }),
    pr("web", 2, "2026-10-01T09:00:00.000Z", { author: "alice", findings: [{ at: at("2026-10-01T05:00:00Z"), fixed: false }] }),
    pr("web", 5, "2026-10-03T15:00:00.000Z", { author: "dave" }),
    pr("Web", 6, "2026-10-03T16:00:00.000Z", { author: "alice" }),
    pr("docs", 1, "2026-10-02T11:00:00.000Z", { author: "erin" }),
    // Reviewed in the window, merged after it (its own bucket) and before it.
    pr("api", 7, "2026-10-06T10:00:00.000Z", { ageH: 200, reviewH: 2 }),
    pr("web", 8, "2026-09-27T10:00:00.000Z", { ageH: 1, reviewH: 30 }),
  ];
}

const LISTS = ["api", "web", "api,web", "web,API, Api ,api", "docs,web", "api,docs,web"];

describe("attack: the listed repositories' day blocks against the export", () => {
  it("a repository renamed into another after both repositories' blocks were built", { timeout: 120_000 }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    await postEventsOk(eventsOf(org, boundaryData()));
    await buildBlocks(get, org, WEEK, [null, ...LISTS]);
    const built = await repoBlocks(org);
    expect(built.map((b) => b.rk).sort()).toEqual(["api", "docs", "web"]);
    for (const repos of LISTS) await agrees(get, org, WEEK, repos, null, "before");
    // web's pull requests move into api (numbers 1 and 2 collide: one row each survives).
    await moveRows(await shardDb(org), { orgKey: org, repo: "web" }, { orgKey: org, repo: "api" });
    for (const w of [WEEK, CUT]) for (const repos of LISTS) await agrees(get, org, w, repos, null, "after rename");
    // web has no rows now; its listed summary is empty, api's holds both repositories' pull requests.
    expect(await exportRows<Row>(get, query(org, WEEK, "web"), { perPage: 7, maxPages: 100 })).toEqual([]);
    // Blocks built again after the rename, then a new pull request in web on a served day.
    await buildBlocks(get, org, WEEK, LISTS);
    await postEventsOk(eventsOf(org, [pr("web", 9, "2026-10-01T10:00:00.000Z", { author: "zed" })]));
    for (const repos of LISTS) await agrees(get, org, WEEK, repos, null, "after new web row");
    expect(await servedFromBlocks(org, WEEK, ["api", "web"])).toBeGreaterThan(0);
  });

  it("a pull request changes its merge day across the month boundary, and its repository's spelling", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    const data = boundaryData();
    await postEventsOk(eventsOf(org, data));
    await buildBlocks(get, org, WEEK, [null, ...LISTS]);
    const later = "2026-11-02T00:00:00.000Z";
    const moved = [
      // api #3: merged Oct 1 00:00 → Sep 30 23:59:59.999 (another day, month and ISO week stays).
      { ...pr("api", 3, "2026-09-30T23:59:59.999Z", { author: "carol", ai: 7 }), version: later },
      // web #5, spelled WEB now: the same record (repository key web), merged a day later.
      { ...pr("WEB", 5, "2026-10-04T15:00:00.000Z", { author: "dave" }), version: later },
      // docs #1 loses its review in the window (reviewed after the window now: not listed).
      { ...pr("docs", 1, "2026-10-02T11:00:00.000Z", { author: "erin" }), reviews: [], version: later },
    ];
    await postEventsOk(eventsOf(org, moved));
    await postEventsOk([
      {
        type: "review",
        org,
        repo: "docs",
        prNumber: 1,
        reviewId: "r-docs-1-0",
        status: "completed",
        completedAt: "2026-10-20T00:00:00Z",
        updatedAt: later,
      },
    ]);
    for (const w of [WEEK, CUT]) for (const repos of LISTS) await agrees(get, org, w, repos, null, "after changes");
    const rows = await exportRows<Row>(get, query(org, WEEK, "docs"), { perPage: 7, maxPages: 100 });
    expect(rows).toEqual([]);
  });

  it("twenty repositories listed, most without pull requests, blocks built then rows added; a twenty-first refused", {
    timeout: 180_000,
  }, async () => {
    const names = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, "0")}`);
    const { org, get, raw } = await orgWith("admin", Object.fromEntries(names.map((n) => [n, { private: false }])));
    const data = [0, 3, 7, 19].flatMap((i, j) => [
      pr(names[i] as string, 1, `2026-09-${29 + (j % 2)}T10:00:00.000Z`, { author: j % 2 ? "bob" : "alice" }),
      pr(names[i] as string, 2, `2026-10-0${1 + j}T10:00:00.000Z`, { author: "carol" }),
    ]);
    await postEventsOk(eventsOf(org, data));
    const all = names.join(",");
    const some = [...names.slice(10), ...names.slice(0, 10)].map((n, i) => (i % 3 === 0 ? n.toUpperCase() : n)).join(",");
    await buildBlocks(get, org, WEEK, [all]);
    expect((await repoBlocks(org)).length).toBe(20);
    await agrees(get, org, WEEK, all, null, "20 listed");
    // Rows arrive in repositories whose blocks are empty, on served days.
    await postEventsOk(
      eventsOf(org, [
        pr("r05", 1, "2026-10-02T10:00:00.000Z", { author: "dave" }),
        pr("r12", 1, "2026-09-28T00:00:00.000Z", { author: "dave" }),
        pr("r19", 3, "2026-10-04T23:59:59.999Z", { author: "alice" }),
      ]),
    );
    for (const w of [WEEK, CUT]) {
      await agrees(get, org, w, all, null, "20 after");
      await agrees(get, org, w, some, null, "20 shuffled");
      await agrees(get, org, w, all, "alice,DAVE", "20 with authors");
    }
    expect(await servedFromBlocks(org, WEEK, names)).toBeGreaterThan(0);
    const res = await raw(`/api/analytics/v1/summary?${query(org, WEEK, `${all},r20`)}&groupBy=repo`);
    expect(res.status).toBe(400);
    // A repository known only from events (not registered), listed by the admin beside registered ones.
    await postEventsOk(eventsOf(org, [pr("ghost", 1, "2026-10-01T10:00:00.000Z"), pr("Ghost", 2, "2026-09-30T10:00:00.000Z")]));
    const withGhost = ["ghost", ...names.slice(0, 19)].join(",");
    await buildBlocks(get, org, WEEK, [withGhost]);
    await postEventsOk(eventsOf(org, [pr("GHOST", 3, "2026-10-01T11:00:00.000Z")]));
    for (const w of [WEEK, CUT]) await agrees(get, org, w, withGhost, null, "ghost");
  });

  it("a member's list: a private repository it collaborates on, then loses, and one made public", {
    timeout: 120_000,
  }, async () => {
    const { org, user, get, raw } = await orgWith("member", {
      api: { private: false },
      infra: { private: true, collaborator: true },
      vault: { private: true },
    });
    await postEventsOk(
      eventsOf(org, [
        pr("api", 1, "2026-09-30T10:00:00.000Z"),
        pr("infra", 1, "2026-09-30T11:00:00.000Z", { author: "bob" }),
        pr("infra", 2, "2026-10-01T11:00:00.000Z", { author: "bob" }),
        pr("vault", 1, "2026-09-30T12:00:00.000Z", { author: "carol" }),
        pr("vault", 2, "2026-10-02T12:00:00.000Z", { author: "carol" }),
      ]),
    );
    await buildBlocks(get, org, WEEK, [null, "api,infra", "infra"]);
    await agrees(get, org, WEEK, "api,infra", null, "member");
    expect((await raw(`/api/analytics/v1/summary?${query(org, WEEK, "api,vault")}&groupBy=repo`)).status).toBe(403);
    // Without the list: api and infra only (the organization's blocks hold vault too).
    const rows = await agrees(get, org, WEEK, null, null, "member unlisted");
    expect(new Set(rows.map((r) => r.repo))).toEqual(new Set(["api", "infra"]));
    // infra: the member is no longer a collaborator; vault: made public.
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/infra`, { private: true, collaborators: [] });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/vault`, { private: false });
    expect((await raw(`/api/analytics/v1/summary?${query(org, WEEK, "api,infra")}&groupBy=week`)).status).toBe(403);
    await agrees(get, org, WEEK, "api,vault", null, "vault public");
    await agrees(get, org, CUT, "vault", "carol", "vault public, cut");
    const after = await agrees(get, org, WEEK, null, null, "member unlisted after");
    expect(new Set(after.map((r) => r.repo))).toEqual(new Set(["api", "vault"]));
    expect(user).not.toBe("");
  });

  it("blocks built on one shard, the organization moved, written, and moved back", { timeout: 180_000 }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    await postEventsOk(eventsOf(org, boundaryData()));
    await buildBlocks(get, org, WEEK, [null, ...LISTS]);
    await moveToOtherShard(org);
    await buildBlocks(get, org, WEEK, LISTS);
    for (const repos of LISTS.slice(0, 3)) await agrees(get, org, WEEK, repos, null, "moved");
    const later = "2026-11-03T00:00:00.000Z";
    await postEventsOk(
      eventsOf(org, [
        { ...pr("web", 1, "2026-10-02T08:00:00.000Z", { author: "bob", ai: 3 }), version: later },
        pr("docs", 2, "2026-09-30T10:00:00.000Z", { author: "erin" }),
      ]),
    );
    // Back on the first shard, whose old blocks the move deleted (or the copy's writes did).
    await moveToOtherShard(org);
    for (const repos of LISTS) await agrees(get, org, WEEK, repos, null, "moved back");
    await agrees(get, org, CUT, "docs,web", null, "moved back, cut");
    expect(await servedFromBlocks(org, WEEK, ["docs", "web"])).toBeGreaterThan(0);
  });

  it("a window of many full days (blocks read in slices) with lists, written between summaries", {
    timeout: 180_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    const YEAR = { start: at("2026-01-01T00:00:00.000Z"), end: at("2026-12-31T23:59:59.999Z") };
    const TWO = { start: at("2025-06-01T00:00:00.000Z"), end: at("2027-05-31T23:59:59.999Z") };
    const months = Array.from({ length: 12 }, (_, i) => i);
    const data = months.flatMap((m) => [
      pr(m % 2 ? "api" : "web", 10 + m, `2026-${String(m + 1).padStart(2, "0")}-15T10:00:00.000Z`, {
        author: m % 3 ? "bob" : "alice",
      }),
      pr("docs", 30 + m, `2026-${String(m + 1).padStart(2, "0")}-28T23:59:59.999Z`, { author: "carol" }),
    ]);
    await postEventsOk(eventsOf(org, data));
    await buildBlocks(get, org, YEAR, [null, "api,web", "docs", "api,docs,web"]);
    await buildBlocks(get, org, TWO, ["api,web", "docs"]);
    for (const repos of ["api,web", "docs,API", "api,docs,web"]) await agrees(get, org, YEAR, repos, null, "year");
    await moveRows(await shardDb(org), { orgKey: org, repo: "docs" }, { orgKey: org, repo: "web" });
    await postEventsOk(
      eventsOf(org, [
        { ...pr("api", 11, "2026-07-16T10:00:00.000Z", { author: "bob" }), version: "2026-11-04T00:00:00.000Z" },
        pr("docs", 99, "2026-03-03T10:00:00.000Z", { author: "dave" }),
      ]),
    );
    for (const repos of ["api,web", "docs", "docs,web", "api,docs,web"]) {
      await agrees(get, org, YEAR, repos, null, "year after");
      await agrees(get, org, TWO, repos, "bob,carol,dave", "two years after");
    }
    expect(await servedFromBlocks(org, YEAR, ["api", "docs", "web"])).toBeGreaterThan(0);
  });

  it("the dashboard's summaries (several groupings, one statement) with a member's list, after a rename", {
    timeout: 120_000,
  }, async () => {
    const { org, user, get } = await orgWith("member", {
      api: { private: false },
      web: { private: false },
      docs: { private: false },
      infra: { private: true, collaborator: true },
    });
    await postEventsOk(
      eventsOf(org, [...boundaryData(), pr("infra", 1, "2026-09-30T10:00:00.000Z"), pr("infra", 2, "2026-10-02T10:00:00.000Z")]),
    );
    const session = await signIn(user);
    const dashboard = async (w: { start: number; end: number }, repos: string) => {
      const res = await appCall(
        `/app/api/analytics/summaries?${query(org, w, repos)}&groupBy=week,repo,author,day,month`,
        session,
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { summaries: { groupBy: string }[] }).summaries;
    };
    const lists = ["api,infra", "web,infra,INFRA", "api,web,docs,infra"];
    for (const repos of lists) await dashboard(WEEK, repos);
    await moveRows(await shardDb(org), { orgKey: org, repo: "web" }, { orgKey: org, repo: "infra" });
    for (const w of [WEEK, CUT])
      for (const repos of lists) {
        await agrees(get, org, w, repos, null, "dashboard's reference");
        const summaries = await dashboard(w, repos);
        const q = query(org, w, repos);
        for (const summary of summaries)
          expect(summary, `${repos} ${summary.groupBy}`).toEqual(
            await get(`/api/analytics/v1/summary?${q}&groupBy=${summary.groupBy}`),
          );
      }
  });

  it("listed repositories' medians from their blocks' bucket counts (thousands of pull requests), another repository far off", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    const next = seededRandom(33);
    const made: Pr[] = [];
    const add = (repo: string, n: number, day: number, scale: number) => {
      const merged = Date.UTC(2026, 9, day, Math.floor(next() * 24), Math.floor(next() * 60));
      const created = merged - Math.floor(next() * scale);
      const reviewed = Math.max(created, merged - Math.floor(next() * 20 * HOUR), Date.UTC(2026, 9, 1));
      made.push({ repo, n, author: next() < 0.5 ? "alice" : "bob", created, merged, reviews: [reviewed] });
    };
    // api and web: 1,100 each over days 2 to 23 (50 a day each), durations up to a week; docs:
    // 600, durations of months (its block and the organization's hold them, api's and web's not).
    for (let i = 0; i < 1100; i++) add("api", i + 1, 2 + (i % 22), 7 * DAY);
    for (let i = 0; i < 1100; i++) add("web", i + 1, 2 + (i % 22), 7 * DAY);
    for (let i = 0; i < 600; i++) add("docs", i + 1, 2 + (i % 22), 90 * DAY);
    await postEventsOk(eventsOf(org, made));
    const OCT = { start: at("2026-10-01T00:00:00.000Z"), end: at("2026-10-31T23:59:59.999Z") };
    const OCT_CUT = { start: at("2026-10-01T00:00:00.000Z"), end: at("2026-10-20T11:00:00.000Z") };
    const lists = ["api,web", "web,api,WEB", "api,docs"];
    await buildBlocks(get, org, OCT, [null, ...lists]);
    for (const repos of lists) await agrees(get, org, OCT, repos, null, "buckets", 100);
    // Changes on served days: a merge moved to another day, a creation moved far back (another bucket), docs renamed into web.
    const later = "2026-11-05T00:00:00.000Z";
    const changed = made.filter((p) => p.repo === "api" && p.n % 97 === 0);
    await postEventsOk(
      eventsOf(
        org,
        changed.map((p) => ({ ...p, created: p.created - 40 * DAY, merged: p.merged + DAY, version: later })),
      ),
    );
    await moveRows(await shardDb(org), { orgKey: org, repo: "docs" }, { orgKey: org, repo: "web" });
    for (const w of [OCT, OCT_CUT]) for (const repos of lists) await agrees(get, org, w, repos, null, "buckets after", 100);
    expect(await servedFromBlocks(org, OCT, ["api", "web"])).toBeGreaterThan(2000);
    // The time groupings' medians came from the buckets' counts and slices (not every duration), on
    // days served by day blocks (a whole month is served by month blocks, which send durations; and
    // below 2,000 pull requests served the durations are sent: `bucketsFrom`).
    const OCT_30 = { start: OCT.start, end: at("2026-10-30T23:59:59.999Z") };
    expect(await servedFromBlocks(org, OCT_30, ["api", "web"], "week", "bucketValues")).toBeGreaterThan(0);
  });

  it("a listed repository leaves the installation after its blocks were built, and comes back", {
    timeout: 120_000,
  }, async () => {
    const api = { id: repoId(), name: "api", private: false };
    const web = { id: repoId(), name: "web", private: false };
    const docs = { id: repoId(), name: "docs", private: false };
    const { org, admin } = await world([api, web, docs]);
    const get: Get = async (path) => {
      SUMMARY_PLANS.clear(); // the blocks' statement, always
      const res = await call(path, { headers: { Authorization: `Bearer ${admin.analyticsKey}` } });
      if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${await res.text()}`);
      return res.json();
    };
    await postEventsOk(eventsOf(org, boundaryData()));
    await buildBlocks(get, org, WEEK, [null, ...LISTS]);
    const change = (action: "removed" | "added") => {
      const payload = example("installation_repositories", action, org);
      payload[`repositories_${action}`] = [{ ...web, full_name: `${org}/web`, node_id: "x" }];
      return deliverQueued("installation_repositories", payload);
    };
    await change("removed");
    const q = query(org, WEEK, "api,web");
    const refused = await call(`/api/analytics/v1/summary?${q}&groupBy=repo`, {
      headers: { Authorization: `Bearer ${admin.analyticsKey}` },
    });
    expect(refused.status).toBe(403);
    // The organization's blocks hold web's rows: the unlisted summary must not count them.
    for (const w of [WEEK, CUT]) {
      const rows = await agrees(get, org, w, null, null, "web removed");
      expect(rows.some((r) => r.repo.toLowerCase() === "web")).toBe(false);
      await agrees(get, org, w, "api,docs", null, "web removed, listed");
    }
    await change("added");
    for (const w of [WEEK, CUT]) for (const repos of LISTS) await agrees(get, org, w, repos, null, "web back");
    expect(await servedFromBlocks(org, WEEK, ["api", "web"])).toBeGreaterThan(0);
  });
});
