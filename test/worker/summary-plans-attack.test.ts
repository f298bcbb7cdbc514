import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import type { AnalyticsScope } from "../../src/storage/analytics";
import { SUMMARY_LIMITS, SummaryPlans, summarizeGroupings } from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import { appCall, signIn } from "./app-helpers";
import {
  addMember,
  adminOk,
  call,
  createKey,
  createOrg,
  createUser,
  fetchWithEnv,
  moveToOtherShard,
  postEventsOk,
  scopeOf,
  seededRandom,
  shardDb,
  unique,
  walkingPlans,
} from "./helpers";
import { eventsOf, type Pr, pr } from "./summary-attack-data";
import { type ExportRow, exportRows, GROUP_BYS, type GroupBy, referenceAnswer } from "./summary-reference";

/**
 * An outside review's attacks on the summary's walk plans (`SummaryPlans`, the statement's
 * `served = "walk"`): a request of an organization whose window the isolate has seen hold few pull
 * requests is answered by the short statement that walks every merge of the window. The oracle is
 * contract sections 12 and 21: the summary is exactly the export's rows for the same parameters
 * (every page), grouped. That a request was walked is seen in the day blocks: the full statement
 * builds the window's missing ones, the walk builds none. A failing test is a finding.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);
type Window = { start: number; end: number };
const OCT: Window = { start: at("2026-10-01T00:00:00.000Z"), end: at("2026-10-31T23:59:59.999Z") };
/** Shorter than October, with partial first and last days. */
const INNER: Window = { start: at("2026-10-10T12:00:00.001Z"), end: at("2026-10-20T05:00:00.000Z") };

/** The storage's groupings, each group list in key order (the storage answers groups in no set order). */
const byKey = (figures: Awaited<ReturnType<typeof summarizeGroupings>>) =>
  figures.groupings.map(({ groups, totals }) => ({ totals, groups: [...groups].sort((a, b) => (a.key < b.key ? -1 : 1)) }));

type Answer = { status: number; body: unknown };

async function adminOrg(repos: { name: string; private?: boolean }[]) {
  const org = await createOrg(unique("plnatk"), { plan: "pro", installedAt: "2024-01-01T00:00:00Z" });
  const user = await createUser();
  await addMember(org, user, "admin");
  for (const repo of repos)
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/${repo.name}`, { private: repo.private ?? false });
  const { key } = await createKey(user, "analytics");
  return { org, user, ...caller(key) };
}

/** Requests with an analytics key; the isolate's plans are left as they fall (that is what is attacked). */
function caller(key: string) {
  const ask = async (path: string): Promise<Answer> => {
    const res = await call(path, { headers: { Authorization: `Bearer ${key}` } });
    return { status: res.status, body: await res.json() };
  };
  const get = async (path: string): Promise<unknown> => {
    const { status, body } = await ask(path);
    if (status !== 200) throw new Error(`${path} → ${status}: ${JSON.stringify(body)}`);
    return body;
  };
  return { key, ask, get };
}

const query = (org: string, w: Window, lists = "") =>
  `org=${org}&startDate=${encodeURIComponent(iso(w.start))}&endDate=${encodeURIComponent(iso(w.end))}${lists}`;

async function blockCount(org: string): Promise<number> {
  const row = await (await shardDb(org))
    .prepare("SELECT count(*) AS n FROM summary_days WHERE org_key = ?1")
    .bind(org.toLowerCase())
    .first<{ n: number }>();
  return row?.n ?? 0;
}

async function dropBlocks(org: string): Promise<void> {
  await (await shardDb(org)).prepare("DELETE FROM summary_days WHERE org_key = ?1").bind(org.toLowerCase()).run();
}

/**
 * The summary of each grouping equals the export's rows grouped (or, when the export refuses the
 * parameters, the same refusal). `get` is the caller's; the plans are not touched here.
 */
async function agrees(
  c: { ask: (path: string) => Promise<Answer>; get: (path: string) => Promise<unknown> },
  org: string,
  w: Window,
  lists: string,
  label: string,
  groupBys: GroupBy[] = GROUP_BYS,
): Promise<ExportRow[]> {
  const q = query(org, w, lists);
  const probe = await c.ask(`/api/analytics/v1/prs?${q}&perPage=1`);
  if (probe.status !== 200) {
    for (const groupBy of groupBys) {
      const got = await c.ask(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`);
      expect(got, `${label} ${lists} ${groupBy}: the export's refusal`).toEqual(probe);
    }
    return [];
  }
  const rows = await exportRows<ExportRow>(c.get, q, { perPage: 7, maxPages: 100 });
  for (const groupBy of groupBys) {
    const want = referenceAnswer(org, rows, groupBy, w.start, w.end);
    expect(await c.get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`), `${label} ${lists} ${groupBy}`).toEqual(want);
  }
  return rows;
}

/** Pull requests at and around October's edges (every one's reviews and findings chosen to cross an edge or not). */
function edgeData(): Pr[] {
  const { start, end } = OCT;
  return [
    // Merged exactly at the window's first and last millisecond, and one millisecond outside each.
    pr("api", 1, start, { author: "alice", ageH: 3, reviewH: 4, ai: 5 }), // reviewed an hour after its merge
    pr("api", 2, end, { author: "Bob", ageH: 4, reviewH: 2 }),
    pr("api", 3, start - 1, { author: "carol", ageH: 1, reviewH: 30 }), // reviewed inside: the after-merge tiers
    pr("web", 4, end + 1, { author: "bob", ageH: 200, reviewH: 2 }), // reviewed inside: the before-merge tiers
    pr("web", 5, end + 1, { author: "dave", ageH: 2, reviewH: 1 }), // reviewed after the window: none
    pr("web", 6, start - 1, { author: "dave", ageH: 50, reviewH: 1 }), // reviewed before it: none
    // Merged inside, reviewed only before and after it (none inside): a candidate that fails the check.
    {
      repo: "web",
      n: 7,
      author: "erin",
      created: start - 30 * HOUR,
      merged: start + 40 * HOUR,
      reviews: [start - 2 * HOUR, end + 2 * HOUR],
    },
    // Merged inside, reviewed before it, inside and after it.
    {
      repo: "docs",
      n: 8,
      author: "erin",
      created: start - 30 * HOUR,
      merged: at("2026-10-12T08:00:00.000Z"),
      reviews: [start - 2 * HOUR, at("2026-10-11T00:00:00.000Z"), end + 2 * HOUR],
    },
    // Merged inside, every review before it: not a candidate.
    { repo: "docs", n: 9, author: "erin", created: start - 30 * HOUR, merged: start + 1 * HOUR, reviews: [start - 5 * HOUR] },
    // Reviewed exactly at the window's edges.
    { repo: "Web", n: 10, author: "frank", created: start - 10 * HOUR, merged: at("2026-10-15T00:00:00.000Z"), reviews: [start] },
    {
      repo: "api",
      n: 11,
      author: "frank",
      created: at("2026-10-30T00:00:00.000Z"),
      merged: at("2026-10-31T12:00:00.000Z"),
      reviews: [end],
    },
    // Findings straddling the start, the end, both; wholly outside; none posted inside.
    pr("api", 12, at("2026-10-02T10:00:00.000Z"), {
      author: "alice",
      findings: [
        { at: start - 1, fixed: true },
        { at: start, fixed: true },
        { at: start + HOUR, fixed: false },
      ],
    }),
    pr("api", 13, at("2026-10-31T20:00:00.000Z"), {
      author: "Bob",
      findings: [
        { at: end, fixed: false },
        { at: end + 1, fixed: true },
      ],
    }),
    {
      repo: "web",
      n: 14,
      author: "carol",
      created: start - 48 * HOUR,
      merged: at("2026-10-16T00:00:00.000Z"),
      reviews: [start - 40 * HOUR, at("2026-10-05T00:00:00.000Z")],
      findings: [
        { at: start - 3 * HOUR, fixed: true },
        { at: at("2026-10-10T00:00:00.000Z"), fixed: true },
        { at: end + 3 * HOUR, fixed: false },
      ],
    },
    pr("web", 15, at("2026-10-16T01:00:00.000Z"), {
      author: "carol",
      findings: [
        { at: start - 3 * HOUR, fixed: true },
        { at: end + 3 * HOUR, fixed: true },
      ],
    }),
    // Null lines, AI lines, a bigger spread of durations.
    pr("docs", 16, at("2026-10-20T04:59:59.999Z"), { author: "alice", linesAdded: null, ai: 0, ageH: 500, reviewH: 499 }),
    pr("docs", 17, at("2026-10-20T05:00:00.000Z"), { author: "dave", ageH: 1, reviewH: 0 }),
    pr("api", 18, at("2026-10-10T12:00:00.000Z"), { author: "alice", ageH: 2, reviewH: 1 }),
    pr("api", 19, at("2026-10-10T12:00:00.001Z"), { author: "erin", ageH: 9, reviewH: 3 }),
  ];
}

const LISTS = [
  "",
  "&repo=api",
  "&repo=api,WEB",
  "&repo=docs,web,api",
  "&repo=api,nope",
  "&author=bob",
  "&author=Bob,erin&repo=web,docs",
];

/** The organization's next unfiltered summary of `w` learns its plan (the full statement: blocks built). */
async function learn(c: { get: (path: string) => Promise<unknown> }, org: string, w: Window): Promise<void> {
  SUMMARY_PLANS.clear();
  await c.get(`/api/analytics/v1/summary?${query(org, w)}&groupBy=week`);
  expect(await blockCount(org), "the full statement built the window's blocks").toBeGreaterThan(0);
}

describe("attack: the summary's walk (SummaryPlans) against the export", () => {
  it("edges of the window, every grouping and list: walked, then read by the full statement, both the export's", {
    timeout: 120_000,
  }, async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs" }]);
    await postEventsOk(eventsOf(c.org, edgeData()));
    await learn(c, c.org, OCT);
    await dropBlocks(c.org);
    for (const w of [OCT, INNER]) for (const lists of LISTS) await agrees(c, c.org, w, lists, `walked ${iso(w.start)}`);
    expect(await blockCount(c.org), "every request above was walked (the walk builds no block)").toBe(0);
    // The same requests read by the full statement (plans forgotten before each).
    const full = {
      ...c,
      get: async (path: string) => {
        SUMMARY_PLANS.clear();
        return c.get(path);
      },
    };
    for (const lists of LISTS) await agrees(full, c.org, OCT, lists, "full", ["week", "repo"]);
    expect(await blockCount(c.org)).toBeGreaterThan(0);
  });

  it("storage: the walk equals the full statement with access lists, excluded repositories, authors and repositories", {
    timeout: 60_000,
  }, async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs" }]);
    await postEventsOk(eventsOf(c.org, edgeData()));
    const db = await shardDb(c.org);
    const scopes: Partial<AnalyticsScope>[] = [
      {},
      { accessibleRepoKeys: ["api", "docs"] },
      { accessibleRepoKeys: [] },
      { excludedRepoKeys: ["web"] },
      { excludedRepoKeys: ["web", "api", "docs"] },
      { authorKeys: ["bob", "nobody"] },
      { repoKeys: ["web"], excludedRepoKeys: ["web"] },
      { repoKeys: ["api", "web", "api"], accessibleRepoKeys: ["web"], authorKeys: ["bob", "carol"] },
      { repoKeys: ["nope"] },
    ];
    for (const w of [OCT, INNER])
      for (const extra of scopes) {
        const q = {
          orgKey: c.org,
          repoKeys: null,
          authorKeys: null,
          accessibleRepoKeys: null,
          excludedRepoKeys: [],
          start: w.start,
          end: w.end,
          ...extra,
        };
        const groupBys: GroupBy[] = ["week", "repo", "author", "day"];
        const full = await summarizeGroupings(db, { ...q, groupBys }); // builds the blocks
        const blocks = await summarizeGroupings(db, { ...q, groupBys }); // reads them
        const walked = await summarizeGroupings(db, { ...q, groupBys }, undefined, { plans: walkingPlans(q) });
        const label = `${iso(w.start)} ${JSON.stringify(extra)}`;
        expect([byKey(walked), walked.candidates, walked.fromBlocks], label).toEqual([byKey(full), full.candidates, 0]);
        expect([byKey(blocks), blocks.candidates], label).toEqual([byKey(full), full.candidates]);
      }
  });

  it("null creation times (set in the table: no event writes one): the walk equals the full statement, blocks built and read", async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs" }]);
    await postEventsOk(eventsOf(c.org, edgeData()));
    const db = await shardDb(c.org);
    // In the window (api 1, 18), merged before it and reviewed inside (api 3), after it (web 4).
    await db
      .prepare(
        `UPDATE pull_requests SET created_at = NULL WHERE org_key = ?1 AND (repo_key, pr_number) IN (VALUES ('api', 1), ('api', 18), ('api', 3), ('web', 4))`,
      )
      .bind(c.org)
      .run();
    for (const w of [OCT, INNER])
      for (const extra of [{}, { authorKeys: ["alice", "carol", "bob"] }, { repoKeys: ["api", "web"] }]) {
        const q = { ...scopeOf(c.org, iso(w.start), iso(w.end)), excludedRepoKeys: [], ...extra };
        const groupBys: GroupBy[] = ["week", "author", "day"];
        const full = await summarizeGroupings(db, { ...q, groupBys });
        const blocks = await summarizeGroupings(db, { ...q, groupBys });
        const walked = await summarizeGroupings(db, { ...q, groupBys }, undefined, { plans: walkingPlans(q) });
        const label = `${iso(w.start)} ${JSON.stringify(extra)}`;
        expect([byKey(walked), walked.candidates], label).toEqual([byKey(full), full.candidates]);
        expect([byKey(blocks), blocks.candidates], label).toEqual([byKey(full), full.candidates]);
        if (w === OCT && Object.keys(extra).length === 0) expect(blocks.fromBlocks, "some read from blocks").toBeGreaterThan(0);
      }
  });

  it("random windows and lists (fixed seed): the walk equals the full statement, blocks built and read", {
    timeout: 60_000,
  }, async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs" }]);
    const random = seededRandom(61_128);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
    const base = at("2026-10-01T00:00:00.000Z");
    const prs: Pr[] = Array.from({ length: 120 }, (_, i) => {
      const merged = base + Math.floor((random() * 40 - 5) * 86_400_000) + pick([0, 1, -1, 0]);
      const created = merged - Math.floor(random() * 300 * HOUR);
      const reviews = Array.from({ length: 1 + Math.floor(random() * 3) }, () => created + Math.floor(random() * 600 * HOUR));
      const findings = Array.from({ length: Math.floor(random() * 3) }, () => ({
        at: created + Math.floor(random() * 600 * HOUR),
        fixed: random() < 0.5,
      }));
      return {
        repo: pick(["api", "web", "Docs"]),
        n: i + 1,
        author: pick(["alice", "Bob", "carol"]),
        created,
        merged,
        reviews,
        findings,
      };
    });
    await postEventsOk(eventsOf(c.org, prs));
    const db = await shardDb(c.org);
    const extras: Partial<AnalyticsScope>[] = [
      {},
      { repoKeys: ["api"] },
      { repoKeys: ["docs", "web"] },
      { authorKeys: ["bob"] },
      { accessibleRepoKeys: ["web", "api"] },
      { excludedRepoKeys: ["api"] },
    ];
    let answered = 0;
    let fromBlocks = 0;
    for (let round = 0; round < 40; round++) {
      // Most windows start or end exactly at a merge (reviewed on both sides of it), a review or a finding.
      const merges = prs
        .filter((p) => Math.max(...p.reviews) > p.merged && Math.min(...p.reviews) < p.merged)
        .map((p) => p.merged);
      const others = prs.flatMap((p) => [...p.reviews, ...(p.findings ?? []).map((f) => f.at)]);
      const start =
        round % 3 === 0 ? pick(merges) : round % 3 === 1 ? pick(others) : base + Math.floor((random() * 36 - 3) * 86_400_000);
      const later = [...merges, ...others].filter((t) => t >= start);
      const span = pick([0, 1, 86_400_000 - 1, 86_400_000, Math.floor(random() * 20 * 86_400_000)]);
      const end = round % 2 === 1 && later.length > 0 ? pick(later) : start + span;
      const q = { ...scopeOf(c.org, iso(start), iso(end)), excludedRepoKeys: [], ...pick(extras) };
      const groupBys: GroupBy[] = [pick(["day", "week", "month"] as const), pick(["repo", "author"] as const)];
      const full = await summarizeGroupings(db, { ...q, groupBys });
      const blocks = await summarizeGroupings(db, { ...q, groupBys });
      const walked = await summarizeGroupings(db, { ...q, groupBys }, undefined, { plans: walkingPlans(q) });
      const label = `round ${round}: ${iso(start)} .. ${iso(end)} ${JSON.stringify(q)}`;
      if ((full.groupings[0]?.totals.pullRequests ?? 0) > 0) answered++;
      fromBlocks += blocks.fromBlocks;
      expect([byKey(walked), walked.candidates], label).toEqual([byKey(full), full.candidates]);
      expect([byKey(blocks), blocks.candidates], label).toEqual([byKey(full), full.candidates]);
    }
    // The draw is worth its time: many windows hold pull requests, and blocks served some.
    expect(answered).toBeGreaterThan(15);
    expect(fromBlocks).toBeGreaterThan(0);
  });

  it("storage: under any maxRows the walk refuses exactly when the full statement does, and answers the same otherwise", async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs" }]);
    await postEventsOk(eventsOf(c.org, edgeData()));
    const db = await shardDb(c.org);
    const q = { ...scopeOf(c.org), excludedRepoKeys: [] };
    const groupBys: GroupBy[] = ["week", "repo"];
    const all = (await summarizeGroupings(db, { ...q, groupBys })).candidates;
    expect(all).toBeGreaterThan(10);
    for (const maxRows of [0, 1, 5, all - 1, all, all + 1]) {
      const limits = { ...SUMMARY_LIMITS, maxRows };
      const full = await summarizeGroupings(db, { ...q, groupBys }, limits); // from blocks where they serve
      const walked = await summarizeGroupings(db, { ...q, groupBys }, limits, { plans: walkingPlans(q) });
      expect([walked.candidates > maxRows, full.candidates > maxRows], `maxRows ${maxRows}`).toEqual([
        all > maxRows,
        all > maxRows,
      ]);
      if (all <= maxRows) expect(byKey(walked), `maxRows ${maxRows}`).toEqual(byKey(full));
    }
  });

  it("a plan is the organization's and the window length's; growing past walkBelow switches back to the blocks", {
    timeout: 90_000,
  }, async () => {
    const a = await adminOrg([{ name: "api" }]);
    const b = await adminOrg([{ name: "api" }]);
    const data = [1, 2, 3, 4, 5].map((n) => pr("api", n, at(`2026-10-0${n}T10:00:00.000Z`), { author: `u${n % 2}` }));
    await postEventsOk([...eventsOf(a.org, data), ...eventsOf(b.org, data)]);
    await learn(a, a.org, OCT);
    await dropBlocks(a.org);
    // Another organization: not walked (its blocks are built).
    await agrees(b, b.org, INNER, "", "other organization", ["week"]);
    await agrees(b, b.org, OCT, "", "other organization", ["week"]);
    expect(await blockCount(b.org)).toBeGreaterThan(0);
    // A window more than a day longer than the one learned is not walked (and is learned itself);
    // a shorter one, anywhere, is walked, and learned: the plan is the last unfiltered summary's.
    const SEP_OCT = { start: OCT.start - DAY - 1, end: OCT.end };
    await agrees(a, a.org, SEP_OCT, "", "longer", ["week"]);
    expect(await blockCount(a.org), "a longer window reads the full statement").toBeGreaterThan(0);
    await dropBlocks(a.org);
    await agrees(a, a.org, INNER, "", "shorter", ["week", "repo"]);
    expect(await blockCount(a.org)).toBe(0);
    await agrees(a, a.org, { start: INNER.start + 1, end: INNER.end + 1 }, "", "as long, later", ["week"]);
    expect(await blockCount(a.org)).toBe(0);
    await agrees(a, a.org, OCT, "", "longer than the last", ["week"]);
    expect(await blockCount(a.org), "the plan is the last unfiltered summary's window").toBeGreaterThan(0);
    // A filtered request does not teach: a plan learned over a short window stays short.
    await learn(a, a.org, INNER);
    await agrees(a, a.org, OCT, "&repo=api", "filtered after a short plan", ["week"]);
    await dropBlocks(a.org);
    await agrees(a, a.org, OCT, "&author=u1", "still not walked", ["week"]);
    expect(await blockCount(a.org), "a longer window, filtered: the full statement").toBeGreaterThan(0);
    await dropBlocks(a.org);
    await agrees(a, a.org, OCT, "&author=u1", "and again", ["week"]);
    expect(await blockCount(a.org), "the filtered requests taught no longer window").toBeGreaterThan(0);

    // Growth past 200 between requests: the next answer (walked, as planned) is still exact, and
    // the one after it reads the blocks again.
    await learn(a, a.org, OCT);
    const more = Array.from({ length: 220 }, (_, i) =>
      pr("api", 100 + i, OCT.start + (i + 1) * 3 * HOUR + (i % 7) * 1000, {
        author: `g${i % 9}`,
        ageH: 1 + (i % 11),
        reviewH: i % 5 === 0 ? 30 : 1,
      }),
    );
    await postEventsOk(eventsOf(a.org, more));
    await dropBlocks(a.org);
    await agrees(a, a.org, OCT, "", "grown, walked", ["week"]);
    expect(await blockCount(a.org), "planned before the growth: walked").toBe(0);
    await agrees(a, a.org, OCT, "", "grown, full", ["month", "author"]);
    expect(await blockCount(a.org), "the walk's count switched the plan back").toBeGreaterThan(0);
    // The author grouping above read every pull request from those blocks: the organization still
    // counts as large (the blocks' pull requests are candidates too).
    await dropBlocks(a.org);
    await agrees(a, a.org, OCT, "", "grown, after a summary from blocks", ["week"]);
    expect(await blockCount(a.org), "a summary from blocks kept the plan on the blocks").toBeGreaterThan(0);
  });

  it("the dashboard's summaries answered by the walk equal the single summaries", { timeout: 60_000 }, async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs" }]);
    await postEventsOk(eventsOf(c.org, edgeData()));
    const session = await signIn(c.user);
    await learn(c, c.org, OCT);
    await dropBlocks(c.org);
    for (const lists of ["", "&repo=api,web", "&author=bob"]) {
      const q = query(c.org, INNER, lists);
      const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=day,repo,author,week`, session);
      expect(res.status).toBe(200);
      const { summaries } = (await res.json()) as { summaries: { groupBy: GroupBy }[] };
      expect(summaries.map((s) => s.groupBy)).toEqual(["day", "repo", "author", "week"]);
      const rows = await exportRows<ExportRow>(c.get, q, { perPage: 50, maxPages: 10 });
      for (const summary of summaries)
        expect(summary, `${lists} ${summary.groupBy} dashboard`).toEqual(
          referenceAnswer(c.org, rows, summary.groupBy, INNER.start, INNER.end),
        );
    }
    expect(await blockCount(c.org), "the dashboard's requests were walked").toBe(0);
  });

  it("a member's access list, renames and a shard move between a learned plan and the next request", {
    timeout: 90_000,
  }, async () => {
    const c = await adminOrg([{ name: "api" }, { name: "web" }, { name: "docs", private: true }]);
    const member = await createUser();
    await addMember(c.org, member, "member");
    const m = caller((await createKey(member, "analytics")).key);
    await postEventsOk(eventsOf(c.org, edgeData()));
    await learn(c, c.org, OCT);
    await dropBlocks(c.org);
    for (const lists of ["", "&repo=api,web", "&author=erin"]) {
      const rows = await agrees(m, c.org, OCT, lists, "member", ["week", "repo"]);
      if (lists === "") expect(rows.some((r) => r.repo.toLowerCase() === "docs")).toBe(false);
    }
    expect(await blockCount(c.org), "the member's requests were walked").toBe(0);
    // Renames: web into api (numbers collide), then docs (private) into a new public name.
    await moveRows(await shardDb(c.org), { orgKey: c.org, repo: "web" }, { orgKey: c.org, repo: "api" });
    for (const lists of ["", "&repo=api", "&repo=web"]) await agrees(c, c.org, OCT, lists, "web into api", ["week", "repo"]);
    await moveRows(await shardDb(c.org), { orgKey: c.org, repo: "docs" }, { orgKey: c.org, repo: "core" });
    for (const lists of ["", "&repo=core,api"]) await agrees(m, c.org, OCT, lists, "docs into core (member)", ["repo"]);
    expect(await blockCount(c.org), "walked after the renames").toBe(0);
    // The organization moves to the other shard; its plan stays in the isolate.
    await moveToOtherShard(c.org);
    await dropBlocks(c.org);
    for (const lists of ["", "&repo=api,core", "&author=bob"]) await agrees(c, c.org, INNER, lists, "moved", ["day", "author"]);
    expect(await blockCount(c.org), "walked on the new shard").toBe(0);
  });

  it("SUMMARY_MAX_ROWS still refuses a walked request over the bound, and answers one at it", async () => {
    const c = await adminOrg([{ name: "api" }]);
    const data = [1, 2, 3, 4, 5, 6].map((n) => pr("api", n, at(`2026-10-0${n}T10:00:00.000Z`)));
    await postEventsOk(eventsOf(c.org, data));
    await learn(c, c.org, OCT);
    await dropBlocks(c.org);
    const request = (lists: string) =>
      new Request(`https://service.test/api/analytics/v1/summary?${query(c.org, OCT, lists)}&groupBy=week`, {
        headers: { Authorization: `Bearer ${c.key}` },
      });
    for (const lists of ["", "&repo=api", "&author=alice"]) {
      const refused = await fetchWithEnv(request(lists), { SUMMARY_MAX_ROWS: "5" });
      expect(refused.status, lists).toBe(400);
      const answered = await fetchWithEnv(request(lists), { SUMMARY_MAX_ROWS: "6" });
      expect(answered.status, lists).toBe(200);
      expect(((await answered.json()) as { totals: { pullRequests: number } }).totals.pullRequests).toBe(6);
    }
    expect(await blockCount(c.org), "walked").toBe(0);
  });
});

describe("attack: SummaryPlans' own bookkeeping", () => {
  const scope = (orgKey: string, days: number) => ({
    orgKey,
    repoKeys: null,
    authorKeys: null,
    accessibleRepoKeys: null,
    excludedRepoKeys: [],
    start: 0,
    end: days * 86_400_000 - 1,
    groupBys: ["week" as const],
  });
  it("forgets the oldest organization past its capacity, and a re-recorded one is the newest", () => {
    const plans = new SummaryPlans(200, 2);
    plans.record(scope("a", 30), 5);
    plans.record(scope("b", 30), 5);
    plans.record(scope("a", 30), 5); // a is now the newest
    plans.record(scope("c", 30), 5); // b forgotten
    expect(["a", "b", "c"].map((o) => plans.walks(scope(o, 30)))).toEqual([true, false, true]);
    // At walkBelow, not walked; a later count below it walks again.
    plans.record(scope("a", 30), 200);
    expect(plans.walks(scope("a", 1))).toBe(false);
    plans.record(scope("a", 30), 199);
    expect([plans.walks(scope("a", 30)), plans.walks(scope("a", 31)), plans.walks(scope("a", 32))]).toEqual([true, true, false]);
  });
});
