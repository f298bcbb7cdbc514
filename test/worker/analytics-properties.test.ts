import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, createUser, postEventsOk, unique } from "./helpers";

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
  it("never produce a 500, and every error has the analytics envelope", async () => {
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

const BASE = Date.parse("2026-05-01T00:00:00Z");
const HALF_DAY = 43_200_000;
/** Times on a coarse grid (ties and exact boundary hits are likely), sometimes 1 ms off it. */
const time = fc.tuple(fc.integer({ min: 0, max: 20 }), fc.constantFrom(-1, 0, 0, 0, 1)).map(([k, d]) => BASE + k * HALF_DAY + d);

const prArb = fc.record({
  repo: fc.constantFrom("api", "web", "Api"),
  merged: fc.option(time, { nil: null }),
  linesAdded: fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }),
  linesDeleted: fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }),
  reviews: fc.array(fc.record({ status: fc.constantFrom("completed", "completed", "failed", "in_progress"), at: time }), {
    maxLength: 3,
  }),
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
});

type GenPr = typeof prArb extends fc.Arbitrary<infer T> ? T : never;

function toEvents(org: string, prs: GenPr[]) {
  const events: unknown[] = [];
  const updatedAt = new Date(BASE + 30 * 86_400_000).toISOString();
  prs.forEach((p, i) => {
    const ref = { org, repo: p.repo, prNumber: i + 1, updatedAt };
    events.push({
      type: "pull_request",
      ...ref,
      author: `author${i}`,
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

/** What the contract says the rows are, computed directly from the generated pull requests. */
function reference(org: string, prs: GenPr[], start: number, end: number): Row[] {
  const inWindow = (t: number) => t >= start && t <= end;
  const rows = prs.flatMap((p, i) => {
    const completed = p.reviews.filter((r) => r.status === "completed");
    if (p.merged === null || !completed.some((r) => inWindow(r.at))) return [];
    const flagged = p.findings.filter((f) => f.posted && inWindow(f.at));
    let ai: number | null = p.ai.length === 0 ? null : p.ai.reduce((a, b) => a + b, 0);
    if (ai !== null && (p.linesAdded !== null || p.linesDeleted !== null))
      ai = Math.min(ai, (p.linesAdded ?? 0) + (p.linesDeleted ?? 0));
    const row: Row = {
      org,
      repo: p.repo,
      prNumber: i + 1,
      author: `author${i}`,
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

describe("random data sets", () => {
  it("agree with the reference on every row and metric, across pages", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(prArb, { minLength: 1, maxLength: 12 }),
        time,
        time,
        fc.integer({ min: 1, max: 5 }),
        async (prs, a, b, perPage) => {
          const [start, end] = a <= b ? [a, b] : [b, a];
          const { org, get } = await adminWithKey();
          // "Api" and "api" are one repository; each row keeps the name its pull_request event gave.
          await postEventsOk(toEvents(org, prs));
          const q = `org=${org}&startDate=${encodeURIComponent(new Date(start).toISOString())}&endDate=${encodeURIComponent(new Date(end).toISOString())}`;
          const rows: Row[] = [];
          let cursor: string | null = null;
          for (let i = 0; i < 50; i++) {
            const res = await get(`${q}&perPage=${perPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
            expect(res.status).toBe(200);
            const page = (await res.json()) as Page;
            rows.push(...page.data);
            cursor = page.nextCursor;
            if (cursor === null) break;
          }
          expect(rows).toEqual(reference(org, prs, start, end));
        },
      ),
      { numRuns: 40 },
    );
  });
});
