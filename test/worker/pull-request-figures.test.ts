import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { moveRows } from "../../src/storage/renames";
import { env, ev, postEvents, unique as uniqueName } from "./helpers";

/**
 * The window-independent figures of a pull request (`storage/pull-request-figures.ts`) that the
 * summary reads instead of the findings and AI-authorship records: whatever the order, versions and
 * moves of the events, and after moves of rows (`storage/renames.ts`), they equal a recomputation
 * from the stored rows here, with plain loops.
 */

type Figures = {
  id: number;
  ai_lines: number | null;
  posted_findings: number;
  fixed_findings: number;
  first_finding_at: number | null;
  last_finding_at: number | null;
};

/** The figures as stored, and as recomputed from the raw rows, of every pull request of `org`. */
/**
 * An organization name whose analytics rows live on DB: these tests call the storage functions
 * (`moveRows`) and read the rows on one database, so every organization they use is placed there
 * (its placement recorded before its first event; contract section 16).
 */
async function unique(prefix: string): Promise<string> {
  const org = uniqueName(prefix);
  await env.DB.prepare("INSERT INTO analytics_placements (home_key, shard) VALUES (?1, 'DB')").bind(org.toLowerCase()).run();
  return org;
}

async function figures(org: string) {
  const key = org.toLowerCase();
  const prs = (
    await env.DB.prepare(
      `SELECT id, lines_added, lines_deleted, ai_lines, posted_findings, fixed_findings, first_finding_at, last_finding_at
       FROM pull_requests WHERE org_key = ?1 ORDER BY id`,
    )
      .bind(key)
      .all<Figures & { lines_added: number | null; lines_deleted: number | null }>()
  ).results;
  const ids = JSON.stringify(prs.map((p) => p.id));
  const findings = (
    await env.DB.prepare(
      "SELECT pr_id, created_at, posted, ai_addressed FROM findings WHERE pr_id IN (SELECT value FROM json_each(?1))",
    )
      .bind(ids)
      .all<{ pr_id: number; created_at: number; posted: number; ai_addressed: number }>()
  ).results;
  const authorship = (
    await env.DB.prepare("SELECT pr_id, lines FROM ai_authorship WHERE pr_id IN (SELECT value FROM json_each(?1))")
      .bind(ids)
      .all<{ pr_id: number; lines: number }>()
  ).results;
  const stored: Figures[] = prs.map(({ lines_added: _a, lines_deleted: _d, ...f }) => f);
  const expected: Figures[] = prs.map((p) => {
    const posted = findings.filter((f) => f.pr_id === p.id && f.posted === 1);
    const records = authorship.filter((a) => a.pr_id === p.id);
    const sum = records.length === 0 ? null : records.reduce((n, a) => n + a.lines, 0);
    const cap = p.lines_added === null && p.lines_deleted === null ? null : (p.lines_added ?? 0) + (p.lines_deleted ?? 0);
    const times = posted.map((f) => f.created_at);
    return {
      id: p.id,
      ai_lines: sum === null || cap === null ? sum : Math.min(sum, cap),
      posted_findings: posted.length,
      fixed_findings: posted.filter((f) => f.ai_addressed === 1).length,
      first_finding_at: times.length === 0 ? null : Math.min(...times),
      last_finding_at: times.length === 0 ? null : Math.max(...times),
    };
  });
  return { stored, expected };
}

async function nothingNoted() {
  const noted = await env.DB.prepare("SELECT COUNT(*) AS n FROM pull_requests_to_refresh").first<{ n: number }>();
  expect(noted?.n).toBe(0);
}

const T0 = Date.parse("2026-09-01T00:00:00Z");
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const version = fc.integer({ min: 1, max: 5 }).map((d) => `2026-10-0${d}T00:00:00Z`);
const where = { repo: fc.constantFrom("api", "web"), n: fc.integer({ min: 1, max: 3 }) };

/** Pull request data (line counts that cap the AI lines, null ones), findings and AI records, any of them moving between pull requests. */
const eventArb = fc.oneof(
  fc
    .record({
      ...where,
      v: version,
      added: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
      deleted: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
    })
    .map((e) => ({ kind: "pr" as const, ...e })),
  fc
    .record({
      ...where,
      v: version,
      id: fc.constantFrom("f1", "f2", "f3", "f4"),
      at: fc.integer({ min: 0, max: 6 }).map((h) => T0 + h * HOUR),
      posted: fc.boolean(),
      aiAddressed: fc.boolean(),
    })
    .map((e) => ({ kind: "finding" as const, ...e })),
  fc
    .record({ ...where, v: version, id: fc.constantFrom("a1", "a2", "a3"), lines: fc.integer({ min: 0, max: 40 }) })
    .map((e) => ({ kind: "ai" as const, ...e })),
);
type GenEvent = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

function toEvent(org: string, e: GenEvent) {
  const at = { repo: e.repo, updatedAt: e.v };
  switch (e.kind) {
    case "pr":
      return ev.pr(org, e.n, { ...at, linesAdded: e.added, linesDeleted: e.deleted });
    case "finding":
      return ev.finding(org, e.n, e.id, { ...at, createdAt: iso(e.at), posted: e.posted, aiAddressed: e.aiAddressed });
    case "ai":
      return ev.ai(org, e.n, e.id, e.lines, at);
  }
}

const batchesArb = fc.array(fc.array(eventArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 });

describe("pull request figures (kept by the write path for the summary)", () => {
  it("after any sequence of batches, in any order of versions, they match the stored rows", async () => {
    await fc.assert(
      fc.asyncProperty(batchesArb, async (batches) => {
        const org = await unique("figures");
        for (const batch of batches) {
          expect((await postEvents(batch.map((e) => toEvent(org, e)))).status).toBe(200);
          const { stored, expected } = await figures(org);
          expect(stored).toEqual(expected);
        }
        await nothingNoted();
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("a replay writes nothing, and a finding that moves updates both pull requests", async () => {
    const org = await unique("figures");
    const batch = [
      ev.pr(org, 1),
      ev.pr(org, 2),
      ev.finding(org, 1, "f1", { createdAt: "2026-10-01T12:00:00Z", aiAddressed: true }),
      ev.finding(org, 1, "f2", { createdAt: "2026-10-01T15:00:00Z" }),
      ev.ai(org, 1, "a1", 50),
    ];
    expect((await postEvents(batch)).status).toBe(200);
    const first = await figures(org);
    expect(first.stored).toEqual(first.expected);
    expect(first.stored[0]).toMatchObject({ ai_lines: 12, posted_findings: 2, fixed_findings: 1 }); // capped at 10 + 2
    expect((await postEvents(batch)).status).toBe(200);
    expect((await figures(org)).stored).toEqual(first.stored);
    // f1 moves to pull request 2 (a newer version): 1 loses it, 2 gains it.
    expect(
      (await postEvents([ev.finding(org, 2, "f1", { createdAt: "2026-10-01T12:00:00Z", updatedAt: "2026-10-05T00:00:00Z" })]))
        .status,
    ).toBe(200);
    const moved = await figures(org);
    expect(moved.stored).toEqual(moved.expected);
    expect(moved.stored.map((f) => f.posted_findings)).toEqual([1, 1]);
    await nothingNoted();
  });

  it("after a move of rows (a repository or an organization renamed), they match the stored rows", async () => {
    await fc.assert(
      fc.asyncProperty(
        batchesArb,
        batchesArb,
        fc.constantFrom("repository", "organization"),
        async (sourceBatches, targetBatches, scope) => {
          const from = await unique("figures");
          const to = scope === "repository" ? from : await unique("figures");
          // For a repository rename the source is repository "web" and the target "api": the
          // target's events name "api" only, the source's "web" only.
          const atSource = (e: GenEvent) => (scope === "repository" ? { ...e, repo: "web" as const } : e);
          const atTarget = (e: GenEvent) => (scope === "repository" ? { ...e, repo: "api" as const } : e);
          for (const batch of sourceBatches)
            expect((await postEvents(batch.map((e) => toEvent(from, atSource(e))))).status).toBe(200);
          for (const batch of targetBatches)
            expect((await postEvents(batch.map((e) => toEvent(to, atTarget(e))))).status).toBe(200);
          if (scope === "repository") await moveRows(env.DB, { orgKey: from, repo: "web" }, { orgKey: to, repo: "api" });
          else await moveRows(env.DB, { orgKey: from }, { orgKey: to });
          const { stored, expected } = await figures(to);
          expect(stored).toEqual(expected);
          if (scope === "organization") expect((await figures(from)).stored).toEqual([]);
          await nothingNoted();
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it("the backfill of migration 0008 computes the figures the write path keeps", async () => {
    const org = await unique("backfill");
    expect(
      (
        await postEvents([
          ev.pr(org, 1),
          ev.finding(org, 1, "f1", { createdAt: "2026-10-01T12:00:00Z", aiAddressed: true }),
          ev.finding(org, 1, "f2", { createdAt: "2026-10-03T12:00:00Z" }),
          ev.finding(org, 1, "f3", { createdAt: "2026-09-03T12:00:00Z", posted: false }),
          ev.ai(org, 1, "a1", 5),
          ev.ai(org, 1, "a2", 30),
          ev.pr(org, 2, { linesAdded: null, linesDeleted: null }),
          ev.ai(org, 2, "a3", 30),
          ev.pr(org, 3, { linesAdded: null, linesDeleted: 4 }),
          ev.ai(org, 3, "a4", 30),
          ev.finding(org, 3, "f4", { posted: false }),
          ev.finding(org, 4, "f5"),
          ev.pr(org, 5),
        ])
      ).status,
    ).toBe(200);
    const kept = await figures(org);
    expect(kept.stored).toEqual(kept.expected);
    expect(kept.stored.map((f) => f.ai_lines)).toEqual([12, 30, 4, null, null]);
    const backfill = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0008_pull_request_figures"))?.queries.filter((q) =>
      q.includes("UPDATE"),
    );
    expect(backfill).toHaveLength(2);
    await env.DB.prepare(
      "UPDATE pull_requests SET ai_lines = NULL, posted_findings = 0, fixed_findings = 0, first_finding_at = NULL, last_finding_at = NULL WHERE org_key = ?1",
    )
      .bind(org)
      .run();
    expect((await figures(org)).stored).not.toEqual(kept.stored);
    for (const query of backfill ?? []) await env.DB.prepare(query).run();
    expect((await figures(org)).stored).toEqual(kept.stored);
  });
});
