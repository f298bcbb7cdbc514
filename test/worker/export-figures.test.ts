/**
 * The export's findings and AI lines come from each pull request's stored figures
 * (`storage/pull-request-figures.ts`, `findingsInWindowSql`), as the summary's do; the summary's
 * tests compare it with the export, so these give the export an oracle of its own: the window's
 * edges to the millisecond, a model of the newest version of every record across batches, replays
 * and moves between shards, writes racing a move, and the row-by-row path of large pages. Each
 * also checks the stored figures against a recomputation from the raw rows. And a repository
 * rename (`moveRows`) keeps a merge, as contract section 17 asks of every path (an outside review
 * found it unmerging a pull request).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { beginMove, catchUp, copySome, finishMove, type Move, readMove, recordMove, switchOver } from "../../src/directory/moves";
import { placementOf } from "../../src/directory/shards";
import { JSON_PAGE_MAX_ROWS, listMergedPullRequests, type MergedPullRequestQuery } from "../../src/storage/analytics";
import { moveRows } from "../../src/storage/renames";
import {
  addMember,
  call,
  createKey,
  createOrg,
  createUser,
  env,
  ev,
  moveToOtherShard,
  postEventsOk,
  scopeOf,
  shardDb,
  unique,
} from "./helpers";

type Row = {
  prNumber: number;
  mergedAt: string;
  numberOfServiceIssuesFlagged: number;
  numberOfServiceIssuesFixed: number;
  totalAiLinesAuthored: number | null;
};
const NOW = Date.parse("2026-11-15T00:00:00Z");
const HOUR = 3_600_000;
const T0 = Date.parse("2026-10-10T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const db = (shard: string) => (env as unknown as Record<string, D1Database>)[shard] as D1Database;

async function adminOrg(prefix: string) {
  const org = await createOrg(unique(prefix), { plan: "pro", installedAt: "2026-01-01T00:00:00Z" });
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "analytics");
  /** Every row of the export for [start, end], by prNumber. */
  const rows = async (start: number, end: number): Promise<Row[]> => {
    const out: Row[] = [];
    let cursor: string | null = null;
    do {
      const q = `org=${org}&startDate=${encodeURIComponent(iso(start))}&endDate=${encodeURIComponent(iso(end))}&perPage=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await call(`/api/analytics/v1/prs?${q}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { data: Row[]; nextCursor: string | null };
      out.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor !== null);
    return out.sort((a, b) => a.prNumber - b.prNumber);
  };
  return { org, rows };
}

const pick = (r: Row) => ({
  prNumber: r.prNumber,
  flagged: r.numberOfServiceIssuesFlagged,
  fixed: r.numberOfServiceIssuesFixed,
  ai: r.totalAiLinesAuthored,
});

/** Stored figures vs a plain-loop recomputation from the raw rows, on one database. */
async function figuresMatch(d: D1Database, orgKey: string) {
  const prs = (
    await d
      .prepare(
        `SELECT p.id, p.lines_added AS la, p.lines_deleted AS ld, p.ai_lines, p.posted_findings, p.fixed_findings,
                p.first_finding_at, p.last_finding_at FROM pull_requests AS p WHERE p.org_key = ?1 ORDER BY p.id`,
      )
      .bind(orgKey)
      .all<Record<string, number | null>>()
  ).results;
  const f = (
    await d
      .prepare("SELECT pr_id, created_at, posted, ai_addressed FROM findings WHERE org_key = ?1")
      .bind(orgKey)
      .all<Record<string, number>>()
  ).results;
  const a = (
    await d.prepare("SELECT pr_id, lines FROM ai_authorship WHERE org_key = ?1").bind(orgKey).all<Record<string, number>>()
  ).results;
  for (const p of prs) {
    const posted = f.filter((x) => x.pr_id === p.id && x.posted === 1);
    const recs = a.filter((x) => x.pr_id === p.id);
    const sum = recs.length ? recs.reduce((n, x) => n + (x.lines as number), 0) : null;
    const cap = p.la === null && p.ld === null ? null : (p.la ?? 0) + (p.ld ?? 0);
    const times = posted.map((x) => x.created_at as number);
    expect({ ...p, la: undefined, ld: undefined }).toEqual({
      ...p,
      la: undefined,
      ld: undefined,
      ai_lines: sum === null || cap === null ? sum : Math.min(sum, cap),
      posted_findings: posted.length,
      fixed_findings: posted.filter((x) => x.ai_addressed === 1).length,
      first_finding_at: times.length ? Math.min(...times) : null,
      last_finding_at: times.length ? Math.max(...times) : null,
    });
  }
}

describe("window edges of the figures' CASE", () => {
  it("findings at the start and end millisecond, first == last, straddlers, only unposted, a posted flip", async () => {
    const { org, rows } = await adminOrg("edge");
    const S = T0;
    const E = T0 + 6 * HOUR;
    const review = (n: number) => ev.review(org, n, `r${n}`, { completedAt: iso(S + 3 * HOUR) });
    await postEventsOk([
      ...[1, 2, 3, 4, 5].flatMap((n) => [ev.pr(org, n, { mergedAt: iso(S + n * HOUR) }), review(n)]),
      ev.finding(org, 1, "f1a", { createdAt: iso(S), aiAddressed: true }), // exactly at start
      ev.finding(org, 1, "f1b", { createdAt: iso(E) }), // exactly at end
      ev.finding(org, 2, "f2", { createdAt: iso(S), aiAddressed: true }), // first == last == start
      ev.finding(org, 3, "f3", { createdAt: iso(S + HOUR), posted: false }), // only unposted
      ev.finding(org, 4, "f4a", { createdAt: iso(S - 1) }), // straddles the start
      ev.finding(org, 4, "f4b", { createdAt: iso(S), aiAddressed: true }),
      ev.finding(org, 5, "f5a", { createdAt: iso(E) }), // straddles the end
      ev.finding(org, 5, "f5b", { createdAt: iso(E + 1), aiAddressed: true }),
    ]);
    expect((await rows(S, E)).map(pick)).toEqual([
      { prNumber: 1, flagged: 2, fixed: 1, ai: null },
      { prNumber: 2, flagged: 1, fixed: 1, ai: null },
      { prNumber: 3, flagged: 0, fixed: 0, ai: null },
      { prNumber: 4, flagged: 1, fixed: 1, ai: null },
      { prNumber: 5, flagged: 1, fixed: 0, ai: null },
    ]);
    // One millisecond narrower on both sides.
    expect((await rows(S + 1, E - 1)).map((r) => r.numberOfServiceIssuesFlagged)).toEqual([0, 0, 0, 0, 0]);
    // f1a stops being posted (newer version): pull request 1 keeps f1b only.
    await postEventsOk([
      ev.finding(org, 1, "f1a", { createdAt: iso(S), aiAddressed: true, posted: false, updatedAt: "2026-10-20T00:00:00Z" }),
    ]);
    expect(pick((await rows(S, E))[0] as Row)).toEqual({ prNumber: 1, flagged: 1, fixed: 0, ai: null });
    await figuresMatch(await shardDb(org), org.toLowerCase());
  });
});

const version = fc.integer({ min: 1, max: 5 }).map((d) => `2026-10-0${d}T00:00:00Z`);
const gridTime = fc.tuple(fc.integer({ min: 0, max: 6 }), fc.constantFrom(-1, 0, 0, 1)).map(([k, d]) => T0 + k * HOUR + d);
const pr = fc.integer({ min: 1, max: 4 }); // 4 never gets a pull_request event: a placeholder, never listed
const gen = fc.oneof(
  fc.record({
    kind: fc.constant("pr" as const),
    n: fc.integer({ min: 1, max: 3 }),
    v: version,
    added: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
    deleted: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
  }),
  fc.record({
    kind: fc.constant("finding" as const),
    n: pr,
    v: version,
    id: fc.constantFrom("f1", "f2", "f3", "f4"),
    at: gridTime,
    posted: fc.boolean(),
    ai: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("ai" as const),
    n: pr,
    v: version,
    id: fc.constantFrom("a1", "a2", "a3"),
    lines: fc.integer({ min: 0, max: 40 }),
  }),
);
type Gen = typeof gen extends fc.Arbitrary<infer T> ? T : never;
const mergedOf = (n: number) => iso(T0 + 20 * HOUR + n * 60_000);

describe("the export's numbers follow every later write", () => {
  it("agrees with a model of the newest version of every record", { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(gen, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
        fc.tuple(gridTime, gridTime),
        fc.constantFrom("none", "before-last", "end"),
        fc.boolean(),
        async (batches, [a, b], move, replay) => {
          const { org, rows } = await adminOrg("model");
          const [start, end] = a <= b ? [a, b] : [b, a];
          // Old versions, so every generated pull_request event replaces them; reviews at every grid hour.
          await postEventsOk(
            [1, 2, 3].flatMap((n) => [
              ev.pr(org, n, { mergedAt: mergedOf(n), updatedAt: "2026-09-01T00:00:00Z" }),
              ...[0, 1, 2, 3, 4, 5, 6].map((k) => ev.review(org, n, `r${n}-${k}`, { completedAt: iso(T0 + k * HOUR) })),
            ]),
          );
          const model = new Map<string, { v: string; g: Gen }>(
            [1, 2, 3].map((n) => [
              `pr${n}`,
              { v: "2026-09-01T00:00:00Z", g: { kind: "pr", n, v: "", added: 10, deleted: 2 } as Gen },
            ]),
          );
          const keyOf = (g: Gen) => (g.kind === "pr" ? `pr${g.n}` : g.id);
          const toEvent = (g: Gen) =>
            g.kind === "pr"
              ? ev.pr(org, g.n, { mergedAt: mergedOf(g.n), linesAdded: g.added, linesDeleted: g.deleted, updatedAt: g.v })
              : g.kind === "finding"
                ? ev.finding(org, g.n, g.id, { createdAt: iso(g.at), posted: g.posted, aiAddressed: g.ai, updatedAt: g.v })
                : ev.ai(org, g.n, g.id, g.lines, { updatedAt: g.v });
          const send = async (batch: Gen[]) => {
            await postEventsOk(batch.map(toEvent));
            for (const g of batch) {
              const held = model.get(keyOf(g));
              if (!held || g.v > held.v) model.set(keyOf(g), { v: g.v, g }); // strictly newer wins
            }
          };
          for (const [i, batch] of batches.entries()) {
            if (move === "before-last" && i === batches.length - 1) await moveToOtherShard(org);
            await send(batch);
          }
          if (replay) await send(batches[0] as Gen[]);
          if (move === "end") await moveToOtherShard(org);
          const inW = (t: number) => t >= start && t <= end;
          const listed = [0, 1, 2, 3, 4, 5, 6].some((k) => inW(T0 + k * HOUR));
          const held = [...model.values()].map((h) => h.g);
          const expected = !listed
            ? []
            : [1, 2, 3].map((n) => {
                const p = held.find((g) => g.kind === "pr" && g.n === n) as Extract<Gen, { kind: "pr" }>;
                const fs = held.filter(
                  (g): g is Extract<Gen, { kind: "finding" }> => g.kind === "finding" && g.n === n && g.posted && inW(g.at),
                );
                const recs = held.filter((g): g is Extract<Gen, { kind: "ai" }> => g.kind === "ai" && g.n === n);
                let ai: number | null = recs.length ? recs.reduce((s, r) => s + r.lines, 0) : null;
                if (ai !== null && (p.added !== null || p.deleted !== null)) ai = Math.min(ai, (p.added ?? 0) + (p.deleted ?? 0));
                return { prNumber: n, flagged: fs.length, fixed: fs.filter((f) => f.ai).length, ai };
              });
          expect((await rows(start, end)).map(pick)).toEqual(expected);
          await figuresMatch(await shardDb(org), org.toLowerCase());
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("figures on a move's target", () => {
  it("a finding and an AI record moved, a posted flip and null line counts written mid-copy", { timeout: 120_000 }, async () => {
    const { org, rows } = await adminOrg("mvfig");
    const V2 = "2026-10-05T00:00:00Z";
    await postEventsOk([
      ev.pr(org, 1, { mergedAt: "2026-10-02T11:00:00Z" }),
      ev.review(org, 1, "r1"),
      ev.pr(org, 2, { mergedAt: "2026-10-02T12:00:00Z", linesAdded: 3, linesDeleted: 0 }),
      ev.review(org, 2, "r2"),
      ev.finding(org, 1, "f1", { aiAddressed: true }),
      ev.finding(org, 1, "f2", { createdAt: "2026-10-01T15:00:00Z" }),
      ev.finding(org, 2, "f3", { posted: false }),
      ev.ai(org, 1, "a1", 50),
      ev.ai(org, 2, "a2", 1),
    ]);
    const home = org.toLowerCase();
    const from = (await placementOf(env, home)).shard;
    const to = from === "DB" ? "ANALYTICS_2" : "DB";
    const { move } = await recordMove(env, { home, login: org }, from, to, Date.now());
    const current = async () => (await readMove(env, home)) as Move;
    await beginMove(env, move);
    await copySome(env, await current(), 0, 1); // one page only
    await postEventsOk([
      ev.finding(org, 2, "f1", { aiAddressed: true, updatedAt: V2 }),
      ev.finding(org, 1, "f2", { createdAt: "2026-10-01T15:00:00Z", posted: false, updatedAt: V2 }),
      ev.ai(org, 2, "a1", 50, { updatedAt: V2 }),
      ev.pr(org, 1, { mergedAt: "2026-10-02T11:00:00Z", linesAdded: null, linesDeleted: null, updatedAt: V2 }),
    ]);
    while (!(await copySome(env, await current(), 0, 1))) {}
    expect(await catchUp(env, await current())).toBe(true);
    await switchOver(env, await current());
    await finishMove(env, await current());
    await figuresMatch(db(to), home);
    const oct = [Date.parse("2026-10-01T00:00:00Z"), Date.parse("2026-10-31T23:59:59.999Z")] as const;
    expect((await rows(...oct)).map(pick)).toEqual([
      { prNumber: 1, flagged: 0, fixed: 0, ai: null },
      { prNumber: 2, flagged: 1, fixed: 1, ai: 3 }, // (1 + 50) capped at 3 + 0
    ]);
  });
});

describe("row-by-row pages", () => {
  it("equal the JSON pages, in order", { timeout: 180_000 }, async () => {
    const org = unique("rowpath");
    const count = JSON_PAGE_MAX_ROWS + 120;
    await postEventsOk(
      Array.from({ length: count }, (_, i) => {
        const n = i + 1;
        return [
          ev.pr(org, n, { mergedAt: iso(Date.parse("2026-10-20T00:00:00Z") - Math.floor(i / 5) * 60_000) }), // ties of 5
          ev.review(org, n, `r${n}`, { completedAt: "2026-10-10T00:00:00Z" }),
          ev.finding(org, n, `fa${n}`, { createdAt: n % 2 ? "2026-09-30T23:59:59.999Z" : "2026-10-01T00:00:00.000Z" }),
          ev.finding(org, n, `fb${n}`, { createdAt: "2026-10-15T00:00:00Z", aiAddressed: n % 3 === 0 }),
        ];
      }).flat(),
    );
    const d = await shardDb(org);
    const q = (after: MergedPullRequestQuery["after"], limit: number): MergedPullRequestQuery => ({
      ...scopeOf(org.toLowerCase()),
      after,
      limit,
      now: NOW,
    });
    const big = (await listMergedPullRequests(d, q(null, count + 1))).rows; // row by row
    const small: typeof big = [];
    for (let after: MergedPullRequestQuery["after"] = null; ; ) {
      const page: typeof big = (await listMergedPullRequests(d, q(after, 101))).rows; // JSON, sorted in JS
      small.push(...page.slice(0, 100));
      if (page.length <= 100) break;
      const last: (typeof big)[number] | undefined = page[99];
      after = last ? { mergedAt: last.mergedAt, id: last.id } : null;
    }
    expect(big).toEqual(small);
    expect(big.map((r) => r.findingsFlagged)).toEqual(big.map((r) => (r.prNumber % 2 ? 1 : 2)));
  });
});

async function placedOnDb(prefix: string) {
  const org = unique(prefix);
  await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB')").bind(org.toLowerCase()).run();
  return org;
}
describe("a repository rename keeps a merge (contract section 17: whichever path)", () => {
  const T = "2026-10-03T00:00:00.000Z";
  const T2 = "2026-10-04T00:00:00.000Z";
  for (const [name, target, source] of [
    // Same version: 'labeled' under the new name, the merge under the old one (issue 18's second).
    ["same second", { mergedAt: null, updatedAt: T }, { updatedAt: T }],
    // A newer unmerged state must not unmerge (events.test.ts 'a newer unmerged state cannot unmerge').
    ["newer unmerged source", { updatedAt: T }, { mergedAt: null, updatedAt: T2 }],
  ] as const) {
    it(name, async () => {
      const org = await placedOnDb("mrule");
      const key = org.toLowerCase();
      await postEventsOk([
        ev.pr(org, 1, { repo: "api", ...target }),
        ev.review(org, 1, "r1", { repo: "api" }),
        ev.pr(org, 1, { repo: "web", ...source }),
      ]);
      await moveRows(env.DB, { orgKey: key, repo: "web" }, { orgKey: key, repo: "api" });
      const row = await env.DB.prepare(
        "SELECT merged_at FROM pull_requests WHERE org_key = ?1 AND repo_key = 'api' AND pr_number = 1",
      )
        .bind(key)
        .first<{ merged_at: number | null }>();
      expect(row?.merged_at).toBe(Date.parse("2026-10-02T10:00:00Z"));
      const { rows } = await listMergedPullRequests(env.DB, { ...scopeOf(key), after: null, limit: 101, now: NOW });
      expect(rows.map((r) => r.prNumber)).toEqual([1]);
    });
  }
});
