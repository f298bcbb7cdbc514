import { introspectWorkflow } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storeEvents } from "../../src/directory/events";
import {
  beginMove,
  catchUp,
  copySome,
  failMove,
  finishMove,
  type Move,
  readMove,
  recordMove,
  switchOver,
} from "../../src/directory/moves";
import { leastFilled, placementOf, shardLoads } from "../../src/directory/shards";
import type { Event } from "../../src/schemas/events";
import { addMember, admin, call, createKey, createOrg, createUser, env, ev, postEventsOk, shardDb, unique } from "./helpers";

const SHARDS = ["DB", "ANALYTICS_2"] as const;
const other = (shard: string) => (shard === "DB" ? "ANALYTICS_2" : "DB");
const db = (shard: string) => (env as unknown as Record<string, D1Database>)[shard] as D1Database;

type Row = { prNumber: number; repo: string; mergedAt: string; totalAiLinesAuthored: number | null };
type Page = { data: Row[]; nextCursor: string | null };

/** A Pro organization with an admin holding an analytics key, and `prs` merged, reviewed pull requests. */
async function world(prs: number, mergedAt = (i: number) => `2026-10-0${1 + (i % 5)}T10:00:00Z`) {
  const org = await createOrg(unique("shard"));
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "analytics");
  const events = Array.from({ length: prs }, (_, i) => [
    ev.pr(org, i + 1, { mergedAt: mergedAt(i) }),
    ev.review(org, i + 1, `r${i + 1}`, { completedAt: "2026-10-03T12:00:00Z" }),
    ev.finding(org, i + 1, `f${i + 1}`),
    ev.ai(org, i + 1, `a${i + 1}`, 3),
  ]).flat();
  await postEventsOk(events);
  const page = async (query: string): Promise<Page> => {
    const res = await call(`/api/analytics/v1/prs?org=${org}&startDate=2026-09-01&endDate=2026-11-01&${query}`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Page;
  };
  return { org, home: org.toLowerCase(), page };
}

/** Every page of the export, `between(i)` after page i. */
async function walk(page: (q: string) => Promise<Page>, perPage: number, between?: (i: number) => Promise<void>) {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 200; i++) {
    const p: Page = await page(`perPage=${perPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    rows.push(...p.data);
    if (p.nextCursor === null) return rows;
    cursor = p.nextCursor;
    await between?.(i);
  }
  throw new Error("walk did not end");
}

const countOf = async (shard: string, home: string) =>
  (await db(shard).prepare("SELECT count(*) AS n FROM pull_requests WHERE org_key = ?1").bind(home).first<{ n: number }>())?.n ??
  0;

describe("GET /internal/v1/shards (contract section 16)", () => {
  it("lists every shard in order with its organizations and pull requests; needs the admin token", async () => {
    const { home } = await world(3);
    const res = await admin("GET", "/internal/v1/shards");
    expect(res.status).toBe(200);
    const { shards } = (await res.json()) as { shards: { shard: string; organizations: number; pullRequests: number }[] };
    expect(shards.map((s) => s.shard)).toEqual(SHARDS);
    const placed = (await placementOf(env, home)).shard;
    const entry = shards.find((s) => s.shard === placed);
    expect(entry?.organizations).toBeGreaterThanOrEqual(1);
    expect(entry?.pullRequests).toBeGreaterThanOrEqual(3);
    // The count the triggers keep is the count of rows.
    const rows = await db(placed).prepare("SELECT count(*) AS n FROM pull_requests").first<{ n: number }>();
    expect(entry?.pullRequests).toBe(rows?.n);
    expect((await call("/internal/v1/shards")).status).toBe(401);
  });
});

describe("placement: first sight, on the shard storing the fewest pull requests, recorded in the directory and the object", () => {
  it("a new organization goes to the least-filled shard and its object learns it", async () => {
    const least = leastFilled(await shardLoads(env)).shard;
    const org = await createOrg(unique("placed"));
    const home = org.toLowerCase();
    expect((await placementOf(env, home)).shard).toBe(least);
    // Recorded once: a later first record changes nothing (answers the shard held).
    expect(await env.ORGANIZATIONS.getByName(home).placeShard(other(least), null)).toBe(least);
    const res = await admin("GET", `/internal/v1/organizations/${org}/move`);
    expect(await res.json()).toEqual({ shard: least, move: null });
  });

  it("organizations fill both shards: after the lighter one takes enough rows, the next goes to the other", async () => {
    // Pull requests decide first (organizations only break ties).
    const loads = await shardLoads(env);
    const light = leastFilled(loads);
    const heavy = loads.find((l) => l !== light);
    if (!heavy) throw new Error("two shards expected");
    const org = unique("filler");
    const gap = heavy.pullRequests - light.pullRequests + 1;
    await postEventsOk(Array.from({ length: gap }, (_, i) => ev.pr(org, i + 1)));
    expect((await placementOf(env, org.toLowerCase())).shard).toBe(light.shard);
    const next = unique("next");
    await postEventsOk([ev.pr(next, 1)]);
    expect((await placementOf(env, next.toLowerCase())).shard).toBe(heavy.shard);
  }, 60_000);
});

describe("moving an organization (POST/GET /internal/v1/organizations/{org}/move)", () => {
  it("202 copying, runs to done: the export answers the same rows from the other shard, the source rows are gone", async () => {
    const { org, home, page } = await world(12);
    const before = await walk(page, 5);
    expect(before).toHaveLength(12);
    const from = (await placementOf(env, home)).shard;
    const to = other(from);

    await using moves = await introspectWorkflow(env.MOVES);
    const res = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: to });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ shard: from, move: { org, from, to, state: "copying", rowsCopied: 0, lastError: null } });
    const [instance] = await moves.get();
    await instance?.waitForStatus("complete");

    const after = (await (await admin("GET", `/internal/v1/organizations/${org}/move`)).json()) as {
      shard: string;
      move: { state: string; rowsCopied: number };
    };
    expect(after).toMatchObject({ shard: to, move: { org, from, to, state: "done" } });
    expect(after.move.rowsCopied).toBe(12 * 4);
    expect(await walk(page, 5)).toEqual(before);
    expect(await countOf(from, home)).toBe(0);
    expect(await countOf(to, home)).toBe(12);

    // Already there: nothing to do.
    const again = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: to });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ shard: to, move: { state: "done" } });
  }, 60_000);

  it("400 naming shard for a shard not listed; 404 for an unknown organization; move null when none ran", async () => {
    const { org } = await world(1);
    const bad = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: "ANALYTICS_9" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { path: string }[] } }).error.details.map((d) => d.path)).toEqual([
      "shard",
    ]);
    // Any other field: 400 naming it (contract sections 4 and 5), and no move starts.
    const extra = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: "DB", bogus: [1, 2, 3] });
    expect(extra.status).toBe(400);
    expect(((await extra.json()) as { error: { details: { path: string }[] } }).error.details.map((d) => d.path)).toEqual([
      "bogus",
    ]);
    expect((await admin("POST", `/internal/v1/organizations/${unique("nobody")}/move`, { shard: "DB" })).status).toBe(404);
    expect(((await (await admin("GET", `/internal/v1/organizations/${org}/move`)).json()) as { move: unknown }).move).toBeNull();
  });

  it("409 move_in_progress for a second move while one runs", async () => {
    const { org, home } = await world(2);
    const to = other((await placementOf(env, home)).shard);
    await using moves = await introspectWorkflow(env.MOVES);
    // The first step fails once: its retry waits seconds, while the second POST comes at once.
    await moves.modifyAll(async (m) => {
      await m.mockStepError({ name: "begin" }, new Error("injected [expected-fault]"), 1);
    });
    expect((await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: to })).status).toBe(202);
    const second = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: to });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("move_in_progress");
    const [instance] = await moves.get();
    await instance?.waitForStatus("complete");
    expect((await placementOf(env, home)).shard).toBe(to);
  }, 60_000);
});

/** What an organization's rows hold, without ids and keys: comparable between two organizations. */
async function contents(shard: string, home: string) {
  const q = <T>(sql: string) =>
    db(shard)
      .prepare(sql)
      .bind(home)
      .all<T>()
      .then((r) => r.results);
  return {
    prs: await q(
      `SELECT repo_key, pr_number, author, created_at, merged_at, lines_added, lines_deleted, updated_at,
              first_reviewed_at, last_reviewed_at, after_merge_tier, before_merge_tier,
              ai_lines, posted_findings, fixed_findings, first_finding_at, last_finding_at
       FROM pull_requests WHERE org_key = ?1 AND author IS NOT NULL ORDER BY repo_key, pr_number`,
    ),
    reviews: await q(
      `SELECT r.review_id, p.pr_number, r.status, r.completed_at, r.updated_at FROM reviews AS r JOIN pull_requests AS p ON p.id = r.pr_id
       WHERE r.org_key = ?1 ORDER BY r.review_id`,
    ),
    findings: await q(
      `SELECT f.finding_id, p.pr_number, f.posted, f.ai_addressed, f.feedback, f.updated_at FROM findings AS f JOIN pull_requests AS p ON p.id = f.pr_id
       WHERE f.org_key = ?1 ORDER BY f.finding_id`,
    ),
    ai: await q(
      `SELECT a.source_id, p.pr_number, a.lines, a.updated_at FROM ai_authorship AS a JOIN pull_requests AS p ON p.id = a.pr_id
       WHERE a.org_key = ?1 ORDER BY a.source_id`,
    ),
  };
}

const T0 = Date.parse("2026-10-01T00:00:00Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** A random event of organization `org` about pull requests 1..6 (reviews may move between them), versions 1..20. */
const eventArb = fc.oneof(
  fc.record({
    kind: fc.constant("pr"),
    n: fc.integer({ min: 1, max: 6 }),
    v: fc.integer({ min: 1, max: 20 }),
    merged: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("review"),
    n: fc.integer({ min: 1, max: 6 }),
    id: fc.integer({ min: 1, max: 4 }),
    v: fc.integer({ min: 1, max: 20 }),
  }),
  fc.record({
    kind: fc.constant("finding"),
    n: fc.integer({ min: 1, max: 6 }),
    id: fc.integer({ min: 1, max: 4 }),
    v: fc.integer({ min: 1, max: 20 }),
  }),
  fc.record({
    kind: fc.constant("ai"),
    n: fc.integer({ min: 1, max: 6 }),
    id: fc.integer({ min: 1, max: 3 }),
    v: fc.integer({ min: 1, max: 20 }),
  }),
);
type Gen = { kind: string; n: number; v: number; id?: number; merged?: boolean };

function toEvent(org: string, g: Gen): Event {
  const base = { org, repo: "api", prNumber: g.n, updatedAt: T0 + g.v * 60_000 };
  switch (g.kind) {
    case "pr":
      return {
        type: "pull_request",
        ...base,
        author: `a${g.v}`,
        createdAt: T0,
        mergedAt: g.merged ? Date.parse(at(g.v)) : null,
        linesAdded: g.v,
        linesDeleted: 1,
      };
    case "review":
      return {
        type: "review",
        ...base,
        reviewId: `r${g.id}`,
        status: g.v % 3 === 0 ? "failed" : "completed",
        completedAt: T0 + g.v * 1000,
      };
    case "finding":
      return {
        type: "finding",
        ...base,
        findingId: `f${g.id}`,
        createdAt: T0,
        posted: g.v % 2 === 0,
        aiAddressed: g.v % 3 === 0,
        feedback: null,
      };
    default:
      return { type: "ai_authorship", ...base, sourceId: `s${g.id}`, lines: g.v };
  }
}

describe("the move stays exact while writes race every step (property)", () => {
  it("the moved organization ends with exactly the rows of a twin that received the same writes and never moved", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(eventArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.array(eventArb, { minLength: 0, maxLength: 3 }), fc.boolean()), { minLength: 12, maxLength: 12 }),
        async (initial, racing) => {
          const org = unique("mv");
          const twin = unique("twin");
          const write = async (gens: Gen[]) => {
            if (gens.length === 0) return;
            await storeEvents(
              env,
              gens.map((g) => toEvent(org, g)),
            );
            await storeEvents(
              env,
              gens.map((g) => toEvent(twin, g)),
            );
          };
          for (const batch of initial) await write(batch);
          const home = org.toLowerCase();
          const from = (await placementOf(env, home)).shard;
          const to = other(from);
          const { move: recorded } = await recordMove(env, { home, login: org }, from, to, Date.now());
          const current = async (): Promise<Move> => (await readMove(env, home)) as Move;

          // The Workflow's order; a racing write before each call, and each call maybe twice (a step retried after a crash).
          let i = 0;
          const race = async (step: () => Promise<unknown>) => {
            const [gens, repeat] = racing[i++ % racing.length] ?? [[], false];
            await write(gens);
            await step();
            if (repeat) await step();
          };
          await race(async () => beginMove(env, await current()));
          while (!(await copySome(env, await current(), 0, 2))) await race(async () => undefined);
          for (let pass = 0; pass < 2; pass++) {
            let caughtUp = false;
            await race(async () => {
              caughtUp = await catchUp(env, await current());
            });
            if (caughtUp) break;
            while (!(await copySome(env, await current(), 0, 2))) await race(async () => undefined);
          }
          const ids = (shard: string) =>
            db(shard)
              // The pull requests the export can list (placeholders are never listed, and one no record points at is not moved).
              .prepare("SELECT pr_number, id FROM pull_requests WHERE org_key = ?1 AND author IS NOT NULL ORDER BY pr_number")
              .bind(home)
              .all()
              .then((r) => r.results);
          const sourceIds = await ids(from);
          await race(async () => switchOver(env, await current()));
          await race(async () => finishMove(env, await current()));
          await write(racing[0]?.[0] ?? []);

          expect((await readMove(env, home))?.state).toBe("done");
          expect(await placementOf(env, home)).toEqual({ home, shard: to, movingTo: null });
          expect(await env.ORGANIZATIONS.getByName(home).placeShard(from, null)).toBe(to);
          expect(await countOf(from, home)).toBe(0);
          // One record, one id: the target kept the source's ids (an export cursor stays exact).
          expect(await ids(to)).toEqual(expect.arrayContaining(sourceIds));
          const twinShard = (await placementOf(env, twin.toLowerCase())).shard;
          expect(await contents(to, home)).toEqual(await contents(twinShard, twin.toLowerCase()));
          expect(recorded.state).toBe("copying");
        },
      ),
      { numRuns: 25 },
    );
  }, 240_000);
});

describe("an export walk spanning the switch returns every row exactly once", () => {
  it("pages before the switch from the source, after it from the target, with the same cursor (same ids)", async () => {
    // Every pull request merged at the same instant: the walk's order is by id alone.
    const { org, home, page } = await world(9, () => "2026-10-02T10:00:00Z");
    const before = await walk(page, 2);
    expect(before).toHaveLength(9);
    const from = (await placementOf(env, home)).shard;
    // The target has allocated more ids than the source (as any busier shard has): ids it would
    // allocate now sort differently from the source's, so only kept ids keep the cursor exact.
    await db(other(from)).prepare("UPDATE shard_counters SET next_sequence = next_sequence + 5 WHERE one = 1").run();
    const { move } = await recordMove(env, { home, login: org }, from, other(from), Date.now());
    const current = async (): Promise<Move> => (await readMove(env, home)) as Move;
    await beginMove(env, move);
    while (!(await copySome(env, await current(), 0, 3))) {}
    await catchUp(env, await current());
    // Pages 1 and 2 from the source, the switch, then the rest from the target.
    const rows = await walk(page, 2, async (i) => {
      if (i === 1) await switchOver(env, await current());
      if (i === 2) await finishMove(env, await current());
    });
    expect(rows).toEqual(before);
    expect((await readMove(env, home))?.state).toBe("done");
  }, 60_000);
});

describe("a move that fails before its switch leaves the source as it was", () => {
  it("placement back on the source alone, the target's copy deleted, writes go to the source only", async () => {
    const { org, home, page } = await world(6);
    const before = await walk(page, 10);
    const from = (await placementOf(env, home)).shard;
    const to = other(from);
    const { move } = await recordMove(env, { home, login: org }, from, to, Date.now());
    await beginMove(env, move);
    await copySome(env, (await readMove(env, home)) as Move, 0, 4);
    expect(await countOf(to, home)).toBeGreaterThan(0);
    await failMove(env, (await readMove(env, home)) as Move, "injected [expected-fault]");
    expect(await placementOf(env, home)).toEqual({ home, shard: from, movingTo: null });
    expect(await countOf(to, home)).toBe(0);
    expect(await walk(page, 10)).toEqual(before);
    await postEventsOk([ev.pr(org, 99)]);
    expect(await countOf(to, home)).toBe(0);
    expect(await countOf(from, home)).toBe(7);
    expect(await shardDb(home)).toBe(db(from));
    const res = await admin("GET", `/internal/v1/organizations/${org}/move`);
    expect(await res.json()).toEqual({
      shard: from,
      move: { org, from, to, state: "failed", rowsCopied: expect.any(Number), lastError: "injected [expected-fault]" },
    });
  });
});
