import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SummaryGroupBy } from "../../src/schemas/analytics-summary";
import {
  addEdgeDay,
  EDGE_CORRECTED,
  EDGE_OUTSIDE,
  EDGE_PARTIAL,
  EdgeCache,
  type EdgeDay,
  type EdgeRow,
  edgeDayOf,
  nearEdges,
} from "../../src/storage/summary-edges";
import type { PartRow } from "../../src/storage/summary-rows";
import { REMOVED_FROM } from "../../src/storage/summary-rows";

/**
 * Edge days (`storage/summary-edges.ts`) against a reference written from contract sections 3 and
 * 12 alone: a pull request is listed when a completed review lies in the window, its findings count
 * when created in it; a served day's block counted each of its pull requests wholly, so its
 * corrections are the block's figures less the window's. The worker tests compare the whole summary
 * with the export; this one tries many more windows and days against `addEdgeDay` alone.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const D = 20_000; // the edge day
const START = D * DAY;
const END = START + DAY - 1;

interface Pr {
  id: number;
  repo: string;
  author: string;
  created: number | null;
  merged: number;
  reviews: number[];
  findings: { at: number; fixed: boolean }[];
  la: number | null;
  ld: number | null;
  ai: number | null;
}

/** The rows `loadEdgeDays` reads for these pull requests (reviews and findings in any order). */
function edgeDay(prs: readonly Pr[]): EdgeDay {
  const header: EdgeRow = {
    rk: "",
    day: D,
    version: 1,
    ev: 0,
    n: prs.length,
    id: null,
    repo_key: null,
    repo: null,
    author: null,
    ak: null,
    m: null,
    c: null,
    f: null,
    l: null,
    la: null,
    ld: null,
    ai: null,
    pf: null,
    xf: null,
    ff: null,
    lf: null,
    rv: null,
    fv: null,
  };
  const rows = prs.map((p): EdgeRow => {
    const times = p.findings.map((f) => f.at);
    return {
      ...header,
      n: null,
      id: p.id,
      repo_key: p.repo.toLowerCase(),
      repo: p.repo,
      author: p.author,
      ak: p.author.toLowerCase(),
      m: p.merged,
      c: p.created,
      f: Math.min(...p.reviews),
      l: Math.max(...p.reviews),
      la: p.la,
      ld: p.ld,
      ai: p.ai,
      pf: p.findings.length,
      xf: p.findings.filter((f) => f.fixed).length,
      ff: times.length === 0 ? null : Math.min(...times),
      lf: times.length === 0 ? null : Math.max(...times),
      rv: JSON.stringify([...p.reviews].reverse()),
      fv: JSON.stringify(p.findings.map((f) => 2 * f.at + (f.fixed ? 1 : 0)).reverse()),
    };
  });
  return edgeDayOf(header, rows);
}

interface Sums {
  pullRequests: number;
  linesAdded: number;
  linesDeleted: number;
  serviceIssuesFlagged: number;
  serviceIssuesFixed: number;
  aiLinesAuthored: number;
  pullRequestsWithAiData: number;
  tf: number[];
  tm: number[];
}
const empty = (): Sums => ({
  pullRequests: 0,
  linesAdded: 0,
  linesDeleted: 0,
  serviceIssuesFlagged: 0,
  serviceIssuesFixed: 0,
  aiLinesAuthored: 0,
  pullRequestsWithAiData: 0,
  tf: [],
  tm: [],
});

const keyOf = (groupBy: SummaryGroupBy, p: Pr) => (groupBy === "repo" ? p.repo : groupBy === "author" ? p.author : "2024-10-04");
const GROUP_BYS: SummaryGroupBy[] = ["repo", "author", "day"];

/**
 * The reference: per grouping and group, what the window adds (walked) or what the block counted
 * beyond the window (corrected), from the pull requests' raw reviews and findings.
 */
function reference(prs: readonly Pr[], s: number, e: number, corrected: boolean): Map<string, Sums>[] {
  return GROUP_BYS.map((groupBy) => {
    const groups = new Map<string, Sums>();
    for (const p of prs) {
      const listed = p.reviews.some((r) => r >= s && r <= e);
      const inWindow = p.findings.filter((f) => f.at >= s && f.at <= e);
      const counts = corrected ? !listed : listed;
      const flagged = corrected ? p.findings.length - (listed ? inWindow.length : 0) : listed ? inWindow.length : 0;
      const fixedAll = p.findings.filter((f) => f.fixed).length;
      const fixedIn = inWindow.filter((f) => f.fixed).length;
      const fixed = corrected ? fixedAll - (listed ? fixedIn : 0) : listed ? fixedIn : 0;
      if (!counts && flagged === 0 && fixed === 0) continue;
      const key = keyOf(groupBy, p);
      const g = groups.get(key) ?? empty();
      groups.set(key, g);
      g.serviceIssuesFlagged += flagged;
      g.serviceIssuesFixed += fixed;
      if (!counts) continue;
      g.pullRequests++;
      g.linesAdded += p.la ?? 0;
      g.linesDeleted += p.ld ?? 0;
      if (p.ai !== null) {
        g.aiLinesAuthored += p.ai;
        g.pullRequestsWithAiData++;
      }
      if (p.created !== null) {
        g.tf.push(Math.min(...p.reviews) - p.created);
        g.tm.push(p.merged - p.created);
      }
    }
    return groups;
  });
}

/** `addEdgeDay`'s rows as the reference's shape (groups whose figures are all zero dropped). */
function computed(edge: EdgeDay, use: typeof EDGE_CORRECTED | typeof EDGE_OUTSIDE | typeof EDGE_PARTIAL, s: number, e: number) {
  const out = GROUP_BYS.map(() => new Map<string, Sums>());
  addEdgeDay(edge, use, { start: s, end: e }, GROUP_BYS, { repo: null, author: null }, (row: PartRow) => {
    const g = row.grouping <= REMOVED_FROM ? REMOVED_FROM - row.grouping : row.grouping;
    expect(row.grouping <= REMOVED_FROM).toBe(use === EDGE_CORRECTED);
    const sums: Sums = {
      pullRequests: row.pullRequests,
      linesAdded: row.linesAdded,
      linesDeleted: row.linesDeleted,
      serviceIssuesFlagged: row.serviceIssuesFlagged,
      serviceIssuesFixed: row.serviceIssuesFixed,
      aiLinesAuthored: row.aiLinesAuthored,
      pullRequestsWithAiData: row.pullRequestsWithAiData,
      tf: row.tf0 as number[],
      tm: row.tm0 as number[],
    };
    const zero = Object.entries(sums).every(([, v]) => (Array.isArray(v) ? v.length === 0 : v === 0));
    if (!zero) (out[g] as Map<string, Sums>).set(row.key, sums);
  });
  return out;
}

const sorted = (groups: Map<string, Sums>[]) =>
  groups.map((m) =>
    Object.fromEntries(
      [...m.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, { ...v, tf: [...v.tf].sort((a, b) => a - b), tm: [...v.tm].sort((a, b) => a - b) }]),
    ),
  );

/** Times around the day and a window's edges: on them, a millisecond either side, and between. */
const around = (points: number[]) =>
  fc.oneof(
    fc.constantFrom(...points.flatMap((t) => [t - 1, t, t + 1])),
    fc.integer({ min: START - 3 * DAY, max: END + 3 * DAY }),
  );

const prArb = (points: number[]) =>
  fc.record({
    repo: fc.constantFrom("api", "Web"),
    author: fc.constantFrom("alice", "Bob", "bob"),
    created: fc.option(around(points), { nil: null }),
    merged: fc.integer({ min: START, max: END }),
    reviews: fc.array(around(points), { minLength: 1, maxLength: 4 }),
    findings: fc.array(fc.record({ at: around(points), fixed: fc.boolean() }), { maxLength: 5 }),
    la: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
    ld: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
    ai: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
  });

describe("edge days: addEdgeDay against the contract's rules", () => {
  it("a served day's corrections: what its block counted beyond any window that holds the day", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 * DAY }),
        fc.integer({ min: 0, max: 2 * DAY }),
        fc.integer({ min: 0, max: 2 ** 30 }),
        (before, after, seed) => {
          const s = START - before;
          const e = END + after;
          const points = [START, END, s, e];
          const prs = fc.sample(fc.array(prArb(points), { minLength: 1, maxLength: 12 }), { numRuns: 1, seed })[0] as Omit<
            Pr,
            "id"
          >[];
          const withIds = prs.map((p, id) => ({ ...p, id: id + 1 }));
          expect(sorted(computed(edgeDay(withIds), EDGE_CORRECTED, s, e))).toEqual(sorted(reference(withIds, s, e, true)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a day wholly outside the window, and the window's partial first day: what the window lists of its pull requests", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<"before" | "after" | "partial">("before", "after", "partial"),
        fc.integer({ min: 1, max: DAY - 1 }),
        fc.integer({ min: 0, max: 3 * DAY }),
        fc.integer({ min: 0, max: 2 ** 30 }),
        (where, offset, length, seed) => {
          // Before: the window starts after the day; after: it ends before; partial: it starts inside it and ends after.
          const s = where === "before" ? END + offset : where === "after" ? START - offset - length : START + offset;
          const e = where === "before" ? s + length : where === "after" ? START - offset : END + 1 + length;
          const points = [START, END, s, e];
          const prs = fc.sample(fc.array(prArb(points), { minLength: 1, maxLength: 12 }), { numRuns: 1, seed })[0] as Omit<
            Pr,
            "id"
          >[];
          const withIds = prs.map((p, id) => ({ ...p, id: id + 1 }));
          const use = where === "partial" ? EDGE_PARTIAL : EDGE_OUTSIDE;
          expect(sorted(computed(edgeDay(withIds), use, s, e))).toEqual(sorted(reference(withIds, s, e, false)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the filters: a repository or author the request does not count adds nothing", () => {
    const prs: Pr[] = [
      {
        id: 1,
        repo: "api",
        author: "Alice",
        created: START,
        merged: START + HOUR,
        reviews: [START + 2 * HOUR],
        findings: [],
        la: 1,
        ld: 1,
        ai: null,
      },
      {
        id: 2,
        repo: "web",
        author: "bob",
        created: START,
        merged: START + HOUR,
        reviews: [START + 2 * HOUR],
        findings: [],
        la: 2,
        ld: 2,
        ai: 3,
      },
    ];
    const rows: PartRow[] = [];
    addEdgeDay(
      edgeDay(prs),
      EDGE_PARTIAL,
      { start: START + 1, end: END + DAY },
      ["repo"],
      { repo: (k) => k === "web", author: null },
      (r) => rows.push(r),
    );
    expect(rows.map((r) => [r.key, r.pullRequests, r.linesAdded])).toEqual([["web", 1, 2]]);
    rows.length = 0;
    addEdgeDay(
      edgeDay(prs),
      EDGE_PARTIAL,
      { start: START + 1, end: END + DAY },
      ["author"],
      { repo: null, author: (k) => k === "alice" },
      (r) => rows.push(r),
    );
    expect(rows.map((r) => [r.key, r.pullRequests])).toEqual([["Alice", 1]]);
  });
});

describe("EdgeCache", () => {
  const day = (n: number, rk = ""): EdgeDay => ({ ...edgeDay([]), rk, day: n });

  it("answers the days of the keys asked near the window's edges, and forgets the least recently used past its bytes", () => {
    const one = day(D).bytes;
    const cache = new EdgeCache(3 * one);
    const org = cache.of("acme");
    for (const n of [D, D + 1, D + 2]) org.set(day(n));
    cache.of("other").set(day(D));
    // The fourth day pushed out the least recently used: acme's first.
    expect(cache.size).toEqual({ days: 3, bytes: 3 * one });
    const window = { start: (D + 1) * DAY, end: (D + 31) * DAY - 1 };
    expect(org.near(new Set([""]), window.start, window.end).map((d) => d.day)).toEqual([D + 1, D + 2]);
    expect(org.near(new Set(["api"]), window.start, window.end)).toEqual([]);
    // acme's days were used last: the next day pushes out other's.
    org.set(day(D + 3));
    expect(cache.of("other").near(new Set([""]), window.start, window.end)).toEqual([]);
    expect(
      org
        .near(new Set([""]), window.start, window.end)
        .map((d) => d.day)
        .sort(),
    ).toEqual([D + 1, D + 2, D + 3]);
    expect(() => new EdgeCache(-1)).toThrow(RangeError);
  });

  it("the days the statement is told of: the window's first and last 14 days and 64 on either side", () => {
    const s = D * DAY + 5 * HOUR;
    const e = (D + 99) * DAY + HOUR;
    expect([D - 65, D - 64, D + 13, D + 14, D + 85, D + 86, D + 163, D + 164].map((n) => nearEdges(n, s, e))).toEqual([
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it("remembers a block without an edge day under its version only", () => {
    const org = new EdgeCache().of("acme");
    org.setNone("", D, 5);
    expect(org.noneUnder("", D, 5)).toBe(true);
    expect(org.noneUnder("", D, 6)).toBe(false);
    expect(org.noneUnder("api", D, 5)).toBe(false);
  });
});
