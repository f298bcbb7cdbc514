import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { summarizeGroupings } from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import { appCall, signIn } from "./app-helpers";
import { admin, adminOk, moveToOtherShard, postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr, pr } from "./summary-attack-data";
import {
  adminGetOf,
  agrees as agreesOverHttp,
  type Get,
  groupingsOf,
  summaryOrg,
  type Window,
  windowQuery,
} from "./summary-attack-http";
import { type ExportRow, exportRows, type GroupBy, referenceAnswer } from "./summary-reference";

/**
 * An outside review's attacks on the month blocks per group (`summary-group-months.ts`, migration
 * 0015), over HTTP. The oracle is contract sections 12 and 21: the summary is exactly the export's
 * rows for the same parameters (every page), grouped. Every summary is asked twice (the first
 * builds the month blocks after its answer, the second reads them), and each time compared with
 * the export walked page by page. A failing test is a finding.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);
const JAN = at("2026-01-01T00:00:00.000Z");
const FEB = at("2026-02-01T00:00:00.000Z");
const MAR = at("2026-03-01T00:00:00.000Z");
const APR = at("2026-04-01T00:00:00.000Z");
const MAY = at("2026-05-01T00:00:00.000Z");
const JUL = at("2026-07-01T00:00:00.000Z");
/** January to June 2026: six whole months. */
const HALF = { start: JAN, end: JUL - 1 };
/** Late June (the data of a month that stops before its end). */
const JUN_END = JUL - 3 * DAY;
const LATER = "2026-11-05T00:00:00.000Z";

const orgWith = (role: "admin" | "member", repos: Record<string, { private: boolean; collaborator?: boolean }>) =>
  summaryOrg("gmatk", role, repos);

/** Each grouping asked three times (builds, reads, reads again) equals the export's rows grouped; answers the rows. */
const agrees = (get: Get, org: string, w: Window, label: string, groupBys: readonly GroupBy[] = ["repo", "author"]) =>
  agreesOverHttp(get, org, w, label, groupBys, { passes: 3 });

async function headCount(org: string): Promise<number> {
  const { results } = await (await shardDb(org))
    .prepare("SELECT COUNT(*) AS n FROM summary_group_month_heads WHERE org_key = ?1 AND lo IS NOT NULL")
    .bind(org)
    .all<{ n: number }>();
  return results[0]?.n ?? 0;
}

/** How many of the window's pull requests the organization's month blocks serve now (admin scope, no list). */
async function servedFromMonths(org: string, w: Window, groupBy: "repo" | "author"): Promise<number> {
  const figures = await summarizeGroupings(await shardDb(org), groupingsOf(org, w, [groupBy]));
  return figures.fromGroupMonths;
}

const REPOS = ["api", "web", "docs"];
const AUTHORS = ["alice", "Bob", "bob", "carol", "BOB"];

/**
 * Three pull requests a day from `from` to `to` (exclusive), deterministic, with nulls, findings
 * and AI lines; numbers from `first`.
 */
function daily(from: number, to: number, first = 1, skip: (day: number) => boolean = () => false): Pr[] {
  const prs: Pr[] = [];
  let n = first;
  for (let day = from, d = 0; day < to; day += DAY, d++) {
    if (skip(day)) continue;
    for (let k = 0; k < 3; k++, n++) {
      const merged = day + (3 + 7 * k + (n % 5)) * HOUR + (n % 13) * 60_000;
      prs.push(
        pr(REPOS[(d + k) % REPOS.length] as string, n, merged, {
          author: AUTHORS[(d * 3 + k) % AUTHORS.length] as string,
          linesAdded: n % 10 === 0 ? null : n * 3,
          findings: n % 4 === 0 ? [{ at: merged - HOUR, fixed: n % 8 === 0 }] : [],
          ...(n % 3 === 0 ? { ai: n % 50 } : {}),
        }),
      );
    }
  }
  return prs;
}

/** Pull requests merged or reviewed on the instants around midnights and months' starts. */
function edges(first: number): Pr[] {
  const list: [merged: number, reviewed: number][] = [
    [JAN - 1, JAN - 2],
    [JAN, JAN - 1],
    [JAN + 1, JAN],
    [FEB - 1, FEB - 1],
    [FEB, FEB - 1],
    [FEB + 1, FEB],
    [MAR, MAR],
    [APR - 1, APR - 2 * HOUR],
    [APR + DAY, APR - 1],
    [MAY - 1, MAY - 1],
    [MAY, MAY - 1],
    [JUL - 1, JUL - 1],
    [JUL, JUL - 1],
    [JUL + 1, JUL],
    [MAR + 10 * DAY, MAR + 10 * DAY - 1], // a midnight inside a month
  ];
  return list.map(([merged, reviewed], i) => ({
    repo: REPOS[i % REPOS.length] as string,
    n: first + i,
    author: AUTHORS[i % AUTHORS.length] as string,
    created: reviewed - (i + 1) * HOUR,
    merged,
    reviews: [reviewed],
    findings: i % 2 === 0 ? [{ at: reviewed, fixed: i % 4 === 0 }] : [],
  }));
}

describe("attack: the month blocks per group against the export", () => {
  it("late events between a reading summary and the next: a review, a finding, a merge moved, an author's case, a rename", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    const prs = daily(JAN, MAY);
    await postEventsOk(eventsOf(org, prs));
    const W = { start: JAN, end: MAY - 1 };
    const before = await agrees(get, org, W, "before");
    expect(before.length).toBe(prs.length);
    expect(await headCount(org)).toBeGreaterThan(0); // the month blocks are built, and read by the later passes
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(300);
    const ref = (p: Pr) => ({ org, repo: p.repo, prNumber: p.n, updatedAt: LATER });
    const inMonth = (from: number, i = 0) => prs.filter((p) => p.merged >= from + 5 * DAY)[i] as Pr;
    // A review earlier than the first one, on a January pull request.
    const jan = inMonth(JAN);
    await postEventsOk([
      { type: "review", ...ref(jan), reviewId: "late-r-1", status: "completed", completedAt: iso(jan.created + 60_000) },
    ]);
    const reviewed = await agrees(get, org, W, "late review");
    expect(reviewed.find((r) => r.prNumber === jan.n)?.serviceFirstReviewedAt).toBe(iso(jan.created + 60_000));
    // A review before the window on a pull request merged on January 2nd; another created a year
    // before its merge (a duration in another bucket); one merged after the window's end.
    const second = prs.find((p) => p.merged >= JAN + DAY) as Pr;
    const old = inMonth(MAR, 7);
    const out = inMonth(APR, 9);
    await postEventsOk([
      { type: "review", ...ref(second), reviewId: "late-r-2", status: "completed", completedAt: iso(JAN - 5 * HOUR) },
      ...eventsOf(org, [
        { ...old, created: old.created - 365 * DAY, version: LATER },
        { ...out, merged: MAY + 2 * DAY, version: LATER },
      ]).filter((e) => (e as { type: string }).type === "pull_request"),
    ]);
    const shifted = await agrees(get, org, W, "review before the window, old creation, merged after");
    // Still listed (its other review is in the window), its first review now before the window.
    expect(shifted.find((r) => r.prNumber === second.n)?.serviceFirstReviewedAt).toBe(iso(JAN - 5 * HOUR));
    expect(shifted.some((r) => r.prNumber === out.n)).toBe(true); // reviewed in the window, merged after it
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(0);
    // A finding added to a February pull request (flagged and fixed).
    const feb = inMonth(FEB);
    await postEventsOk([
      {
        type: "finding",
        ...ref(feb),
        findingId: "late-f-1",
        createdAt: iso(feb.merged - 30 * 60_000),
        posted: true,
        aiAddressed: true,
        feedback: null,
      },
    ]);
    await agrees(get, org, W, "late finding");
    // A March pull request's merge moved to April; an April one's to January.
    const mar = inMonth(MAR);
    const apr = inMonth(APR, 4);
    await postEventsOk(
      eventsOf(org, [
        { ...mar, merged: mar.merged + 25 * DAY, version: LATER },
        { ...apr, merged: JAN + 20 * DAY, created: JAN + 19 * DAY, reviews: [JAN + 19 * DAY + HOUR], version: LATER },
      ]).filter((e) => (e as { type: string }).type !== "finding"),
    );
    await agrees(get, org, W, "merge moved");
    // An author's login changes case on one pull request of each month (alice → ALICE, Bob → bob).
    const recased = prs
      .filter((p) => p.merged < MAY && (p.author === "alice" || p.author === "Bob") && p.n % 11 === 0)
      .map((p) => ({ ...p, author: p.author === "alice" ? "ALICE" : "bob", version: LATER }));
    expect(recased.length).toBeGreaterThan(4);
    await postEventsOk(eventsOf(org, recased).filter((e) => (e as { type: string }).type === "pull_request"));
    const after = await agrees(get, org, W, "author's case");
    expect(after.some((r) => r.author === "ALICE")).toBe(true);
    // docs renamed into web (the rows' move a repository rename makes), then api renamed to API.
    await moveRows(await shardDb(org), { orgKey: org, repo: "docs" }, { orgKey: org, repo: "web" });
    const renamed = await agrees(get, org, W, "docs into web");
    expect(renamed.some((r) => r.repo === "docs")).toBe(false);
    await moveRows(await shardDb(org), { orgKey: org, repo: "api" }, { orgKey: org, repo: "Core" });
    const core = await agrees(get, org, W, "api to Core");
    expect(core.some((r) => r.repo === "Core")).toBe(true);
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(300);
  });

  it("windows whose start or end falls a millisecond either side of midnight or of a month's start", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    await postEventsOk(eventsOf(org, [...daily(JAN - 3 * DAY, JUL + 3 * DAY), ...edges(10_000)]));
    const windows: Window[] = [
      HALF,
      { start: JAN - 1, end: JUL - 1 },
      { start: JAN + 1, end: JUL - 2 },
      { start: JAN, end: JUL },
      { start: FEB - 1, end: JUL + 1 },
      { start: FEB + 1, end: JUL - 1 },
      { start: FEB, end: MAY + 10 * DAY - 1 },
      { start: JAN + 10 * DAY + 1, end: MAY + 10 * DAY },
      { start: MAR + 10 * DAY - 1, end: JUL - 1 },
      { start: MAR + 10 * DAY, end: JUL + 1 },
    ];
    for (const w of windows) {
      await agrees(get, org, w, `${iso(w.start)}..${iso(w.end)}`);
      for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, w, g), g).toBeGreaterThan(0);
    }
    // Asked again in another order, now that every window's runs are built.
    for (const w of [...windows].reverse()) await agrees(get, org, w, `again ${iso(w.start)}..${iso(w.end)}`);
  });

  it("months with no pull requests, a month with one group only, and groups differing only by case", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    // January and May full; February and April empty; March only api by Bob; June only a few days.
    const march = daily(MAR, APR, 5_000).map((p) => ({ ...p, repo: "api", author: "Bob" }));
    const prs = [
      ...daily(JAN, FEB),
      ...march,
      ...daily(MAY, JUN_END, 7_000),
      ...daily(JUL - 3 * DAY, JUL, 9_000, (day) => day === JUL - 2 * DAY),
      // bob and BOB in March too, on other repositories, on the month's last day.
      pr("web", 9_500, APR - HOUR, { author: "bob" }),
      pr("docs", 9_501, APR - 2 * HOUR, { author: "BOB" }),
    ];
    await postEventsOk(eventsOf(org, prs));
    for (const w of [HALF, { start: FEB, end: MAY - 1 }, { start: FEB, end: JUL - 1 }, { start: JAN, end: APR - 1 }]) {
      const rows = await agrees(get, org, w, `${iso(w.start)}..${iso(w.end)}`);
      if (w.start <= MAR && w.end >= APR - 1)
        expect(new Set(rows.filter((r) => r.author.toLowerCase() === "bob").map((r) => r.author))).toEqual(
          new Set(["Bob", "bob", "BOB"]),
        );
    }
    // The only March group changes its case on every pull request: March is then bob's alone.
    await postEventsOk(
      eventsOf(
        org,
        march.map((p) => ({ ...p, author: "bob", version: LATER })),
      ).filter((e) => (e as { type: string }).type === "pull_request"),
    );
    await agrees(get, org, HALF, "March recased");
    // An empty month gets one pull request.
    await postEventsOk(eventsOf(org, [pr("web", 9_600, FEB + 14 * DAY + HOUR, { author: "Bob" })]));
    await agrees(get, org, HALF, "February's first");
  });

  it("both groupings in one request through the dashboard's summaries, built and read", { timeout: 300_000 }, async () => {
    const { org, user, get } = await orgWith("admin", {
      api: { private: false },
      web: { private: false },
      docs: { private: true },
    });
    await postEventsOk(eventsOf(org, [...daily(JAN, MAY), ...edges(10_000)]));
    const session = await signIn(user);
    const W = { start: JAN, end: MAY - 1 };
    const q = windowQuery(org, W);
    const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    for (const groupBys of [
      ["repo", "author"],
      ["author", "repo"],
      ["repo", "author"],
    ] as GroupBy[][]) {
      SUMMARY_PLANS.clear();
      const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=${groupBys.join(",")}`, session);
      expect(res.status).toBe(200);
      const { summaries } = (await res.json()) as { summaries: unknown[] };
      expect(summaries, groupBys.join()).toEqual(groupBys.map((g) => referenceAnswer(org, rows, g, W.start, W.end)));
    }
    expect(await headCount(org)).toBeGreaterThan(0);
    // A late write, then the dashboard first (it builds), then the public summary reads.
    const late = rows[rows.length >> 1] as ExportRow;
    await postEventsOk(
      eventsOf(org, [{ ...pr(late.repo, late.prNumber, FEB + 3 * DAY), author: "Zed", version: LATER }]).filter(
        (e) => (e as { type: string }).type === "pull_request",
      ),
    );
    const after = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    expect(after.some((r) => r.author === "Zed")).toBe(true);
    for (let pass = 0; pass < 2; pass++) {
      SUMMARY_PLANS.clear();
      const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=repo,author`, session);
      expect(res.status).toBe(200);
      const { summaries } = (await res.json()) as { summaries: unknown[] };
      expect(summaries).toEqual((["repo", "author"] as const).map((g) => referenceAnswer(org, after, g, W.start, W.end)));
    }
    await agrees(get, org, W, "public after the dashboard");
  });

  it("a member (not admin) never uses the month blocks, before or after an admin built them", { timeout: 300_000 }, async () => {
    const repos = {
      api: { private: false },
      web: { private: false },
      infra: { private: true, collaborator: true },
      vault: { private: true },
    };
    const member = await orgWith("member", repos);
    const org = member.org;
    const adminGet = await adminGetOf(org);
    const prs = daily(JAN, MAY).map((p, i) => ({ ...p, repo: ["api", "web", "infra", "vault"][i % 4] as string }));
    await postEventsOk(eventsOf(org, prs));
    const W = { start: JAN, end: MAY - 1 };
    const seen = await agrees(member.get, org, W, "member first");
    expect(new Set(seen.map((r) => r.repo))).toEqual(new Set(["api", "web", "infra"]));
    expect(await headCount(org)).toBe(0);
    // The admin builds the organization's month blocks; the member's answers stay its own.
    const all = await agrees(adminGet, org, W, "admin");
    expect(all.length).toBe(prs.length);
    expect(await headCount(org)).toBeGreaterThan(0);
    await agrees(member.get, org, W, "member after the admin's blocks");
    // vault's rows moved into infra (a rename): the member now sees them.
    await moveRows(await shardDb(org), { orgKey: org, repo: "vault" }, { orgKey: org, repo: "infra" });
    const moved = await agrees(member.get, org, W, "member after vault into infra");
    expect(moved.length).toBe(prs.length);
    await agrees(adminGet, org, W, "admin after vault into infra");
    await agrees(member.get, org, W, "member once more");
  });

  it("a repository spelled differently by later pull requests of a built month, and a write between the build and the read", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    await postEventsOk(eventsOf(org, daily(JAN, MAY)));
    const W = { start: JAN, end: MAY - 1 };
    await agrees(get, org, W, "before");
    // New pull requests of api spelled API and Api in February, and one of web spelled WEB in March.
    await postEventsOk(
      eventsOf(org, [
        pr("API", 8_001, FEB + 3 * DAY + 5 * HOUR, { author: "bob" }),
        pr("Api", 8_002, FEB + 9 * DAY + 5 * HOUR, { author: "Bob" }),
        pr("WEB", 8_003, MAR + 20 * DAY + 5 * HOUR, { author: "carol" }),
      ]),
    );
    const spelled = await agrees(get, org, W, "spellings");
    expect(spelled.filter((r) => r.prNumber >= 8_001)).toHaveLength(3);
    // The building request, then a write on a day of a whole month, then the reading one.
    const q = windowQuery(org, W);
    for (const groupBy of ["repo", "author"] as const) {
      await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`);
      await postEventsOk(eventsOf(org, [pr("docs", 8_100 + (groupBy === "repo" ? 0 : 1), APR + 12 * DAY, { author: "erin" })]));
      const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
      expect(await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`), `${groupBy} after the write`).toEqual(
        referenceAnswer(org, rows, groupBy, W.start, W.end),
      );
    }
    await agrees(get, org, W, "after the writes");
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(300);
  });

  it("exact lower medians from month blocks over thousands of pull requests: negative, zero, equal and year-long durations", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false } });
    const next = seededRandom(4_242);
    const prs: Pr[] = [];
    const durations = [0, 1, 999, HOUR, DAY, 365 * DAY];
    for (let n = 1; n <= 2_600; n++) {
      const merged = JAN + Math.floor(next() * (MAY - JAN - HOUR)) + 30 * 60_000;
      const choice = next();
      const age =
        choice < 0.3 ? (durations[Math.floor(next() * durations.length)] as number) : Math.floor(next() * 40 * DAY) - 2 * DAY;
      const created = merged - age;
      // A review inside the window: before creation (a negative duration) or after.
      const reviewed = Math.max(JAN, Math.min(merged, created + Math.floor((next() - 0.3) * 3 * DAY)));
      prs.push({
        repo: next() < 0.7 ? "api" : "web",
        n,
        author: next() < 0.5 ? "alice" : next() < 0.5 ? "Bob" : "bob",
        created,
        merged,
        reviews: [reviewed],
        linesAdded: n % 17 === 0 ? null : n,
      });
    }
    await postEventsOk(eventsOf(org, prs));
    const W = { start: JAN, end: MAY - 1 };
    const rows = await agrees(get, org, W, "medians");
    expect(rows.length).toBe(prs.length);
    expect(rows.some((r) => Date.parse(r.serviceFirstReviewedAt) < Date.parse(r.createdAt))).toBe(true);
    expect(rows.some((r) => Date.parse(r.mergedAt) < Date.parse(r.createdAt))).toBe(true);
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(2_000);
    // One pull request's creation moved a year back: every median's position shifts by one in its groups.
    const moved = prs[1_300] as Pr;
    await postEventsOk(
      eventsOf(org, [{ ...moved, created: moved.created - 365 * DAY, version: LATER }]).filter(
        (e) => (e as { type: string }).type === "pull_request",
      ),
    );
    await agrees(get, org, W, "medians after a move");
    await agrees(get, org, { start: JAN + 5 * DAY + 1, end: MAY + 3 * DAY }, "medians, partial months");
  });

  it("an organization moved to the other shard after its month blocks were built, then another organization's rows moved in", {
    timeout: 300_000,
  }, async () => {
    const repos = { api: { private: false }, web: { private: false }, docs: { private: false } };
    const { org, get } = await orgWith("admin", repos);
    const other = await orgWith("admin", repos);
    await postEventsOk(eventsOf(org, daily(JAN, MAY)));
    // The other organization: numbers that collide (1 to 30, an older version) and new ones, in January and March.
    await postEventsOk(
      eventsOf(other.org, [
        ...daily(JAN, JAN + 10 * DAY).map((p) => ({ ...p, author: "zed", version: "2026-10-01T00:00:00.000Z" })),
        ...daily(MAR, MAR + 10 * DAY, 6_000).map((p) => ({ ...p, author: "yan" })),
      ]),
    );
    const W = { start: JAN, end: MAY - 1 };
    await agrees(get, org, W, "before");
    await agrees(other.get, other.org, W, "other before");
    await moveToOtherShard(org);
    await agrees(get, org, W, "after the move");
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(300);
    const shardOf = async (o: string) =>
      ((await (await admin("GET", `/internal/v1/organizations/${o}/move`)).json()) as { shard: string }).shard;
    if ((await shardOf(org)) !== (await shardOf(other.org))) await moveToOtherShard(other.org);
    expect(await shardOf(other.org)).toBe(await shardOf(org));
    await moveRows(await shardDb(org), { orgKey: other.org }, { orgKey: org });
    const merged = await agrees(get, org, W, "the other's rows moved in");
    expect(merged.filter((r) => r.author === "yan")).toHaveLength(30);
    expect(merged.some((r) => r.author === "zed")).toBe(false); // older versions: this organization's rows stay
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, W, g), g).toBeGreaterThan(300);
  });

  it("late findings and reviews just outside the window on pull requests of whole months (counted only inside it)", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await orgWith("admin", { api: { private: false }, web: { private: false }, docs: { private: false } });
    const prs = daily(JAN - 2 * DAY, MAY + 2 * DAY);
    await postEventsOk(eventsOf(org, prs));
    const W = { start: FEB, end: MAY - 1 }; // 89 full days: too few, so also the wider window
    const WIDE = { start: JAN, end: MAY - 1 };
    for (const w of [W, WIDE]) await agrees(get, org, w, "before");
    const ref = (p: Pr) => ({ org, repo: p.repo, prNumber: p.n, updatedAt: LATER });
    const finding = (p: Pr, id: string, at: number, posted = true) => ({
      type: "finding",
      ...ref(p),
      findingId: id,
      createdAt: iso(at),
      posted,
      aiAddressed: true,
      feedback: null,
    });
    const pick = (from: number, i: number) => prs.filter((p) => p.merged >= from)[i] as Pr;
    // Findings on pull requests merged in February and March, dated a millisecond either side of
    // the window's ends, at them, long before, and one not posted.
    await postEventsOk([
      finding(pick(FEB, 3), "x-1", JAN - 1),
      finding(pick(FEB, 4), "x-2", JAN),
      finding(pick(FEB, 5), "x-3", JAN + 1),
      finding(pick(MAR, 6), "x-4", MAY - 1),
      finding(pick(MAR, 7), "x-5", MAY),
      finding(pick(MAR, 8), "x-6", at("2025-06-01T00:00:00.000Z")),
      finding(pick(MAR, 9), "x-7", MAR + DAY, false),
    ]);
    const rows = await agrees(get, org, WIDE, "findings at the edges");
    expect(rows.find((r) => r.prNumber === pick(MAR, 7).n)?.numberOfServiceIssuesFlagged).toBe(
      prs.find((p) => p.n === pick(MAR, 7).n)?.findings?.length,
    );
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, WIDE, g), g).toBeGreaterThan(0);
    // Reviews after the window's end (and at it) on pull requests merged in April and February;
    // one before its start on a March pull request (its first review, before the window).
    await postEventsOk([
      { type: "review", ...ref(pick(APR, 2)), reviewId: "y-1", status: "completed", completedAt: iso(MAY) },
      { type: "review", ...ref(pick(APR, 3)), reviewId: "y-2", status: "completed", completedAt: iso(MAY - 1) },
      { type: "review", ...ref(pick(FEB, 10)), reviewId: "y-3", status: "completed", completedAt: iso(JUL) },
      { type: "review", ...ref(pick(MAR, 11)), reviewId: "y-4", status: "completed", completedAt: iso(JAN - 1) },
      { type: "review", ...ref(pick(MAR, 12)), reviewId: "y-5", status: "in_progress", completedAt: null },
      { type: "review", ...ref(pick(MAR, 13)), reviewId: "y-6", status: "failed", completedAt: iso(MAR + 2 * DAY) },
      // An April pull request's only review turns failed: it leaves the export.
      {
        type: "review",
        ...ref(pick(APR, 14)),
        reviewId: `r-${pick(APR, 14).repo}-${pick(APR, 14).n}-0`,
        status: "failed",
        completedAt: iso(pick(APR, 14).reviews[0] as number),
      },
    ]);
    const reviewed = await agrees(get, org, WIDE, "reviews at the edges");
    expect(reviewed.some((r) => r.prNumber === pick(APR, 14).n)).toBe(false);
    await agrees(get, org, { start: JAN - 1, end: MAY }, "a millisecond wider");
    await agrees(get, org, { start: JAN + 1, end: MAY - 2 }, "a millisecond narrower");
    for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, WIDE, g), g).toBeGreaterThan(0);
  });

  it("a member who can read every repository, then a repository made private between two of its summaries", {
    timeout: 300_000,
  }, async () => {
    const member = await orgWith("member", { api: { private: false }, web: { private: false }, vault: { private: false } });
    const org = member.org;
    const adminGet = await adminGetOf(org);
    const prs = daily(JAN, MAY).map((p, i) => ({ ...p, repo: ["api", "web", "vault"][i % 3] as string }));
    await postEventsOk(eventsOf(org, prs));
    const W = { start: JAN, end: MAY - 1 };
    expect(await agrees(member.get, org, W, "member sees all")).toHaveLength(prs.length);
    expect(await headCount(org)).toBe(0); // a member never builds month blocks, even one who reads every repository
    await agrees(adminGet, org, W, "admin builds");
    expect(await headCount(org)).toBeGreaterThan(0);
    await agrees(member.get, org, W, "member after the admin's blocks");
    // vault becomes private (the member is no collaborator): gone from the member's export and summary.
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/vault`, { private: true, collaborators: [] });
    const hidden = await agrees(member.get, org, W, "vault private");
    expect(hidden.some((r) => r.repo === "vault")).toBe(false);
    expect(hidden.length).toBeGreaterThan(0);
    expect(await agrees(adminGet, org, W, "admin after vault private")).toHaveLength(prs.length);
    // And public again.
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/vault`, { private: false });
    expect(await agrees(member.get, org, W, "vault public again")).toHaveLength(prs.length);
  });

  it("the dashboard's two groupings when only one kind's month blocks exist, or each kind's for another run", {
    timeout: 300_000,
  }, async () => {
    const { org, user, get } = await orgWith("admin", {
      api: { private: false },
      web: { private: false },
      docs: { private: false },
    });
    await postEventsOk(eventsOf(org, daily(JAN, JUL)));
    const session = await signIn(user);
    const dashboard = async (w: Window, label: string) => {
      const q = windowQuery(org, w);
      const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
      for (const groupBys of [
        ["repo", "author"],
        ["author", "repo"],
      ] as GroupBy[][]) {
        SUMMARY_PLANS.clear();
        const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=${groupBys.join(",")}`, session);
        expect(res.status).toBe(200);
        const { summaries } = (await res.json()) as { summaries: unknown[] };
        expect(summaries, `${label} ${groupBys.join()}`).toEqual(
          groupBys.map((g) => referenceAnswer(org, rows, g, w.start, w.end)),
        );
      }
    };
    const A = { start: JAN + 9 * DAY, end: JUL - 1 };
    const B = { start: JAN, end: MAY + 20 * DAY - 1 };
    // Only the repository kind's blocks for A, only the author kind's for B.
    await agrees(get, org, A, "repo over A", ["repo"]);
    await agrees(get, org, B, "author over B", ["author"]);
    for (const w of [A, B]) await dashboard(w, `${iso(w.start)}..${iso(w.end)}`);
    for (const w of [A, B]) await dashboard(w, `again ${iso(w.start)}..${iso(w.end)}`);
    for (const w of [A, B])
      for (const g of ["repo", "author"] as const) expect(await servedFromMonths(org, w, g), g).toBeGreaterThan(0);
    // A write in May (inside both windows' whole months), then the dashboard first.
    await postEventsOk(eventsOf(org, [pr("docs", 9_900, MAY + 4 * DAY, { author: "zed" })]));
    for (const w of [A, B, A]) await dashboard(w, `after the write ${iso(w.start)}..${iso(w.end)}`);
    await agrees(get, org, A, "public after the write");
  });
});
