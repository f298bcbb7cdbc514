import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor } from "../../src/analytics/cursor";
import { toPage } from "../../src/analytics/present";
import { listMergedPullRequests, type PlanLimits } from "../../src/storage/analytics";
import { GAP_TIER_BOUNDS_MS } from "../../src/storage/review-span";
import { addMember, call, createKey, createOrg, createUser, postEventsOk, shardDb, unique } from "./helpers";

type Row = {
  org: string;
  repo: string;
  prNumber: number;
  author: string;
  createdAt: string;
  mergedAt: string;
  linesAdded: number | null;
  linesDeleted: number | null;
  numberOfServiceIssuesFlagged: number;
  numberOfServiceIssuesFixed: number;
  serviceFirstReviewedAt: string;
  totalAiLinesAuthored: number | null;
};
type Page = { data: Row[]; nextCursor: string | null };

async function adminWithKey() {
  const org = await createOrg(unique("prop"), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "analytics");
  return { org, get: (q: string) => call(`/api/analytics/v1/prs?${q}`, { headers: { Authorization: `Bearer ${key}` } }) };
}

describe("random query strings", () => {
  it("never produce a 500, and every error has the analytics envelope", { timeout: 60_000 }, async () => {
    const { org, get } = await adminWithKey();
    const names = ["org", "repo", "startDate", "endDate", "perPage", "cursor", "other"];
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.constantFrom(
        org,
        ` ${org} `,
        "2026-02-29",
        "2026-03-01T00:00:00+14:00",
        "1e2",
        "100",
        "0",
        "|",
        "2026-01-01T00:00:00Z|1",
      ),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.integer().map(String),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 7 }), async (pairs) => {
        const query = new URLSearchParams(pairs).toString();
        const res = await get(query);
        expect([200, 400, 403, 404]).toContain(res.status);
        const body = (await res.json()) as Record<string, unknown>;
        if (res.status === 200) expect(Object.keys(body).sort()).toEqual(["data", "nextCursor"]);
        else expect(typeof body.error).toBe("string");
      }),
      { numRuns: 300 },
    );
  });
});

// ---- An independent reference: plain loops over the events, no SQL. ----

const DAY = 86_400_000;
const HOUR = 3_600_000;
const YEAR = 365 * DAY;
const BASE = Date.parse("2026-05-01T00:00:00Z");
const HALF_DAY = 43_200_000;
/** Times on a coarse grid (ties and exact boundary hits are likely), sometimes 1 ms off it. */
const time = fc.tuple(fc.integer({ min: 0, max: 20 }), fc.constantFrom(-1, 0, 0, 0, 1)).map(([k, d]) => BASE + k * HALF_DAY + d);

/**
 * How far a review lies from its merge when it is not on the grid: each gap tier's bound and a
 * millisecond either side of it, and years (a re-review of an old pull request, or one reviewed
 * long before its merge). Before or after the merge.
 */
const FAR_GAPS = [...GAP_TIER_BOUNDS_MS.flatMap((bound) => [bound - 1, bound, bound + 1]), 2 * YEAR, 3 * YEAR];
const reviewTime = fc.oneof(
  { weight: 1, arbitrary: time.map((at) => ({ at })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...FAR_GAPS), fc.constantFrom(-1, 1)).map(([gap, sign]) => ({ fromMerge: sign * gap })),
  },
);

const MORE_REPOS = ["lib", "docs", "cli", "app", "ops", "sdk"];
/** Repository keys (lower-cased) for a caller's access list or `repo` filter; "gone" has no pull request. */
const REPO_KEYS = ["api", "web", ...MORE_REPOS, "gone"];
const repoKey = fc.constantFrom(...REPO_KEYS);

const prArb = fc
  .record({
    // Mostly two repositories (many pull requests share one); sometimes one of six more, so that
    // a caller's access list can hold a few repositories of many.
    repo: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("api", "web", "Api") },
      { weight: 1, arbitrary: fc.constantFrom(...MORE_REPOS) },
    ),
    author: fc.constantFrom("alice", "Bob", "carol", "bob"),
    merged: fc.option(time, { nil: null }),
    linesAdded: fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }),
    linesDeleted: fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }),
    reviews: fc.array(
      fc.record({ status: fc.constantFrom("completed", "completed", "failed", "in_progress"), time: reviewTime }),
      {
        maxLength: 3,
      },
    ),
    findings: fc.array(
      fc.record({
        at: time,
        posted: fc.boolean(),
        aiAddressed: fc.boolean(),
        feedback: fc.constantFrom(null, "positive", "negative"),
      }),
      { maxLength: 4 },
    ),
    ai: fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 2 }),
  })
  // A review placed relative to the merge of an unmerged pull request is placed relative to BASE.
  .map(({ reviews, ...p }) => ({
    ...p,
    reviews: reviews.map(({ status, time: t }) => ({ status, at: "at" in t ? t.at : (p.merged ?? BASE) + t.fromMerge })),
  }));

type GenPr = typeof prArb extends fc.Arbitrary<infer T> ? T : never;

/**
 * A window: between two grid times, or starting or ending at (or a moment around) one of the data
 * set's review times, so that reviews years from their merge, and reviews exactly at a gap tier's
 * bound from it, meet the window's edges. A millisecond to three years long: narrow windows are
 * usually sparse, and every walk ends with its last page.
 */
const windowArb = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.tuple(time, time).map(([a, b]) => ({ around: null, start: Math.min(a, b), span: Math.abs(a - b) })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        pick: fc.nat(),
        edge: fc.constantFrom("start", "end"),
        shift: fc.constantFrom(0, 0, 1, -1, HOUR, -DAY),
        span: fc.constantFrom(0, 1, HOUR, 12 * HOUR, 3 * DAY, 7 * DAY, 7 * DAY + 1, 30 * DAY, 3 * YEAR),
      })
      .map((around) => ({ around, start: 0, span: around.span })),
  },
);
type GenWindow = typeof windowArb extends fc.Arbitrary<infer T> ? T : never;

function resolveWindow(w: GenWindow, prs: GenPr[]): { start: number; end: number } {
  const times = prs.flatMap((p) => p.reviews.map((r) => r.at));
  if (w.around === null || times.length === 0) return { start: w.start || BASE, end: (w.start || BASE) + w.span };
  const at = (times[w.around.pick % times.length] as number) + w.around.shift;
  return w.around.edge === "start" ? { start: at, end: at + w.span } : { start: at - w.span, end: at };
}

function toEvents(org: string, prs: GenPr[]) {
  const events: unknown[] = [];
  const updatedAt = new Date(BASE + 30 * 86_400_000).toISOString();
  prs.forEach((p, i) => {
    const ref = { org, repo: p.repo, prNumber: i + 1, updatedAt };
    events.push({
      type: "pull_request",
      ...ref,
      author: p.author,
      createdAt: new Date(BASE - 7 * 86_400_000).toISOString(),
      mergedAt: p.merged === null ? null : new Date(p.merged).toISOString(),
      linesAdded: p.linesAdded,
      linesDeleted: p.linesDeleted,
    });
    for (const [j, r] of p.reviews.entries()) {
      const completedAt = r.status === "completed" ? new Date(r.at).toISOString() : null;
      events.push({ type: "review", ...ref, reviewId: `r${i}-${j}`, status: r.status, completedAt });
    }
    for (const [j, f] of p.findings.entries()) {
      const { posted, aiAddressed, feedback } = f;
      events.push({
        type: "finding",
        ...ref,
        findingId: `f${i}-${j}`,
        createdAt: new Date(f.at).toISOString(),
        posted,
        aiAddressed,
        feedback,
      });
    }
    for (const [j, lines] of p.ai.entries()) events.push({ type: "ai_authorship", ...ref, sourceId: `a${i}-${j}`, lines });
  });
  return events;
}

/**
 * What the contract says the rows are, computed directly from the generated pull requests; only
 * those in `repos` (lower-cased keys) and by `authors` (lower-cased logins) when given.
 */
function reference(
  org: string,
  prs: GenPr[],
  start: number,
  end: number,
  repos: readonly string[] | null = null,
  authors: readonly string[] | null = null,
): Row[] {
  const inWindow = (t: number) => t >= start && t <= end;
  const rows = prs.flatMap((p, i) => {
    const completed = p.reviews.filter((r) => r.status === "completed");
    if (p.merged === null || !completed.some((r) => inWindow(r.at))) return [];
    if (repos !== null && !repos.includes(p.repo.toLowerCase())) return [];
    if (authors !== null && !authors.includes(p.author.toLowerCase())) return [];
    const flagged = p.findings.filter((f) => f.posted && inWindow(f.at));
    let ai: number | null = p.ai.length === 0 ? null : p.ai.reduce((a, b) => a + b, 0);
    if (ai !== null && (p.linesAdded !== null || p.linesDeleted !== null))
      ai = Math.min(ai, (p.linesAdded ?? 0) + (p.linesDeleted ?? 0));
    const row: Row = {
      org,
      repo: p.repo,
      prNumber: i + 1,
      author: p.author,
      createdAt: new Date(BASE - 7 * 86_400_000).toISOString(),
      mergedAt: new Date(p.merged).toISOString(),
      linesAdded: p.linesAdded,
      linesDeleted: p.linesDeleted,
      numberOfServiceIssuesFlagged: flagged.length,
      numberOfServiceIssuesFixed: flagged.filter((f) => f.aiAddressed).length,
      serviceFirstReviewedAt: new Date(Math.min(...completed.map((r) => r.at))).toISOString(),
      totalAiLinesAuthored: ai,
    };
    return [{ row, merged: p.merged, order: i }];
  });
  // Newest merge first; ties by internal id, which follows first arrival (event order here).
  rows.sort((a, b) => b.merged - a.merged || b.order - a.order);
  return rows.map((r) => r.row);
}

/** Pages until nextCursor is null: every page but the last is full, and the last is never empty unless all are. */
async function walkPages(pageAt: (cursor: string | null) => Promise<Page>, perPage: number): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 60; i++) {
    const page = await pageAt(cursor);
    if (page.nextCursor !== null) expect(page.data).toHaveLength(perPage);
    else if (i > 0) expect(page.data.length).toBeGreaterThan(0);
    rows.push(...page.data);
    cursor = page.nextCursor;
    if (cursor === null) return rows;
  }
  throw new Error("the walk did not end");
}

describe("random data sets", () => {
  it("agree with the reference on every row and metric, across pages", { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(prArb, { minLength: 1, maxLength: 12 }),
        windowArb,
        fc.integer({ min: 1, max: 5 }),
        async (prs, w, perPage) => {
          const { start, end } = resolveWindow(w, prs);
          const { org, get } = await adminWithKey();
          // "Api" and "api" are one repository; each row keeps the name its pull_request event gave.
          await postEventsOk(toEvents(org, prs));
          const q = `org=${org}&startDate=${encodeURIComponent(new Date(start).toISOString())}&endDate=${encodeURIComponent(new Date(end).toISOString())}`;
          const rows = await walkPages(async (cursor) => {
            const res = await get(`${q}&perPage=${perPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
            expect(res.status).toBe(200);
            return (await res.json()) as Page;
          }, perPage);
          expect(rows).toEqual(reference(org, prs, start, end));
        },
      ),
      { numRuns: 40 },
    );
  });

  // The statement chooses between walking merges and starting from the reviews, between the
  // organization's walk and one walk per accessible repository, and leaves out the ranges after a
  // window that ended less than a day ago; whatever it chooses, the rows are the same.
  const PLANS: [string, Omit<PlanLimits, "maxRepoWalks">][] = [
    ["merge walk", { maxSpanMs: -1, maxReviews: 0 }],
    ["from the reviews", { maxSpanMs: Number.MAX_SAFE_INTEGER, maxReviews: 1_000_000 }],
    ["counted, none qualify", { maxSpanMs: Number.MAX_SAFE_INTEGER, maxReviews: 0 }],
  ];
  /** Never, for short lists only, or always a walk per accessible repository. */
  const REPO_WALKS = [0, 3, 1_000];
  /** The caller's access: every repository (an admin), or a few of them (maybe none, maybe one listed twice). */
  const accessArb = fc.option(
    fc
      .tuple(fc.subarray(REPO_KEYS, { maxLength: 4 }), fc.boolean())
      .map(([keys, twice]) => (twice && keys.length > 0 ? [...keys, keys[0] as string] : keys)),
    { nil: null, freq: 4 },
  );

  /**
   * The request's repositories (contract section 21, as `analytics/read.ts` resolves them: keys,
   * each once, sorted): none, one, or a list (maybe with a repository without pull requests).
   */
  const repoListArb = fc.oneof(
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: repoKey.map((key) => [key]) },
    { weight: 2, arbitrary: fc.uniqueArray(repoKey, { minLength: 2, maxLength: 5 }).map((keys) => keys.sort()) },
  );
  /** The request's authors, likewise (lower-cased logins; "dave" wrote nothing). */
  const authorListArb = fc.option(
    fc.uniqueArray(fc.constantFrom("alice", "bob", "carol", "dave"), { minLength: 1, maxLength: 3 }).map((keys) => keys.sort()),
    { nil: null, freq: 3 },
  );

  it("agree with the reference whichever plan the statement takes", { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(prArb, { minLength: 1, maxLength: 12 }),
        windowArb,
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(...PLANS),
        fc.constantFrom(0, HOUR, 2 * DAY),
        accessArb,
        fc.constantFrom(...REPO_WALKS),
        repoListArb,
        authorListArb,
        async (prs, w, perPage, [, plan], sinceEnd, access, maxRepoWalks, repos, authors) => {
          const { start, end } = resolveWindow(w, prs);
          const limits = { ...plan, maxRepoWalks };
          const org = unique("plan");
          await postEventsOk(toEvents(org, prs));
          const db = await shardDb(org);
          const rows = await walkPages(async (cursor) => {
            const { rows: found } = await listMergedPullRequests(
              db,
              {
                orgKey: org.toLowerCase(),
                repoKeys: repos,
                authorKeys: authors,
                accessibleRepoKeys: access,
                start,
                end,
                after: cursor === null ? null : decodeCursor(cursor),
                limit: perPage + 1,
                now: end + sinceEnd,
              },
              limits,
            );
            return toPage(org, found, perPage);
          }, perPage);
          const visible = [access, repos].reduce<readonly string[] | null>(
            (all, only) => (only === null ? all : all === null ? only : all.filter((key) => only.includes(key))),
            null,
          );
          // Each row once, in order (the reference's rows are distinct pull requests, sorted).
          expect(rows).toEqual(reference(org, prs, start, end, visible, authors));
        },
      ),
      { numRuns: 300 },
    );
  });
});
