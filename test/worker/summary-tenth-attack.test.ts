import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { DURATION_BUCKET_BOUNDS } from "../../src/rules/duration-buckets";
import { SUMMARY_LIMITS, summarizeGroupings } from "../../src/storage/analytics-summary";
import { moveRows } from "../../src/storage/renames";
import type { GroupMonth } from "../../src/storage/summary-group-months";
import { buildGroupSpan, KEPT_SPANS, spanOf } from "../../src/storage/summary-group-spans";
import { appCall, signIn } from "./app-helpers";
import { admin, moveToOtherShard, postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr } from "./summary-attack-data";
import {
  adminGetOf,
  agrees,
  type Get,
  getWithKey,
  groupingsOf,
  refusingOnePart,
  summaryOrg,
  type Window,
  windowQuery,
} from "./summary-attack-http";
import { type ExportRow, exportRows, type GroupBy, referenceAnswer, referenceSummary } from "./summary-reference";
import { byKey, plan, servedSpans, spans } from "./summary-span-helpers";
import { deliverQueued, example, repoId, world } from "./webhook-helpers";

/**
 * An outside review's attacks on the tenth session's summary changes (issue 31): spans of whole
 * months per repository or author (migration 0016), month heads and spans served with the
 * corrections of their straddled days, the walk of the window's edges in one part per group (run
 * again in parts when D1 refuses it), and the removal of a few values from a sorted run. The oracle
 * is contract section 12 (and 3, 21): the summary is exactly the export's rows for the same
 * parameters, every page, grouped, medians included. A failing test is a finding.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const at = (text: string) => Date.parse(text);
const day = (text: string) => at(`${text}T00:00:00Z`) / DAY;
const iso = (ms: number) => new Date(ms).toISOString();

const NOV = at("2025-11-01T00:00:00Z");
/** November 2025 to May 2026: seven whole months. */
const WINDOW: Window = { start: NOV, end: at("2026-06-01T00:00:00Z") - 1 };
const REPOS = ["api", "Web", "docs", "seasonal", "attic"];
const AUTHORS = ["alice", "Bob", "bob", "a.b-c_d", "carol"];
const ALL = Object.fromEntries(REPOS.map((r) => [r, { private: false }]));
const LATER = "2026-11-20T00:00:00.000Z";

/** Durations on bucket bounds, a millisecond around them, and negative ones. */
const ODD = [0, -HOUR, -1, ...[40, 41, 90, 120].flatMap((b) => [-1, 0, 1].map((d) => (DURATION_BUCKET_BOUNDS[b] as number) + d))];

/**
 * Pull requests every few hours from `from` to `to`: reviewed and merged on their day; durations
 * often on a bucket's bound or negative (a review completed before the pull request was opened);
 * `seasonal` only in December and January, `temp` only in February.
 */
function pullRequests(seed: number, from: number, to: number, first = 1): Pr[] {
  const random = seededRandom(seed);
  const prs: Pr[] = [];
  for (let t = from + 2 * HOUR, n = first; t < to - 8 * HOUR; t += (6 + Math.floor(random() * 30)) * HOUR, n++) {
    const merged = t + Math.floor(random() * 3 * HOUR);
    const odd = random() < 0.4;
    const created = odd
      ? merged - Math.max(0, ODD[Math.floor(random() * ODD.length)] as number)
      : merged - (3 + Math.floor(random() * 5)) * HOUR;
    const review = odd
      ? created + (ODD[Math.floor(random() * ODD.length)] as number)
      : created + Math.floor(random() * 2 * HOUR) + 1;
    const month = new Date(merged).getUTCMonth();
    const repo =
      month === 11 || month === 0 ? (random() < 0.3 ? "seasonal" : "api") : (REPOS[Math.floor(random() * 3)] as string);
    prs.push({
      repo,
      n,
      author: month === 1 && random() < 0.3 ? "temp" : (AUTHORS[Math.floor(random() * AUTHORS.length)] as string),
      created,
      merged,
      reviews: [review, ...(random() < 0.2 ? [merged - 1] : [])],
      linesAdded: random() < 0.1 ? null : Math.floor(random() * 500),
      findings: random() < 0.3 ? [{ at: Math.max(created, review), fixed: random() < 0.5 }] : [],
      ...(random() < 0.5 ? { ai: Math.floor(random() * 100) } : {}),
    });
  }
  return prs;
}

/**
 * Pull requests merged on many days of the window's whole months whose reviews or findings lie
 * before its start or after its end: `ghost` (in `attic`) has only pull requests reviewed before the
 * start, never listed, so its group is wholly removed by the corrections.
 */
function straddlers(w: Window, first: number, every = 3): Pr[] {
  const prs: Pr[] = [];
  let n = first;
  const s = w.start;
  const e = w.end;
  for (let d = Math.ceil(s / DAY) * DAY + DAY; d + DAY <= e; d += every * DAY) {
    const k = (d / DAY) % 4;
    const author = AUTHORS[k] as string;
    const repo = REPOS[k % 3] as string;
    // Only a review a millisecond before the start: in its day's block, never listed.
    prs.push({ repo: "attic", n: n++, author: "ghost", created: s - 3 * HOUR, merged: d + 10 * HOUR, reviews: [s - 1] });
    // Reviewed before the start and inside; a finding before and one after.
    prs.push({
      repo,
      n: n++,
      author,
      created: s - 5 * HOUR,
      merged: d + 11 * HOUR,
      reviews: [s - 2 * HOUR, d + 9 * HOUR],
      findings: [
        { at: s - HOUR, fixed: true },
        { at: e + HOUR, fixed: false },
      ],
      ai: k * 7,
    });
    // Reviewed inside and after the end; a finding after the end only.
    prs.push({
      repo,
      n: n++,
      author: AUTHORS[(k + 1) % AUTHORS.length] as string,
      created: d + 2 * HOUR,
      merged: d + 12 * HOUR,
      reviews: [d + 3 * HOUR, e + 2 * HOUR],
      findings: [{ at: e + 3 * HOUR, fixed: true }],
    });
    // Reviewed only after the end.
    prs.push({ repo, n: n++, author: "carol", created: d + HOUR, merged: d + 13 * HOUR, reviews: [e + 4 * HOUR] });
  }
  return prs;
}

/** The storage function's answer for `groupBys` equals `rows` grouped (groups with rows only). */
async function directAgrees(org: string, w: Window, groupBys: GroupBy[], rows: ExportRow[], label: string, db?: D1Database) {
  const figures = await summarizeGroupings(db ?? (await shardDb(org)), groupingsOf(org, w, groupBys));
  groupBys.forEach((g, i) => {
    const want = referenceSummary(rows, g, w.start, w.end);
    expect(byKey(figures.groupings[i]?.groups ?? []), `${label} ${g}`).toEqual(
      byKey(want.groups.filter((x) => x.pullRequests > 0)),
    );
    expect(figures.groupings[i]?.totals, `${label} ${g} totals`).toEqual(want.totals);
  });
  return figures;
}

const exportOf = (get: Get, org: string, w: Window, extra = "") =>
  exportRows<ExportRow>(get, `${windowQuery(org, w)}${extra}`, { perPage: 100, maxPages: 100 });

/** The dashboard's combined request, asked three times, equals the export's rows grouped by week, repo and author. */
async function dashboardAgrees(
  org: string,
  user: string,
  get: Get,
  w: Window,
  label: string,
  groupBys: readonly GroupBy[] = ["week", "repo", "author"],
) {
  const session = await signIn(user);
  const q = windowQuery(org, w);
  const rows = await exportOf(get, org, w);
  for (let pass = 0; pass < 3; pass++) {
    SUMMARY_PLANS.clear();
    const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=${groupBys.join(",")}`, session);
    expect(res.status).toBe(200);
    const { summaries } = (await res.json()) as { summaries: unknown[] };
    expect(summaries, `${label} pass ${pass}`).toEqual(groupBys.map((g) => referenceAnswer(org, rows, g, w.start, w.end)));
  }
}

async function seeded(seed: number, prefix = "tenth") {
  const o = await summaryOrg(prefix, "admin", ALL);
  const prs = [...pullRequests(seed, NOV - 5 * DAY, WINDOW.end + 5 * DAY), ...straddlers(WINDOW, 50_000)];
  await postEventsOk(eventsOf(o.org, prs));
  return { ...o, prs };
}

describe("the tenth session's summary, attacked", () => {
  it("whole months full of straddled days, groups of some months only, a group wholly removed, odd durations: spans as the export counts", {
    timeout: 300_000,
  }, async () => {
    const { org, user, get } = await seeded(101);
    const rows = await agrees(get, org, WINDOW, "whole months", ["repo", "author"], { passes: 3 });
    expect(rows.some((r) => r.author === "ghost")).toBe(false);
    expect(rows.some((r) => r.author === "temp")).toBe(true);
    expect(rows.some((r) => r.repo === "seasonal")).toBe(true);
    // A span per kind, ending with May (November may be left to its months).
    expect((await spans(org)).map((s) => [s.kind, s.first <= day("2025-12-01"), s.last])).toEqual([
      ["author", true, day("2026-05-31")],
      ["repo", true, day("2026-05-31")],
    ]);
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    const figures = await directAgrees(org, WINDOW, ["repo", "author"], rows, "direct");
    await directAgrees(org, WINDOW, ["week", "repo", "author"], rows, "direct, with weeks");
    expect(figures.fromGroupMonths).toBeGreaterThan(0);
    await dashboardAgrees(org, user, get, WINDOW, "dashboard");
    // Other windows over the same span: the edges a few hours in, and a window ending inside May.
    for (const w of [
      { start: NOV + 12 * HOUR, end: WINDOW.end },
      { start: NOV, end: at("2026-05-20T06:00:00Z") },
      { start: NOV - 1, end: WINDOW.end + 1 },
    ])
      await agrees(get, org, w, `window ${iso(w.start)}..${iso(w.end)}`, ["repo", "author"], { passes: 3 });
    await agrees(get, org, WINDOW, "by author within repo", ["author"], { extra: "&repo=api,Web", passes: 2 });
  });

  it("a write racing the read of a span (before the medians, before the walk) answers the export before or after it", {
    timeout: 300_000,
  }, async () => {
    const { org, get, prs } = await seeded(102);
    await agrees(get, org, WINDOW, "built", ["repo", "author"], { passes: 3 });
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    const db = await shardDb(org);
    const listed = prs.filter(
      (p) => p.n < 50_000 && p.merged > at("2026-02-01T00:00:00Z") && p.merged < at("2026-05-01T00:00:00Z"),
    );
    let v = 0;
    for (const hook of ["beforeMedians", "beforeWalk"] as const) {
      const before = await exportOf(get, org, WINDOW);
      const target = listed[v * 3] as Pr;
      v++;
      let fired = 0;
      const figures = await summarizeGroupings(db, groupingsOf(org, WINDOW, ["repo", "author"]), SUMMARY_LIMITS, {
        [hook]: async () => {
          if (fired++ > 0) return;
          // A new version of a pull request of a span's month: its lines and author change.
          await postEventsOk(eventsOf(org, [{ ...target, linesAdded: 777_777, author: "racer", version: LATER }]));
        },
      });
      expect(fired, hook).toBeGreaterThan(0);
      const after = await exportOf(get, org, WINDOW);
      expect(after).not.toEqual(before);
      const answer = (rows: ExportRow[]) =>
        (["repo", "author"] as const).map((g) => {
          const want = referenceSummary(rows, g, WINDOW.start, WINDOW.end);
          return { groups: byKey(want.groups.filter((x) => x.pullRequests > 0)), totals: want.totals };
        });
      const got = figures.groupings.map((x) => ({ groups: byKey(x.groups), totals: x.totals }));
      expect([answer(before), answer(after)], hook).toContainEqual(got);
      await agrees(get, org, WINDOW, `after ${hook}`, ["repo", "author"], { passes: 3 });
    }
  });

  it("repositories renamed after the spans were built, and while a span is being built", { timeout: 300_000 }, async () => {
    const { org, get } = await seeded(103);
    await agrees(get, org, WINDOW, "built", ["repo", "author"], { passes: 3 });
    expect(await spans(org)).toHaveLength(2);
    // docs into Web (the rows' move a rename makes), api to Core: the spans' group keys are stale.
    await moveRows(await shardDb(org), { orgKey: org, repo: "docs" }, { orgKey: org, repo: "Web" });
    await moveRows(await shardDb(org), { orgKey: org, repo: "api" }, { orgKey: org, repo: "Core" });
    const rows = await agrees(get, org, WINDOW, "renamed", ["repo", "author"], { passes: 3 });
    expect(rows.some((r) => r.repo === "docs" || r.repo === "api")).toBe(false);
    expect(rows.some((r) => r.repo === "Core")).toBe(true);
    await directAgrees(org, WINDOW, ["repo", "author"], rows, "renamed, direct");
    // A rename between the span's rows and its head: no head; the answer still the export's.
    const db = await shardDb(org);
    await db.prepare("DELETE FROM summary_group_span_heads WHERE org_key = ?1").bind(org).run();
    const months = spanOf((await plan(org, WINDOW, ["repo"])).served) as GroupMonth[];
    expect(months?.length).toBe(7);
    const made = await buildGroupSpan(db, org, "repo", months, {
      beforeHead: async () => void (await moveRows(db, { orgKey: org, repo: "seasonal" }, { orgKey: org, repo: "Winter" })),
    });
    expect(made).toBe("not made");
    const after = await agrees(get, org, WINDOW, "renamed while built", ["repo", "author"], { passes: 3 });
    expect(after.some((r) => r.repo === "Winter")).toBe(true);
    await directAgrees(org, WINDOW, ["repo"], after, "renamed while built, direct");
  });

  it("a 400-day window across a year boundary, and thirteen whole months across it", { timeout: 300_000 }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    const long = { start: at("2025-10-17T06:00:00Z"), end: at("2026-11-21T06:00:00Z") - 1 };
    const whole = { start: at("2025-12-01T00:00:00Z"), end: at("2027-01-01T00:00:00Z") - 1 };
    const random = seededRandom(104);
    const prs: Pr[] = [];
    for (
      let t = at("2025-10-10T00:00:00Z"), n = 1;
      t < at("2027-01-05T00:00:00Z");
      t += (20 + Math.floor(random() * 30)) * HOUR, n++
    ) {
      const created = t - (1 + Math.floor(random() * 40)) * HOUR;
      prs.push({
        repo: REPOS[n % 3] as string,
        n,
        author: AUTHORS[n % AUTHORS.length] as string,
        created,
        merged: t,
        reviews: [created + Math.floor(random() * 50) * MINUTE + 1],
        findings: n % 4 === 0 ? [{ at: t - HOUR, fixed: n % 8 === 0 }] : [],
      });
    }
    await postEventsOk(eventsOf(org, [...prs, ...straddlers(long, 70_000, 9), ...straddlers(whole, 80_000, 11)]));
    for (const [label, w] of [
      ["400 days", long],
      ["13 months", whole],
    ] as const) {
      const rows = await agrees(get, org, w, label, ["repo", "author", "month"], { passes: 3 });
      expect(rows.length).toBeGreaterThan(150);
      expect((await servedSpans(org, w, ["repo", "author"])).length, label).toBeGreaterThan(0);
      await directAgrees(org, w, ["repo", "author"], rows, `${label} direct`);
    }
  });

  it("spans evicted (a kind keeps its latest) while another is read, and spans made of a span and months", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await seeded(105);
    const month = (m: string) => at(`${m}-01T00:00:00Z`);
    const runs: Window[] = [
      { start: month("2025-11"), end: month("2026-02") - 1 },
      { start: month("2025-12"), end: month("2026-03") - 1 },
      { start: month("2026-01"), end: month("2026-04") - 1 },
      { start: month("2026-02"), end: month("2026-06") - 1 },
    ];
    for (const w of runs) await agrees(get, org, w, `run ${iso(w.start)}`, ["repo"], { passes: 3 });
    expect((await spans(org)).filter((s) => s.kind === "repo").length).toBeGreaterThan(0);
    // The months of February to May, as a summary serves them without spans.
    const db = await shardDb(org);
    await db.prepare("DELETE FROM summary_group_span_heads WHERE org_key = ?1").bind(org).run();
    const months = spanOf((await plan(org, runs[3] as Window, ["repo"])).served) as GroupMonth[];
    expect(months?.length).toBe(4);
    // The whole window: its span made again, then served.
    const rows = await agrees(get, org, WINDOW, "whole", ["repo"], { passes: 3 });
    expect(await servedSpans(org, WINDOW, ["repo"])).toEqual([["repo", day("2025-11-01"), day("2026-05-31")]]);
    // Spans built while the whole one is read: it is evicted between the counts and the medians.
    let now = Date.now() + 10_000;
    let fired = 0;
    const figures = await summarizeGroupings(db, groupingsOf(org, WINDOW, ["repo"]), SUMMARY_LIMITS, {
      beforeMedians: async () => {
        if (fired++ > 0) return;
        for (let i = 0; i < KEPT_SPANS; i++) expect(await buildGroupSpan(db, org, "repo", months, { now: now++ })).toBe("made");
      },
    });
    expect(fired).toBeGreaterThan(0);
    const want = referenceSummary(rows, "repo", WINDOW.start, WINDOW.end);
    expect(byKey(figures.groupings[0]?.groups ?? [])).toEqual(byKey(want.groups.filter((g) => g.pullRequests > 0)));
    expect(figures.groupings[0]?.totals).toEqual(want.totals);
    for (const w of [...runs, WINDOW]) await agrees(get, org, w, `after eviction ${iso(w.start)}`, ["repo"], { passes: 2 });
  });

  it("members' access lists and section 21's lists are never served from spans; a shard move after the spans", {
    timeout: 300_000,
  }, async () => {
    const member = await summaryOrg("tenth", "member", {
      api: { private: false },
      Web: { private: false },
      docs: { private: true, collaborator: true },
      seasonal: { private: true },
      attic: { private: false },
    });
    const { org } = member;
    const adminGet = await adminGetOf(org);
    await postEventsOk(eventsOf(org, [...pullRequests(106, NOV - 5 * DAY, WINDOW.end + 5 * DAY), ...straddlers(WINDOW, 50_000)]));
    const all = await agrees(adminGet, org, WINDOW, "admin", ["repo", "author"], { passes: 3 });
    expect(await spans(org)).toHaveLength(2);
    const cases: [string, Get, string][] = [
      ["member", member.get, ""],
      ["member, listed", member.get, "&repo=docs,api"],
      ["admin, repositories", adminGet, "&repo=Web,seasonal"],
      ["admin, authors", adminGet, "&author=Bob,carol"],
      ["admin, both", adminGet, "&repo=api&author=alice,bob"],
    ];
    const check = async (when: string) => {
      for (const [label, get, extra] of cases) {
        const rows = await agrees(get, org, WINDOW, `${when} ${label}`, ["repo", "author"], { extra, passes: 2 });
        expect(rows.length, label).toBeLessThan(all.length);
      }
    };
    await check("before the move");
    await moveToOtherShard(org);
    await agrees(adminGet, org, WINDOW, "admin after the move", ["repo", "author"], { passes: 3 });
    await check("after the move");
  });

  it("the walk in one part per group, refused by D1 and run again in parts, with straddled spans served", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await seeded(107);
    // Edges inside days: the walk of the edges holds many groups' rows.
    const w = { start: NOV + 7 * HOUR, end: at("2026-05-31T17:00:00Z") };
    const rows = await agrees(get, org, w, "built", ["repo", "author"], { passes: 3 });
    expect((await servedSpans(org, w, ["repo", "author"])).length).toBeGreaterThan(0);
    const db = await shardDb(org);
    const statements: string[] = [];
    const refusing = (refuse: boolean) => refusingOnePart(db, statements, refuse);
    for (const refuse of [false, true])
      for (const groupBys of [["repo"], ["author"], ["week", "repo", "author"], ["day"]] as GroupBy[][]) {
        statements.length = 0;
        await directAgrees(org, w, groupBys, rows, `refused ${refuse} ${groupBys.join()}`, refusing(refuse));
        expect(statements.length).toBeGreaterThan(0);
      }
  });
  it("groups keyed by odd names (prototype words, normalization, case, emoji, quotes) and hundreds of authors, from spans", {
    timeout: 300_000,
  }, async () => {
    const repos = ["__proto__", "constructor", "toString", ".hidden", "a..b", "API", "api-2"];
    const { org, user, get } = await summaryOrg("tenth", "admin", Object.fromEntries(repos.map((r) => [r, { private: false }])));
    const odd = [
      "__proto__",
      "constructor",
      "hasOwnProperty",
      "caf\u00e9",
      "cafe\u0301",
      "\u{1F600}x",
      'quote"d',
      "back\\slash",
      "sp ace",
      "null",
      "0",
      "ß",
      "SS",
      "x".repeat(255),
    ];
    const random = seededRandom(108);
    const prs: Pr[] = [];
    let n = 1;
    for (let t = NOV + 3 * HOUR; t < at("2026-03-01T00:00:00Z") - 10 * HOUR; t += (2 + Math.floor(random() * 6)) * HOUR, n++) {
      const created = t - (1 + Math.floor(random() * 30)) * HOUR;
      prs.push({
        repo: repos[n % repos.length] as string,
        n,
        author: n % 3 === 0 ? (odd[n % odd.length] as string) : `user-${n % 400}`,
        created,
        merged: t,
        reviews: [created + (ODD[n % ODD.length] as number) + (n % 2) * HOUR],
        findings: n % 5 === 0 ? [{ at: t - HOUR, fixed: n % 10 === 0 }] : [],
        ...(n % 4 === 0 ? { ai: n % 90 } : {}),
      });
    }
    const w = { start: NOV, end: at("2026-03-01T00:00:00Z") - 1 };
    await postEventsOk(
      eventsOf(org, [...prs, ...straddlers(w, 60_000, 2).map((p) => ({ ...p, repo: repos[p.n % 3] as string }))]),
    );
    const rows = await agrees(get, org, w, "odd keys", ["repo", "author"], { passes: 3 });
    expect(new Set(rows.map((r) => r.author)).size).toBeGreaterThan(300);
    expect(rows.some((r) => r.author === "__proto__") && rows.some((r) => r.repo === "__proto__")).toBe(true);
    expect((await servedSpans(org, w, ["repo", "author"])).length).toBe(2);
    await directAgrees(org, w, ["repo", "author"], rows, "odd keys, direct");
    await dashboardAgrees(org, user, get, w, "odd keys, dashboard");
    // A window a few hours inside: spans with corrections at both edges.
    const inner = { start: w.start + 5 * HOUR, end: w.end - 5 * HOUR };
    await agrees(get, org, inner, "odd keys, inner", ["repo", "author"], { passes: 3 });
  });
  it("spans of different months per kind, asked together in either order (author,repo and repo,author)", {
    timeout: 300_000,
  }, async () => {
    const { org, user, get } = await seeded(109);
    const decToMay = { start: at("2025-12-01T00:00:00Z"), end: WINDOW.end };
    // repo: a span of November to May; author: one of December to May.
    await agrees(get, org, WINDOW, "repo", ["repo"], { passes: 3 });
    await agrees(get, org, decToMay, "author", ["author"], { passes: 3 });
    expect((await spans(org)).map((s) => [s.kind, s.first, s.last])).toEqual([
      ["author", day("2025-12-01"), day("2026-05-31")],
      ["repo", day("2025-11-01"), day("2026-05-31")],
    ]);
    for (const groupBys of [
      ["author", "repo"],
      ["repo", "author"],
      ["author", "week", "repo"],
      ["repo", "month"],
    ] as GroupBy[][])
      for (const w of [WINDOW, decToMay, { start: NOV + 3 * HOUR, end: WINDOW.end - 3 * HOUR }])
        await dashboardAgrees(org, user, get, w, `${groupBys.join()} ${iso(w.start)}`, groupBys);
    const rows = await exportOf(get, org, WINDOW);
    await directAgrees(org, WINDOW, ["author", "repo"], rows, "author,repo direct");
  });

  it("pull requests later merged on empty days of a span's months, merged elsewhere, or first reviewed there", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    // No pull request from January 5th to January 20th, nor on any Sunday.
    const prs = pullRequests(110, NOV - 5 * DAY, WINDOW.end + 5 * DAY).filter((p) => {
      const d = new Date(p.merged);
      return !(p.merged >= at("2026-01-05T00:00:00Z") && p.merged < at("2026-01-21T00:00:00Z")) && d.getUTCDay() !== 0;
    });
    // Opened, not merged yet; and merged but never reviewed.
    const open = {
      type: "pull_request",
      org,
      repo: "api",
      prNumber: 70_001,
      updatedAt: "2026-11-01T00:00:00.000Z",
      author: "olga",
    };
    await postEventsOk([
      ...eventsOf(org, prs),
      { ...open, createdAt: iso(at("2026-01-09T08:00:00Z")), mergedAt: null, linesAdded: 5, linesDeleted: 1 },
      ...eventsOf(org, [
        {
          repo: "docs",
          n: 70_002,
          author: "pat",
          created: at("2026-01-10T08:00:00Z"),
          merged: at("2026-01-10T18:00:00Z"),
          reviews: [],
        },
      ]),
    ]);
    await agrees(get, org, WINDOW, "built", ["repo", "author"], { passes: 3 });
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    const later = (n: number) => `2026-11-0${n}T00:00:00.000Z`;
    const steps: [string, unknown[]][] = [
      [
        "merged on an empty day",
        eventsOf(org, [
          {
            repo: "Web",
            n: 70_003,
            author: "quinn",
            created: at("2026-01-12T08:00:00Z"),
            merged: at("2026-01-12T15:00:00Z"),
            reviews: [at("2026-01-12T09:00:00Z")],
            version: later(2),
          },
        ]),
      ],
      [
        "merged on a Sunday",
        eventsOf(org, [
          {
            repo: "api",
            n: 70_004,
            author: "alice",
            created: at("2026-03-08T08:00:00Z"),
            merged: at("2026-03-08T15:00:00Z"),
            reviews: [at("2026-03-08T09:00:00Z")],
            version: later(2),
          },
        ]),
      ],
      [
        "the open one merged and reviewed",
        [
          {
            ...open,
            createdAt: iso(at("2026-01-09T08:00:00Z")),
            mergedAt: iso(at("2026-01-15T10:00:00Z")),
            linesAdded: 5,
            linesDeleted: 1,
            updatedAt: later(3),
          },
          {
            type: "review",
            org,
            repo: "api",
            prNumber: 70_001,
            reviewId: "o-1",
            status: "completed",
            completedAt: iso(at("2026-01-14T10:00:00Z")),
            updatedAt: later(3),
          },
        ],
      ],
      [
        "the unreviewed one reviewed",
        [
          {
            type: "review",
            org,
            repo: "docs",
            prNumber: 70_002,
            reviewId: "p-1",
            status: "completed",
            completedAt: iso(at("2026-01-10T09:00:00Z")),
            updatedAt: later(4),
          },
        ],
      ],
      [
        "one merged again, in April instead",
        eventsOf(org, [
          {
            ...(prs.find((p) => p.merged > at("2026-02-02T00:00:00Z")) as Pr),
            merged: at("2026-04-12T11:00:00Z"),
            version: later(5),
          },
        ]),
      ],
    ];
    for (const [label, events] of steps) {
      await postEventsOk(events);
      const rows = await exportOf(get, org, WINDOW);
      await directAgrees(org, WINDOW, ["repo", "author"], rows, `${label}, first read`);
      await agrees(get, org, WINDOW, label, ["repo", "author"], { passes: 3 });
      expect(await servedSpans(org, WINDOW, ["repo", "author"]), label).toHaveLength(2);
      await directAgrees(org, WINDOW, ["repo", "author"], rows, `${label}, from spans`);
    }
  });
  it("a month without any pull request among whole months, and edges at exact instants (merges, reviews, findings on them)", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    const JAN = at("2026-01-01T00:00:00Z");
    const FEB = at("2026-02-01T00:00:00Z");
    // Nothing merged in January; pull requests merged in early February reviewed in January.
    const prs = pullRequests(111, NOV - 5 * DAY, WINDOW.end + 5 * DAY, 1).filter((p) => p.merged < JAN || p.merged >= FEB);
    const early: Pr[] = Array.from({ length: 12 }, (_, i) => ({
      repo: REPOS[i % 3] as string,
      n: 71_000 + i,
      author: AUTHORS[i % AUTHORS.length] as string,
      created: JAN + (2 + i) * DAY,
      merged: FEB + (i % 4) * DAY + (i + 1) * HOUR,
      reviews: [JAN + (3 + i) * DAY, FEB + 30 * MINUTE],
      findings: [{ at: JAN + (4 + i) * DAY, fixed: i % 2 === 0 }],
    }));
    await postEventsOk(eventsOf(org, [...prs, ...early]));
    for (const w of [WINDOW, { start: FEB, end: WINDOW.end }, { start: FEB - 1, end: WINDOW.end }]) {
      const rows = await agrees(get, org, w, `empty January ${iso(w.start)}`, ["repo", "author"], { passes: 3 });
      await directAgrees(org, w, ["repo", "author"], rows, `empty January ${iso(w.start)}, direct`);
    }
    // Exact instants: merged, reviewed and found exactly at a window's first and last millisecond, and one beside.
    const S = at("2025-12-01T00:00:00Z");
    const E = at("2026-05-01T00:00:00Z") - 1;
    const exact: Pr[] = [
      { repo: "api", n: 72_001, author: "edge", created: S - HOUR, merged: S, reviews: [S] },
      { repo: "api", n: 72_002, author: "edge", created: E - HOUR, merged: E, reviews: [E], findings: [{ at: E, fixed: true }] },
      { repo: "Web", n: 72_003, author: "edge", created: S - HOUR, merged: S - 1, reviews: [S - 1] },
      { repo: "Web", n: 72_004, author: "edge", created: E - HOUR, merged: E + 1, reviews: [E + 1] },
      {
        repo: "docs",
        n: 72_005,
        author: "edge",
        created: S - 2 * HOUR,
        merged: S + DAY,
        reviews: [S - 1, S],
        findings: [
          { at: S - 1, fixed: true },
          { at: E + 1, fixed: false },
        ],
      },
      {
        repo: "docs",
        n: 72_006,
        author: "Edge",
        created: E - DAY,
        merged: E - HOUR,
        reviews: [E, E + 1],
        findings: [{ at: E, fixed: false }],
      },
    ];
    await postEventsOk(eventsOf(org, exact));
    for (const w of [
      { start: S, end: E },
      { start: S - 1, end: E + 1 },
      { start: S + 1, end: E - 1 },
    ]) {
      const rows = await agrees(get, org, w, `exact ${iso(w.start)}`, ["repo", "author"], { passes: 3 });
      await directAgrees(org, w, ["repo", "author"], rows, `exact ${iso(w.start)}, direct`);
    }
    expect((await spans(org)).length).toBeGreaterThan(0);
  });

  it("spans from the Unix epoch: a window starting at 0, a pull request created, reviewed and merged at 0", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    const prs = pullRequests(112, 6 * HOUR, at("1970-06-05T00:00:00Z")).map((p) => ({
      ...p,
      created: Math.max(0, p.created),
      reviews: p.reviews.map((r) => Math.max(0, r)),
      findings: p.findings?.map((f) => ({ ...f, at: Math.max(0, f.at) })),
    }));
    const zero: Pr[] = [
      { repo: "api", n: 73_001, author: "zero", created: 0, merged: 0, reviews: [0], findings: [{ at: 0, fixed: true }], ai: 0 },
      {
        repo: "Web",
        n: 73_002,
        author: "zero",
        created: 0,
        merged: DAY,
        reviews: [0, at("1970-06-02T00:00:00Z")],
        linesAdded: 0,
      },
    ];
    await postEventsOk(eventsOf(org, [...prs, ...zero]));
    for (const w of [
      { start: 0, end: at("1970-05-01T00:00:00Z") - 1 },
      { start: 0, end: at("1970-06-01T00:00:00Z") - 1 },
      { start: 1, end: at("1970-05-29T19:00:00Z") },
    ]) {
      const rows = await agrees(get, org, w, `epoch ${iso(w.end)}`, ["repo", "author"], { passes: 3 });
      expect(rows.length).toBeGreaterThan(50);
      await directAgrees(org, w, ["repo", "author"], rows, `epoch ${iso(w.end)}, direct`);
    }
    expect((await spans(org)).length).toBeGreaterThan(0);
  });
  it("one repository's pull requests written under several spellings of its name, before and after its spans", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    const spell = ["Web", "WEB", "web", "wEb"];
    const prs = pullRequests(113, NOV - 5 * DAY, WINDOW.end + 5 * DAY).map((p) =>
      p.repo === "Web" ? { ...p, repo: spell[p.n % 3] as string } : p,
    );
    await postEventsOk(eventsOf(org, prs));
    const rows = await agrees(get, org, WINDOW, "spellings", ["repo", "author"], { passes: 3 });
    const spellings = new Set(rows.filter((r) => r.repo.toLowerCase() === "web").map((r) => r.repo));
    await directAgrees(org, WINDOW, ["repo", "author"], rows, `spellings ${[...spellings].join()}`);
    // A new version of a few of them spelled another way, on days of the spans.
    const some = prs.filter((p) => p.repo.toLowerCase() === "web" && p.merged > at("2026-02-01T00:00:00Z")).slice(0, 3);
    await postEventsOk(
      eventsOf(
        org,
        some.map((p) => ({ ...p, repo: "wEb", version: LATER })),
      ),
    );
    const after = await agrees(get, org, WINDOW, "respelled", ["repo", "author"], { passes: 3 });
    await directAgrees(org, WINDOW, ["repo", "author"], after, "respelled, direct");
  });
  it("32 and 33 equal values removed from a group's span bucket (the scan and the count), the median on them", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    const S = at("2025-12-01T00:00:00Z");
    // More than 92 days (a shorter window reads no month blocks): December to March.
    const w = { start: S, end: at("2026-04-01T00:00:00Z") - 1 };
    const v = 3 * HOUR - 1;
    const prs: Pr[] = [];
    let n = 1;
    // Not listed (their only review a millisecond before the start), each's time to first review v.
    for (const [author, k] of [
      ["alice", 32],
      ["bob", 33],
      ["carol", 1],
    ] as const)
      for (let i = 0; i < k; i++) {
        const merged = S + (1 + ((i * 7) % 80)) * DAY + (i % 5) * HOUR;
        prs.push({ repo: REPOS[i % 3] as string, n: n++, author, created: S - 1 - v, merged, reviews: [S - 1] });
      }
    // Listed: times to first review v - 1, v and v + 1 in each group, so the median is v.
    for (const author of ["alice", "bob", "carol"])
      for (const [value, k] of [
        [v - 1, 20],
        [v, 5],
        [v + 1, 20],
      ] as const)
        for (let i = 0; i < k; i++) {
          const created = S + (2 + ((n * 3) % 85)) * DAY + (n % 11) * HOUR;
          prs.push({
            repo: REPOS[n % 3] as string,
            n: n++,
            author,
            created,
            merged: created + value + (n % 4) * HOUR,
            reviews: [created + value],
          });
        }
    // Others' pull requests around them: enough for the summary to build blocks.
    const others = pullRequests(114, S - 5 * DAY, w.end + 5 * DAY, 10_000).map((p) => ({ ...p, author: `other-${p.n % 4}` }));
    await postEventsOk(eventsOf(org, [...prs, ...others]));
    const rows = await agrees(get, org, w, "removed on the median", ["repo", "author"], { passes: 3 });
    expect(rows.filter((r) => ["alice", "bob", "carol"].includes(r.author)).length).toBe(135);
    expect(await servedSpans(org, w, ["repo", "author"])).toHaveLength(2);
    const figures = await directAgrees(org, w, ["author", "repo"], rows, "removed on the median, direct");
    expect(
      figures.groupings[0]?.groups.filter((g) => ["alice", "bob", "carol"].includes(g.key)).map((g) => g.medianMsToFirstReview),
    ).toEqual([v, v, v]);
    expect(figures.bucketValues).toBeGreaterThan(0);
  });
  it("a repository leaves the installation after the spans were built (left out of the admin's answers), and comes back", {
    timeout: 300_000,
  }, async () => {
    const repos = ["api", "Web", "docs"].map((name) => ({ id: repoId(), name, private: false }));
    const { org, admin } = await world(repos);
    const get = getWithKey(admin.analyticsKey);
    await postEventsOk(eventsOf(org, [...pullRequests(115, NOV - 5 * DAY, WINDOW.end + 5 * DAY), ...straddlers(WINDOW, 50_000)]));
    await agrees(get, org, WINDOW, "before", ["repo", "author"], { passes: 3 });
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    const change = (action: "removed" | "added", name: string) => {
      const payload = example("installation_repositories", action, org);
      const repo = repos.find((r) => r.name === name) as (typeof repos)[number];
      payload[`repositories_${action}`] = [{ ...repo, full_name: `${org}/${name}`, node_id: "x" }];
      return deliverQueued("installation_repositories", payload);
    };
    await change("removed", "Web");
    const rows = await agrees(get, org, WINDOW, "Web removed", ["repo", "author"], { passes: 3 });
    expect(rows.some((r) => r.repo === "Web")).toBe(false);
    expect(rows.length).toBeGreaterThan(100);
    await change("added", "Web");
    const back = await agrees(get, org, WINDOW, "Web back", ["repo", "author"], { passes: 3 });
    expect(back.some((r) => r.repo === "Web")).toBe(true);
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
  });
  it("authors whose names hold control characters (NUL, tab, newline) and lone combining marks, from spans", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("tenth", "admin", ALL);
    const names = ["nul\u0000byte", "tab\tname", "new\nline", "\u0301", "\u0000"];
    const prs = pullRequests(116, NOV - 5 * DAY, WINDOW.end + 5 * DAY).map((p) =>
      p.n % 3 === 0 ? { ...p, author: names[p.n % names.length] as string } : p,
    );
    await postEventsOk(eventsOf(org, prs));
    const rows = await agrees(get, org, WINDOW, "control characters", ["repo", "author"], { passes: 3 });
    expect(new Set(rows.map((r) => r.author)).size).toBeGreaterThan(names.length);
    expect(rows.some((r) => r.author === "nul\u0000byte")).toBe(true);
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    await directAgrees(org, WINDOW, ["author"], rows, "control characters, direct");
  });
  it("another organization's rows moved in (same numbers, older and newer versions) after both made their spans", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await seeded(117);
    const other = await summaryOrg("tenth", "admin", ALL);
    // Numbers that collide with this organization's (older versions stay theirs, newer ones win), and new ones.
    const theirs = pullRequests(118, NOV, WINDOW.end, 1).map((p, i) => ({
      ...p,
      author: i % 2 === 0 ? "zed" : "yan",
      version: i % 4 === 0 ? "2026-11-09T00:00:00.000Z" : "2026-10-01T00:00:00.000Z",
    }));
    await postEventsOk(eventsOf(other.org, [...theirs, ...straddlers(WINDOW, 90_000, 5)]));
    await agrees(get, org, WINDOW, "ours", ["repo", "author"], { passes: 3 });
    await agrees(other.get, other.org, WINDOW, "theirs", ["repo", "author"], { passes: 3 });
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    expect(await servedSpans(other.org, WINDOW, ["repo", "author"])).toHaveLength(2);
    const shardOf = async (o: string) =>
      ((await (await admin("GET", `/internal/v1/organizations/${o}/move`)).json()) as { shard: string }).shard;
    if ((await shardOf(org)) !== (await shardOf(other.org))) await moveToOtherShard(other.org);
    expect(await shardOf(other.org)).toBe(await shardOf(org));
    await moveRows(await shardDb(org), { orgKey: other.org }, { orgKey: org });
    const merged = await agrees(get, org, WINDOW, "theirs moved in", ["repo", "author"], { passes: 3 });
    expect(merged.some((r) => r.author === "zed") && merged.some((r) => r.author === "yan")).toBe(true);
    await directAgrees(org, WINDOW, ["repo", "author"], merged, "theirs moved in, direct");
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
  });
  it("a write to a span's days before every walk of one summary: read a third time without blocks, as the export counts after the last", {
    timeout: 300_000,
  }, async () => {
    const { org, get, prs } = await seeded(119);
    await agrees(get, org, WINDOW, "built", ["repo", "author"], { passes: 3 });
    expect(await servedSpans(org, WINDOW, ["repo", "author"])).toHaveLength(2);
    const db = await shardDb(org);
    const targets = prs.filter((p) => p.n < 50_000 && p.merged > at("2026-01-10T00:00:00Z")).slice(0, 5);
    let calls = 0;
    const figures = await summarizeGroupings(db, groupingsOf(org, WINDOW, ["author", "repo"]), SUMMARY_LIMITS, {
      beforeWalk: async () => {
        const p = targets[calls] as Pr;
        calls++;
        await postEventsOk(
          eventsOf(org, [
            { ...p, author: `moved-${calls}`, linesAdded: 1_000 + calls, version: `2026-11-2${calls}T00:00:00.000Z` },
          ]),
        );
      },
    });
    expect(calls).toBe(3);
    const rows = await exportOf(get, org, WINDOW);
    (["author", "repo"] as const).forEach((g, i) => {
      const want = referenceSummary(rows, g, WINDOW.start, WINDOW.end);
      expect(byKey(figures.groupings[i]?.groups ?? []), g).toEqual(byKey(want.groups.filter((x) => x.pullRequests > 0)));
      expect(figures.groupings[i]?.totals, g).toEqual(want.totals);
    });
    await agrees(get, org, WINDOW, "after", ["repo", "author"], { passes: 3 });
  });
});
