import { describe, expect, it } from "vitest";
import {
  listMergedPullRequests,
  type MergedPullRequest,
  type MergedPullRequestQuery,
  mergedPullRequestsQuery,
  PagePlans,
  pagePlan,
} from "../../src/storage/analytics";
import { ev, postEventsOk, scopeOf, shardDb, unique } from "./helpers";

/**
 * A page walked by its merges is read by the ranges up to the window's start first, and only when
 * they leave the page short by every range again, in one read (`pagePlan`). These tests walk data
 * on both sides of every edge, with ties on the edges, by pages of every size, and compare every
 * page with the one statement that walks every range (`mergedPullRequestsQuery`); and write
 * between a page's two statements.
 */

const START = "2026-10-01T00:00:00.000Z";
const END = "2026-10-31T23:59:59.999Z";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (iso: string, ms = 0) => new Date(Date.parse(iso) + ms).toISOString();

/** Pull requests around October 2026: [number, merged, reviews completed]; 90+ never qualify. */
const PULL_REQUESTS: [number, string, string[]][] = [
  // Merged in the window, two of them at its first instant (a tie) and one at its last.
  [1, "2026-10-30T10:00:00.000Z", ["2026-10-29T10:00:00.000Z"]],
  [2, "2026-10-20T10:00:00.000Z", ["2026-10-19T10:00:00.000Z", "2026-10-21T10:00:00.000Z"]],
  [3, "2026-10-12T10:00:00.000Z", ["2026-10-12T09:00:00.000Z"]],
  [4, "2026-10-05T10:00:00.000Z", ["2026-09-20T10:00:00.000Z", "2026-11-20T10:00:00.000Z", "2026-10-06T10:00:00.000Z"]],
  [5, START, ["2026-10-01T00:00:00.000Z"]],
  [6, START, ["2026-10-02T00:00:00.000Z"]],
  [7, END, [END]],
  // Merged before the window, reviewed inside it: gap tiers from under a day to beyond 512 days.
  [10, at(START, -1), ["2026-10-01T05:00:00.000Z"]],
  [11, "2026-09-28T10:00:00.000Z", ["2026-10-03T10:00:00.000Z"]],
  [12, "2026-08-01T10:00:00.000Z", ["2026-10-15T10:00:00.000Z"]],
  [13, "2024-01-01T10:00:00.000Z", ["2026-10-20T10:00:00.000Z"]],
  [14, "2026-09-30T10:00:00.000Z", ["2026-09-29T10:00:00.000Z", "2026-10-31T23:00:00.000Z"]],
  // Merged after the window, reviewed inside it before the merge.
  [20, at(END, 1), ["2026-10-31T12:00:00.000Z"]],
  [21, "2026-11-03T10:00:00.000Z", ["2026-10-30T10:00:00.000Z"]],
  [22, "2027-06-01T10:00:00.000Z", ["2026-10-10T10:00:00.000Z"]],
  // Never in the window: reviews only before it, only after it, on both sides of it.
  [90, "2026-09-20T10:00:00.000Z", ["2026-09-21T10:00:00.000Z"]],
  [91, "2026-11-10T10:00:00.000Z", ["2026-11-09T10:00:00.000Z"]],
  [92, "2026-10-15T10:00:00.000Z", ["2026-09-01T10:00:00.000Z", "2026-11-05T10:00:00.000Z"]],
];

async function seed(): Promise<string> {
  const org = unique("stages");
  await postEventsOk(
    PULL_REQUESTS.flatMap(([pr, mergedAt, reviews]) => [
      ev.pr(org, pr, { createdAt: "2023-12-01T00:00:00.000Z", mergedAt }),
      ...reviews.map((completedAt, i) => ev.review(org, pr, `r${pr}-${i}`, { completedAt })),
    ]),
  );
  return org;
}

/** The one statement's rows for a page (every range). */
async function wholeRows(db: D1Database, q: MergedPullRequestQuery): Promise<number[]> {
  const { sql, params } = mergedPullRequestsQuery(q);
  const { results } = await db
    .prepare(sql)
    .bind(...params)
    .all<{ prNumber: number }>();
  return results.map((r) => r.prNumber);
}

/** Walks the window by pages of `perPage`, comparing each page with the one statement's; the rows and each page's statement count. */
async function walk(db: D1Database, base: Omit<MergedPullRequestQuery, "after" | "limit">, perPage: number) {
  const rows: number[] = [];
  const statements: number[] = [];
  let after: MergedPullRequestQuery["after"] = null;
  for (let i = 0; i < 100; i++) {
    const q: MergedPullRequestQuery = { ...base, after, limit: perPage + 1 };
    const page = await listMergedPullRequests(db, q);
    expect(page.rows.map((r) => r.prNumber)).toEqual(await wholeRows(db, q));
    statements.push(page.statements);
    rows.push(...page.rows.slice(0, perPage).map((r) => r.prNumber));
    const last = page.rows[perPage - 1];
    if (page.rows.length <= perPage || last === undefined) return { rows, statements };
    after = { mergedAt: last.mergedAt, id: last.id };
  }
  throw new Error("the walk did not end");
}

/** The db, with `before(n)` awaited before its n-th statement runs (a write landing between a page's reads). */
function hooked(db: D1Database, before: (n: number) => Promise<void>): D1Database {
  let n = 0;
  return {
    prepare: (sql: string) => {
      const bound = (...params: unknown[]) => db.prepare(sql).bind(...params);
      return {
        bind: (...params: unknown[]) => ({
          all: async () => {
            await before(++n);
            return bound(...params).all();
          },
        }),
      };
    },
  } as unknown as D1Database;
}

describe("the export's page in two statements", () => {
  it.each([
    ["a window that ended an hour ago", HOUR, [22, 21, 20, 7, 1, 2, 3, 4, 6, 5, 10, 14, 11, 12, 13]],
    ["a window that ended two days ago", 2 * DAY, [22, 21, 20, 7, 1, 2, 3, 4, 6, 5, 10, 14, 11, 12, 13]],
  ] as const)(
    "%s: every page equals the one statement's, by pages of every size",
    { timeout: 60_000 },
    async (_name, sinceEnd, expected) => {
      const org = await seed();
      const db = await shardDb(org);
      const scope = { ...scopeOf(org.toLowerCase(), START, END), now: Date.parse(END) + sinceEnd };
      // Ties on the window's first instant: the higher id first (pull request 6 was stored after 5).
      for (let perPage = 1; perPage <= expected.length + 1; perPage++) {
        const { rows, statements } = await walk(db, scope, perPage);
        expect(rows).toEqual(expected);
        // The page that reaches the window's start (10 rows up to it, with the merges after it)
        // runs two statements; so does the next when that page ends exactly on the window's last
        // row, since its cursor (at the window's first instant) may have ties still to come. Every
        // other page runs one.
        expect(statements.filter((n) => n === 2)).toHaveLength(10 % perPage === 0 ? 2 : 1);
        expect(statements.every((n) => n === 1 || n === 2)).toBe(true);
      }
    },
  );

  it("reads a full page from the window alone, and the merges before it once the window is done", async () => {
    const org = await seed();
    const db = await shardDb(org);
    const q: MergedPullRequestQuery = {
      ...scopeOf(org.toLowerCase(), START, END),
      now: Date.parse(END) + HOUR,
      after: null,
      limit: 3,
    };
    const { first, whenShort } = pagePlan(q);
    expect(whenShort).not.toBeNull();
    // The first statement alone fills the page: its one range is the organization's walk.
    expect(first.sql.match(/INDEXED BY pull_requests_\w+/g)).toEqual(["INDEXED BY pull_requests_merged_walk"]);
    const page = await listMergedPullRequests(db, q);
    expect([page.rows.map((r) => r.prNumber), page.statements]).toEqual([[22, 21, 20], 1]);
    // A cursor before the window: the merges before it alone, one range per gap tier.
    const before = { ...q, after: { mergedAt: Date.parse(START) - 1, id: Number.MAX_SAFE_INTEGER } };
    const only = pagePlan(before);
    expect(only.whenShort).toBeNull();
    expect(new Set(only.first.sql.match(/INDEXED BY pull_requests_\w+/g))).toEqual(
      new Set(["INDEXED BY pull_requests_after_merge_walk"]),
    );
    const rest = await listMergedPullRequests(db, before);
    expect([rest.rows.map((r) => r.prNumber), rest.statements]).toEqual([[10, 14, 11], 1]);
  });

  it("keeps one statement for a narrow window, whose plan may take the reviews", async () => {
    const q: MergedPullRequestQuery = {
      ...scopeOf("narrow", "2026-10-01T00:00:00.000Z", "2026-10-02T00:00:00.000Z"),
      now: Date.parse("2026-10-02T00:00:00.000Z"),
      after: null,
      limit: 101,
    };
    expect(pagePlan(q)).toEqual({ first: mergedPullRequestsQuery(q), whenShort: null });
    expect(() => mergedPullRequestsQuery(q, undefined, { later: false, window: true, earlier: false })).toThrow(RangeError);
  });
});

describe("a write between a page's two statements", () => {
  /** Pull request 1 merged in the window, 2 before it (reviewed inside), 3 where `mergedAt` says; the page's first statement comes back short. */
  async function racing(mergedAt: string): Promise<{ org: string; db: D1Database; q: MergedPullRequestQuery }> {
    const org = unique("race");
    await postEventsOk([
      ev.pr(org, 1, { mergedAt: "2026-10-10T10:00:00.000Z" }),
      ev.review(org, 1, "r1", { completedAt: "2026-10-10T09:00:00.000Z" }),
      ev.pr(org, 2, { mergedAt: "2026-09-28T10:00:00.000Z" }),
      ev.review(org, 2, "r2", { completedAt: "2026-10-03T10:00:00.000Z" }),
      ev.pr(org, 3, { mergedAt }),
      ev.review(org, 3, "r3", { completedAt: "2026-10-06T10:00:00.000Z" }),
    ]);
    const q = { ...scopeOf(org.toLowerCase(), START, END), now: Date.parse(END) + HOUR, after: null, limit: 101 };
    return { org, db: await shardDb(org), q };
  }
  /** A newer version of pull request 3, merged at `mergedAt`. */
  const move = (org: string, mergedAt: string) =>
    postEventsOk([ev.pr(org, 3, { mergedAt, updatedAt: "2026-10-09T00:00:00.000Z" })]);

  it.each([
    ["from the window to before it", "2026-10-05T10:00:00.000Z", "2026-09-30T10:00:00.000Z"],
    ["from before the window into it", "2026-09-30T10:00:00.000Z", "2026-10-05T10:00:00.000Z"],
  ])("a pull request whose merge moves %s shows once, as one read of the data shows it", async (_name, from, to) => {
    const { org, db, q } = await racing(from);
    expect(await wholeRows(db, q)).toEqual([1, 3, 2]);
    const page = await listMergedPullRequests(
      hooked(db, (n) => (n === 2 ? move(org, to) : Promise.resolve())),
      q,
    );
    expect(page.statements).toBe(2);
    // The page is the second read's alone: the data as it stands after the write.
    expect(page.rows.map((r) => r.prNumber)).toEqual(await wholeRows(db, q));
    expect(page.rows.map((r) => r.prNumber)).toEqual([1, 3, 2]);
    expect(page.rows.find((r) => r.prNumber === 3)?.mergedAt).toBe(Date.parse(to));
  });
});

describe("the isolate's page plans", () => {
  const first = (org: string, limit: number, extra: Partial<MergedPullRequestQuery> = {}): MergedPullRequestQuery => ({
    ...scopeOf(org.toLowerCase(), START, END),
    now: Date.parse(END) + HOUR,
    after: null,
    limit,
    ...extra,
  });
  const numbers = (page: { rows: MergedPullRequest[] }) => page.rows.map((r) => r.prNumber);

  it("reads a window that held fewer rows than the page with one statement, and learns when it grows", async () => {
    const org = await seed();
    const db = await shardDb(org);
    const plans = new PagePlans();
    const q = first(org, 101);
    const expected = await wholeRows(db, q);
    expect(expected).toHaveLength(15);
    // First sight: two statements (the window's 10 rows, then the 5 before it); noted.
    const seen = await listMergedPullRequests(db, q, undefined, plans);
    expect([numbers(seen), seen.statements]).toEqual([expected, 2]);
    expect(plans.fitsWhole(q)).toBe(true);
    // Asked again: the one statement, the same rows.
    const again = await listMergedPullRequests(db, q, undefined, plans);
    expect([numbers(again), again.statements]).toEqual([expected, 1]);
    // A page smaller than the window's 10 rows is filled by the window: two statements' plan (the first alone).
    const small = first(org, 4);
    expect(plans.fitsWhole(small)).toBe(false);
    const smallPage = await listMergedPullRequests(db, small, undefined, plans);
    expect([numbers(smallPage), smallPage.statements]).toEqual([expected.slice(0, 4), 1]);
    // Another window length, another scope: not known yet.
    expect(plans.fitsWhole(first(org, 101, { start: Date.parse(START) - 10 * DAY }))).toBe(false);
    expect(plans.fitsWhole(first(org, 101, { repoKeys: ["api"] }))).toBe(false);
    // The window grows past the page: the one statement's answer shows it, the next page is split again.
    const grown = first(org, 11);
    plans.record(grown, 10);
    expect(plans.fitsWhole(grown)).toBe(true);
    await postEventsOk([
      ev.pr(org, 50, { mergedAt: "2026-10-25T10:00:00.000Z" }),
      ev.review(org, 50, "r50", { completedAt: "2026-10-25T09:00:00.000Z" }),
    ]);
    const whole = await listMergedPullRequests(db, grown, undefined, plans);
    expect([numbers(whole), whole.statements]).toEqual([await wholeRows(db, grown), 1]);
    expect(plans.fitsWhole(grown)).toBe(false);
    const split = await listMergedPullRequests(db, grown, undefined, plans);
    expect([numbers(split), split.statements]).toEqual([await wholeRows(db, grown), 1]);
  });

  it("neither consults nor teaches on a page with a cursor", async () => {
    const org = await seed();
    const db = await shardDb(org);
    const plans = new PagePlans();
    const q = first(org, 101);
    await listMergedPullRequests(db, q, undefined, plans);
    expect(plans.fitsWhole(q)).toBe(true);
    // A cursor inside the window: the window's rest, then the merges before it (two statements).
    const page = await listMergedPullRequests(
      db,
      { ...q, after: { mergedAt: Date.parse("2026-10-25T00:00:00.000Z"), id: Number.MAX_SAFE_INTEGER } },
      undefined,
      plans,
    );
    expect(numbers(page)).toEqual([2, 3, 4, 6, 5, 10, 14, 11, 12, 13]);
    expect(page.statements).toBe(2);
  });

  it("keeps a note of a number whatever the lists' length, one per scope", () => {
    const plans = new PagePlans();
    const many = Array.from({ length: 300 }, (_, i) => `repository-${i}`);
    const q = first("wide", 101, { accessibleRepoKeys: many });
    expect(Number.isSafeInteger(PagePlans.key(q))).toBe(true);
    plans.record(q, 3);
    expect(plans.fitsWhole(q)).toBe(true);
    // Another list, another scope.
    expect(PagePlans.key(first("wide", 101, { accessibleRepoKeys: many.slice(1) }))).not.toBe(PagePlans.key(q));
    expect(plans.fitsWhole(first("wide", 101, { accessibleRepoKeys: many.slice(1) }))).toBe(false);
  });

  it("forgets the oldest scope beyond its capacity", () => {
    const plans = new PagePlans(2);
    const qs = ["a", "b", "c"].map((org) => first(org, 101));
    for (const q of qs) plans.record(q, 3);
    expect(qs.map((q) => plans.fitsWhole(q))).toEqual([false, true, true]);
    // A scope noted again is the newest.
    plans.record(qs[1] as MergedPullRequestQuery, 3);
    plans.record(qs[0] as MergedPullRequestQuery, 3);
    expect(qs.map((q) => plans.fitsWhole(q))).toEqual([true, true, false]);
  });
});

/** Every cursor on and around every row and edge, every shape of scope: the split (with and without plans) equals the one statement. */
describe("every cursor on and around every row and edge, every shape of scope", () => {
  const MAX = "9999-12-31T23:59:59.999Z";
  const PRS: [number, string, string, string[]][] = [
    [1, "api", "2026-10-30T10:00:00.000Z", ["2026-10-29T10:00:00.000Z"]],
    [2, "web", START, ["2026-10-01T00:00:00.000Z"]],
    [3, "api", START, ["2026-10-02T00:00:00.000Z"]],
    [4, "lib", END, [END]],
    [5, "web", new Date(Date.parse(START) - 1).toISOString(), ["2026-10-01T05:00:00.000Z"]],
    [6, "api", new Date(Date.parse(START) - 1).toISOString(), ["2026-10-09T05:00:00.000Z"]],
    [7, "lib", "2024-01-01T10:00:00.000Z", ["2026-10-20T10:00:00.000Z"]],
    [8, "web", new Date(Date.parse(END) + 1).toISOString(), ["2026-10-31T12:00:00.000Z"]],
    [9, "api", new Date(Date.parse(END) + 1).toISOString(), ["2026-10-30T12:00:00.000Z"]],
    [10, "lib", MAX, ["2026-10-10T10:00:00.000Z"]],
    [11, "api", "1970-01-01T00:00:00.000Z", ["2026-10-11T10:00:00.000Z"]],
  ];
  it("the page plan (with and without the isolate's plans) reads exactly the one statement's rows", {
    timeout: 300_000,
  }, async () => {
    const org = unique("split-edges");
    await postEventsOk(
      PRS.flatMap(([pr, repo, mergedAt, reviews]) => [
        ev.pr(org, pr, { repo, author: pr % 2 ? "alice" : "bob", createdAt: "1970-01-01T00:00:00.000Z", mergedAt }),
        ...reviews.map((completedAt, i) => ev.review(org, pr, `r${pr}-${i}`, { repo, completedAt })),
      ]),
    );
    const db = await shardDb(org);
    const all = await wholeRows(db, {
      ...scopeOf(org.toLowerCase(), START, END),
      now: Date.parse(END) + HOUR,
      after: null,
      limit: 1001,
    });
    expect(all).toHaveLength(PRS.length);
    const ids = (
      await db
        .prepare("SELECT id, merged_at AS m FROM pull_requests WHERE org_key = ?1")
        .bind(org.toLowerCase())
        .all<{ id: number; m: number }>()
    ).results;
    const s = Date.parse(START);
    const e = Date.parse(END);
    const cursors: MergedPullRequestQuery["after"][] = [null];
    for (const m of [s - 1, s, s + 1, e - 1, e, e + 1, 0, Date.parse(MAX)])
      for (const id of [0, Number.MAX_SAFE_INTEGER]) cursors.push({ mergedAt: m, id });
    for (const r of ids)
      cursors.push({ mergedAt: r.m, id: r.id }, { mergedAt: r.m, id: r.id + 1 }, { mergedAt: r.m, id: r.id - 1 });
    const scopes: Partial<MergedPullRequestQuery>[] = [
      {},
      { accessibleRepoKeys: ["api", "api", "web"] },
      { accessibleRepoKeys: Array.from({ length: 20 }, (_, i) => (i === 0 ? "lib" : `x${i}`)) },
      { repoKeys: ["api"] },
      { repoKeys: ["api", "lib"], accessibleRepoKeys: ["lib", "web"] },
      { excludedRepoKeys: ["web"] },
      { authorKeys: ["bob"] },
      { repoKeys: ["lib"], authorKeys: ["alice", "alice"], excludedRepoKeys: ["api"] },
    ];
    let checked = 0;
    for (const sinceEnd of [HOUR, 2 * DAY])
      for (const extra of scopes)
        for (const after of cursors)
          for (const limit of [2, 3, 1001]) {
            const q: MergedPullRequestQuery = {
              ...scopeOf(org.toLowerCase(), START, END),
              ...extra,
              now: e + sinceEnd,
              after,
              limit,
            };
            const expected = await wholeRows(db, q);
            const plain = (await listMergedPullRequests(db, q)).rows.map((r) => r.prNumber);
            expect(plain, JSON.stringify({ extra, after, limit, sinceEnd })).toEqual(expected);
            if (after === null) {
              const plans = new PagePlans();
              plans.record(q, 0);
              const whole = await listMergedPullRequests(db, q, undefined, plans);
              expect(whole.rows.map((r) => r.prNumber)).toEqual(expected);
            }
            checked++;
          }
    expect(checked).toBeGreaterThan(1000);
  });
});
