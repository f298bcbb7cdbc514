import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storeEvents } from "../../src/directory/events";
import { Event, EventBatch } from "../../src/schemas/events";
import { GAP_TIER_BOUNDS_MS } from "../../src/storage/review-span";
import {
  addMember,
  admin,
  call,
  createKey,
  createOrg,
  createUser,
  EVENT_VERSION,
  env,
  ev,
  postEvents,
  shardDb,
  unique,
} from "./helpers";

type ErrorBody = { error: { code: string; details: { path: string; message: string }[] } };

const { pr, review, finding } = ev;
const authorship = ev.ai;

/** Everything D1 holds for one organization, in a stable order. */
async function snapshot(org: string) {
  const key = org.toLowerCase();
  const db = await shardDb(key);
  const q = (sql: string) =>
    db
      .prepare(sql)
      .bind(key)
      .all()
      .then((r) => r.results);
  return {
    pullRequests: await q("SELECT * FROM pull_requests WHERE org_key = ?1 ORDER BY repo_key, pr_number"),
    reviews: await q("SELECT * FROM reviews WHERE org_key = ?1 ORDER BY review_id"),
    findings: await q("SELECT * FROM findings WHERE org_key = ?1 ORDER BY finding_id"),
    authorship: await q("SELECT * FROM ai_authorship WHERE org_key = ?1 ORDER BY source_id"),
  };
}

describe("ingestion", () => {
  it("stores all four event types and answers with the count", async () => {
    const org = unique("org");
    const res = await postEvents([pr(org, 1), review(org, 1, "r1"), finding(org, 1, "f1"), authorship(org, 1, "a1", 7)]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 4 });
    const s = await snapshot(org);
    expect(s.pullRequests).toEqual([
      {
        id: expect.any(Number),
        org_key: org,
        repo_key: "api",
        pr_number: 1,
        repo: "api",
        author: "alice",
        created_at: Date.parse("2026-10-01T10:00:00Z"),
        merged_at: Date.parse("2026-10-02T10:00:00Z"),
        lines_added: 10,
        lines_deleted: 2,
        updated_at: Date.parse(EVENT_VERSION),
        // The review span: one completed review, 22 hours before the merge (tier 0, under a day).
        first_reviewed_at: Date.parse("2026-10-01T12:00:00Z"),
        last_reviewed_at: Date.parse("2026-10-01T12:00:00Z"),
        after_merge_tier: null,
        before_merge_tier: 0,
        // The figures: 7 AI lines (under the cap of 12 changed lines), one posted finding, not
        // AI-addressed.
        ai_lines: 7,
        posted_findings: 1,
        fixed_findings: 0,
        first_finding_at: Date.parse("2026-10-01T12:00:00Z"),
        last_finding_at: Date.parse("2026-10-01T12:00:00Z"),
      },
    ]);
    const prId = (s.pullRequests[0] as { id: number }).id;
    expect(s.reviews).toEqual([
      {
        org_key: org,
        review_id: "r1",
        pr_id: prId,
        status: "completed",
        completed_at: Date.parse("2026-10-01T12:00:00Z"),
        updated_at: Date.parse(EVENT_VERSION),
      },
    ]);
    expect(s.findings).toEqual([
      {
        org_key: org,
        finding_id: "f1",
        pr_id: prId,
        created_at: Date.parse("2026-10-01T12:00:00Z"),
        posted: 1,
        ai_addressed: 0,
        feedback: null,
        updated_at: Date.parse(EVENT_VERSION),
      },
    ]);
    expect(s.authorship).toEqual([
      { org_key: org, source_id: "a1", pr_id: prId, lines: 7, updated_at: Date.parse(EVENT_VERSION) },
    ]);
  });

  it("an empty batch is accepted", async () => {
    const res = await postEvents([]);
    expect(await res.json()).toEqual({ accepted: 0 });
  });

  it("replaying a batch changes nothing", async () => {
    const org = unique("org");
    const batch = [
      pr(org, 1),
      pr(org, 2, { mergedAt: null }),
      review(org, 1, "r1"),
      finding(org, 2, "f1"),
      authorship(org, 1, "a1", 3),
    ];
    await postEvents(batch);
    const first = await snapshot(org);
    await postEvents(batch);
    expect(await snapshot(org)).toEqual(first);
  });

  it("events may arrive in any order: children before their pull request keep pointing at it", async () => {
    const org = unique("org");
    await postEvents([review(org, 5, "r1"), finding(org, 5, "f1"), authorship(org, 5, "a1", 4)]);
    const before = await snapshot(org);
    expect(before.pullRequests).toHaveLength(1);
    expect(before.pullRequests[0]).toMatchObject({ pr_number: 5, author: null, merged_at: null });
    await postEvents([pr(org, 5)]);
    const after = await snapshot(org);
    expect(after.pullRequests).toHaveLength(1);
    const prId = (after.pullRequests[0] as { id: number }).id;
    expect(after.pullRequests[0]).toMatchObject({ id: (before.pullRequests[0] as { id: number }).id, author: "alice" });
    expect(after.reviews).toEqual([expect.objectContaining({ pr_id: prId })]);
    expect(after.findings).toEqual([expect.objectContaining({ pr_id: prId })]);
    expect(after.authorship).toEqual([expect.objectContaining({ pr_id: prId })]);
  });

  it("later events update by their upsert keys; organization and repository names match case-insensitively", async () => {
    const org = unique("Org");
    await postEvents([pr(org, 1), review(org, 1, "r1", { status: "in_progress", completedAt: null }), finding(org, 1, "f1")]);
    const updatedAt = "2026-10-04T00:00:00Z";
    await postEvents([
      pr(org.toUpperCase(), 1, { repo: "API", linesAdded: null, updatedAt }),
      review(org.toLowerCase(), 1, "r1", { updatedAt }),
      finding(org, 1, "f1", { aiAddressed: true, feedback: "negative", updatedAt }),
    ]);
    const s = await snapshot(org);
    expect(s.pullRequests).toHaveLength(1);
    expect(s.pullRequests[0]).toMatchObject({ repo: "API", lines_added: null });
    expect(s.reviews).toEqual([expect.objectContaining({ status: "completed" })]);
    expect(s.findings).toEqual([expect.objectContaining({ ai_addressed: 1, feedback: "negative" })]);
  });

  it("integer and string ids are the same id", async () => {
    const org = unique("org");
    await postEvents([
      pr(org, 1),
      { ...review(org, 1, "x"), reviewId: 12 },
      review(org, 1, "12", { status: "failed", completedAt: null, updatedAt: "2026-10-04T00:00:00Z" }),
    ]);
    expect((await snapshot(org)).reviews).toEqual([expect.objectContaining({ review_id: "12", status: "failed" })]);
  });

  it("keeps events of organizations the control plane has not registered", async () => {
    const org = unique("unregistered");
    expect((await postEvents([pr(org, 1)])).status).toBe(200);
    expect((await snapshot(org)).pullRequests).toHaveLength(1);
  });
});

describe("versions: the greatest updatedAt wins (contract section 5)", () => {
  const T1 = "2026-10-05T10:00:00Z";
  const T2 = "2026-10-05T11:00:00Z";
  const T3 = "2026-10-05T12:00:00Z";

  it("issue 7: a delayed retry of an older batch cannot un-merge a pull request or un-complete its review", async () => {
    const org = await createOrg(unique("org"), { installedAt: "2026-01-01T00:00:00Z" });
    const user = await createUser();
    await addMember(org, user, "admin");
    const { key } = await createKey(user, "analytics");
    const exported = async () => {
      const res = await call(`/api/analytics/v1/prs?org=${org}&startDate=2026-10-01&endDate=2026-10-31`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { prNumber: number; mergedAt: string }[] }).data;
    };
    const batchA = [
      pr(org, 7, { mergedAt: null, updatedAt: T1 }),
      review(org, 7, "r1", { status: "in_progress", completedAt: null, updatedAt: T1 }),
    ];
    const batchB = [
      pr(org, 7, { mergedAt: "2026-10-05T10:30:00Z", updatedAt: T2 }),
      review(org, 7, "r1", { status: "completed", completedAt: "2026-10-05T10:20:00Z", updatedAt: T2 }),
    ];
    expect(await (await postEvents(batchA)).json()).toEqual({ accepted: 2 });
    expect(await (await postEvents(batchB)).json()).toEqual({ accepted: 2 });
    const before = await snapshot(org);
    expect(await exported()).toEqual([expect.objectContaining({ prNumber: 7, mergedAt: "2026-10-05T10:30:00.000Z" })]);

    const retry = await postEvents(batchA);
    expect(await retry.json()).toEqual({ accepted: 2 }); // older events still count as accepted
    expect(await snapshot(org)).toEqual(before);
    expect(await exported()).toEqual([expect.objectContaining({ prNumber: 7, mergedAt: "2026-10-05T10:30:00.000Z" })]);
  });

  /** For each event type: an old and a new version of one record, and the column that tells them apart. */
  const cases = [
    {
      type: "pull_request",
      old: (org: string) => pr(org, 1, { author: "old", updatedAt: T1 }),
      new: (org: string) => pr(org, 1, { author: "new", updatedAt: T2 }),
      read: (s: Awaited<ReturnType<typeof snapshot>>) => s.pullRequests.map((r) => r.author),
    },
    {
      type: "review",
      old: (org: string) => review(org, 1, "r", { status: "in_progress", completedAt: null, updatedAt: T1 }),
      new: (org: string) => review(org, 1, "r", { status: "completed", updatedAt: T2 }),
      read: (s: Awaited<ReturnType<typeof snapshot>>) => s.reviews.map((r) => (r.status === "completed" ? "new" : "old")),
    },
    {
      type: "finding",
      old: (org: string) => finding(org, 1, "f", { aiAddressed: false, updatedAt: T1 }),
      new: (org: string) => finding(org, 1, "f", { aiAddressed: true, updatedAt: T2 }),
      read: (s: Awaited<ReturnType<typeof snapshot>>) => s.findings.map((r) => (r.ai_addressed ? "new" : "old")),
    },
    {
      type: "ai_authorship",
      old: (org: string) => authorship(org, 1, "a", 10, { updatedAt: T1 }),
      new: (org: string) => authorship(org, 1, "a", 20, { updatedAt: T2 }),
      read: (s: Awaited<ReturnType<typeof snapshot>>) => s.authorship.map((r) => (r.lines === 20 ? "new" : "old")),
    },
  ];
  it.each(cases)("$type: old then new, or new then old, in separate batches: the new version stays", async (c) => {
    const forward = unique("org");
    await postEvents([pr(forward, 1), c.old(forward)]);
    expect((await postEvents([c.new(forward)])).status).toBe(200);
    const backward = unique("org");
    await postEvents([pr(backward, 1), c.new(backward)]);
    const res = await postEvents([c.old(backward)]);
    expect(await res.json()).toEqual({ accepted: 1 });
    expect(c.read(await snapshot(forward))).toEqual(["new"]);
    expect(c.read(await snapshot(backward))).toEqual(["new"]);
  });

  it.each(cases)("$type: inside one batch the greatest updatedAt wins wherever it stands", async (c) => {
    const first = unique("org");
    const last = unique("org");
    await postEvents([pr(first, 1), c.new(first), c.old(first)]);
    await postEvents([pr(last, 1), c.old(last), c.new(last)]);
    expect(c.read(await snapshot(first))).toEqual(["new"]);
    expect(c.read(await snapshot(last))).toEqual(["new"]);
  });

  it.each(cases)("$type: equal version, different content: the state stored first stays", async (c) => {
    const stored = unique("org");
    await postEvents([pr(stored, 1), c.old(stored)]);
    await postEvents([{ ...c.new(stored), updatedAt: T1 }]);
    const sameBatch = unique("org");
    await postEvents([pr(sameBatch, 1), c.old(sameBatch), { ...c.new(sameBatch), updatedAt: T1 }]);
    expect(c.read(await snapshot(stored))).toEqual(["old"]);
    expect(c.read(await snapshot(sameBatch))).toEqual(["old"]);
  });

  it("a placeholder from an early child event never blocks the pull request, whatever its version", async () => {
    const org = unique("org");
    await postEvents([review(org, 5, "r1", { updatedAt: T3 }), finding(org, 5, "f1", { updatedAt: T3 })]);
    const placeholder = (await snapshot(org)).pullRequests;
    expect(placeholder).toEqual([expect.objectContaining({ pr_number: 5, author: null, updated_at: null })]);
    // Older than its children, and even the oldest possible version: the pull request still lands.
    await postEvents([pr(org, 5, { updatedAt: "1970-01-01T00:00:00Z" })]);
    const after = await snapshot(org);
    expect(after.pullRequests).toEqual([
      expect.objectContaining({ id: (placeholder[0] as { id: number }).id, author: "alice", updated_at: 0 }),
    ]);
  });

  it("an outdated child event leaves no trace, not even a placeholder for the pull request it names", async () => {
    const org = unique("org");
    await postEvents([pr(org, 1), review(org, 1, "r1", { updatedAt: T2 })]);
    const before = await snapshot(org);
    // The old version of r1 pointed at pull request 2, which D1 has never seen.
    const res = await postEvents([review(org, 2, "r1", { status: "failed", completedAt: null, updatedAt: T1 })]);
    expect(await res.json()).toEqual({ accepted: 1 });
    expect(await snapshot(org)).toEqual(before);
    // A newer version may move it, and then the placeholder is needed and made.
    await postEvents([review(org, 2, "r1", { status: "failed", completedAt: null, updatedAt: T3 })]);
    const moved = await snapshot(org);
    expect(moved.pullRequests.map((p) => p.pr_number)).toEqual([1, 2]);
    expect(moved.reviews).toEqual([expect.objectContaining({ pr_id: moved.pullRequests[1]?.id, status: "failed" })]);
  });

  it("rows stored before versions existed (updated_at NULL) take any event", async () => {
    const org = unique("org");
    await postEvents([pr(org, 1), review(org, 1, "r1", { status: "in_progress", completedAt: null })]);
    const db = await shardDb(org);
    await db.batch([
      db.prepare("UPDATE pull_requests SET updated_at = NULL WHERE org_key = ?1").bind(org),
      db.prepare("UPDATE reviews SET updated_at = NULL WHERE org_key = ?1").bind(org),
    ]);
    await postEvents([pr(org, 1, { author: "bob", updatedAt: "1970-01-01T00:00:00Z" }), review(org, 1, "r1", { updatedAt: T1 })]);
    const s = await snapshot(org);
    expect(s.pullRequests).toEqual([expect.objectContaining({ author: "bob", updated_at: 0 })]);
    expect(s.reviews).toEqual([expect.objectContaining({ status: "completed", updated_at: Date.parse(T1) })]);
  });

  it("updatedAt is required on every event type and must be a timestamp", async () => {
    const org = unique("org");
    const events = [pr(org, 1), review(org, 1, "r"), finding(org, 1, "f"), authorship(org, 1, "a", 1)];
    const missing = await postEvents(events.map(({ updatedAt: _v, ...rest }) => rest));
    expect(missing.status).toBe(400);
    const paths = ((await missing.json()) as ErrorBody).error.details.map((d) => d.path);
    expect(paths).toEqual(["events.0.updatedAt", "events.1.updatedAt", "events.2.updatedAt", "events.3.updatedAt"]);
    const bad = await postEvents([pr(org, 1, { updatedAt: "2026-10-05" }), review(org, 1, "r", { updatedAt: 1 })]);
    expect(((await bad.json()) as ErrorBody).error.details.map((d) => d.path)).toEqual([
      "events.0.updatedAt",
      "events.1.updatedAt",
    ]);
    expect(await snapshot(org)).toEqual({ pullRequests: [], reviews: [], findings: [], authorship: [] });
  });
});

describe("a merge is final (contract section 17)", () => {
  const T = "2026-10-05T10:00:00Z";
  const LATER = "2026-10-05T11:00:00Z";
  const MERGED = "2026-10-05T10:00:00Z";
  const row = async (org: string) => {
    const [p] = (await snapshot(org)).pullRequests as { merged_at: number | null; author: string; updated_at: number }[];
    return p && { mergedAt: p.merged_at, author: p.author, updatedAt: p.updated_at };
  };

  it("issue 18: a merge in the same second as a stored unmerged state (labeled, then closed) is applied and exported", async () => {
    const org = await createOrg(unique("org"), { installedAt: "2026-01-01T00:00:00Z" });
    const user = await createUser();
    await addMember(org, user, "admin");
    const { key } = await createKey(user, "analytics");
    await postEvents([pr(org, 3, { mergedAt: null, author: "labeled", updatedAt: T })]);
    await postEvents([pr(org, 3, { mergedAt: MERGED, author: "closed", updatedAt: T })]);
    await postEvents([review(org, 3, "r3", { completedAt: "2026-10-05T10:30:00Z", updatedAt: T })]);
    expect(await row(org)).toEqual({ mergedAt: Date.parse(MERGED), author: "closed", updatedAt: Date.parse(T) });
    const res = await call(`/api/analytics/v1/prs?org=${org}&startDate=2026-10-01&endDate=2026-10-31`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(((await res.json()) as { data: { prNumber: number }[] }).data.map((r) => r.prNumber)).toEqual([3]);
  });

  it("a newer unmerged state cannot unmerge; its other fields still win", async () => {
    const org = unique("org");
    await postEvents([pr(org, 1, { mergedAt: MERGED, author: "first", updatedAt: T })]);
    await postEvents([pr(org, 1, { mergedAt: null, author: "newer", updatedAt: LATER })]);
    expect(await row(org)).toEqual({ mergedAt: Date.parse(MERGED), author: "newer", updatedAt: Date.parse(LATER) });
  });

  it("an older merged state still merges a newer unmerged one, and changes nothing else", async () => {
    const org = unique("org");
    await postEvents([pr(org, 1, { mergedAt: null, author: "newer", updatedAt: LATER })]);
    await postEvents([pr(org, 1, { mergedAt: MERGED, author: "older", updatedAt: T })]);
    expect(await row(org)).toEqual({ mergedAt: Date.parse(MERGED), author: "newer", updatedAt: Date.parse(LATER) });
  });

  it("any order of the same deliveries, one by one or in one batch, ends in the same row", async () => {
    // Histories GitHub can produce: unmerged states before the merge's second, merged ones after
    // it, and both within it (a labeled delivery sharing the merge's updated_at). Each (version,
    // merged) pair has its own author, so the expected row is known exactly.
    const versions = ["2026-10-05T10:00:00Z", "2026-10-05T10:00:01Z", "2026-10-05T10:00:02Z"];
    const history = fc
      .record({
        mergeAt: fc.integer({ min: 0, max: versions.length }), // versions.length: never merged
        states: fc.array(fc.record({ at: fc.nat(versions.length - 1), sameSecondMerged: fc.boolean() }), {
          minLength: 1,
          maxLength: 5,
        }),
      })
      .map(({ mergeAt, states }) =>
        states.map(({ at, sameSecondMerged }) => ({ at, merged: at > mergeAt || (at === mergeAt && sameSecondMerged) })),
      );
    await fc.assert(
      fc.asyncProperty(history, fc.boolean(), async (states, oneBatch) => {
        const events = (org: string) =>
          states.map((s) =>
            pr(org, 1, { mergedAt: s.merged ? MERGED : null, author: `v${s.at}-${s.merged}`, updatedAt: versions[s.at] }),
          );
        const forward = unique("org");
        const backward = unique("org");
        for (const e of events(forward)) await postEvents([e]);
        if (oneBatch) await postEvents(events(backward).reverse());
        else for (const e of events(backward).reverse()) await postEvents([e]);
        const top = Math.max(...states.map((s) => s.at));
        const topMerged = states.some((s) => s.at === top && s.merged);
        const expected = {
          mergedAt: states.some((s) => s.merged) ? Date.parse(MERGED) : null,
          author: `v${top}-${topMerged}`,
          updatedAt: Date.parse(versions[top] as string),
        };
        expect(await row(forward)).toEqual(expected);
        expect(await row(backward)).toEqual(expected);
      }),
      { numRuns: 30 },
    );
  });
});

describe("rows written (D1 meta.rows_written)", () => {
  /** 1,000 events shaped like the reviewer's traffic: per pull request 3 reviews, 10 findings, 1 authorship record. */
  function reviewerBatch(org: string, updatedAt = EVENT_VERSION) {
    const events: unknown[] = [];
    for (let n = 1; events.length < 1000; n++) {
      events.push(pr(org, n, { updatedAt }));
      for (let r = 0; r < 3; r++) events.push(review(org, n, `r${n}-${r}`, { updatedAt }));
      for (let f = 0; f < 10; f++) events.push(finding(org, n, `f${n}-${f}`, { updatedAt }));
      events.push(authorship(org, n, `a${n}`, 5, { updatedAt }));
    }
    return EventBatch.parse({ events: events.slice(0, 1000) }).events;
  }

  it("a replayed batch writes no row at all; neither does an older version of it", async () => {
    const org = unique("org");
    const first = await storeEvents(env, reviewerBatch(org));
    expect(first.rowsWritten).toBeGreaterThanOrEqual(1000);
    const stored = await snapshot(org);
    expect((await storeEvents(env, reviewerBatch(org))).rowsWritten).toBe(0);
    expect((await storeEvents(env, reviewerBatch(org, "2026-10-02T00:00:00Z"))).rowsWritten).toBe(0);
    expect(await snapshot(org)).toEqual(stored);
    // A newer version is written again, and only then.
    expect((await storeEvents(env, reviewerBatch(org, "2026-10-04T00:00:00Z"))).rowsWritten).toBeGreaterThanOrEqual(1000);
  });

  it("children replayed without their pull request write nothing either", async () => {
    const org = unique("org");
    const children = [review(org, 1, "r1"), finding(org, 1, "f1"), authorship(org, 1, "a1", 3)];
    const batch = EventBatch.parse({ events: children }).events;
    expect((await storeEvents(env, batch)).rowsWritten).toBeGreaterThan(0); // with the placeholder
    expect((await storeEvents(env, batch)).rowsWritten).toBe(0);
  });
});

describe("review span (derived by the write path for the analytics walk)", () => {
  const DAY = 86_400_000;
  const T0 = Date.parse("2025-06-01T00:00:00Z");
  const tierOf = (gap: number | null) => {
    if (gap === null || gap <= 0) return null;
    const tier = GAP_TIER_BOUNDS_MS.findIndex((bound) => gap < bound);
    return tier === -1 ? GAP_TIER_BOUNDS_MS.length : tier;
  };

  /** What the span of every pull request of `org` must be, recomputed here from the stored rows. */
  async function spans(org: string) {
    const db = await shardDb(org);
    const prs = (
      await db
        .prepare(
          "SELECT id, merged_at, first_reviewed_at, last_reviewed_at, after_merge_tier, before_merge_tier FROM pull_requests WHERE org_key = ?1 ORDER BY id",
        )
        .bind(org.toLowerCase())
        .all<Record<string, number | null> & { id: number; merged_at: number | null }>()
    ).results;
    const reviews = (
      await db
        .prepare("SELECT pr_id, completed_at FROM reviews WHERE org_key = ?1 AND status = 'completed'")
        .bind(org.toLowerCase())
        .all<{ pr_id: number; completed_at: number }>()
    ).results;
    const stored = prs.map(({ merged_at: _m, ...span }) => span);
    const expected = prs.map((p) => {
      const times = reviews.filter((r) => r.pr_id === p.id).map((r) => r.completed_at);
      const first = times.length === 0 ? null : Math.min(...times);
      const last = times.length === 0 ? null : Math.max(...times);
      const merged = p.merged_at;
      return {
        id: p.id,
        first_reviewed_at: first,
        last_reviewed_at: last,
        after_merge_tier: merged === null || last === null ? null : tierOf(last - merged),
        before_merge_tier: merged === null || first === null ? null : tierOf(merged - first),
      };
    });
    return { stored, expected };
  }

  it("after any sequence of batches, in any order of versions, the span matches the stored merges and reviews", async () => {
    const moment = fc.constantFrom(T0, T0 + 1, T0 + DAY, T0 + 3 * DAY, T0 + 40 * DAY, T0 + 600 * DAY, T0 - 600 * DAY);
    const version = fc.integer({ min: 1, max: 5 }).map((d) => `2026-10-0${d}T00:00:00Z`);
    const eventArb = fc.oneof(
      fc
        .record({ n: fc.integer({ min: 1, max: 3 }), merged: fc.option(moment, { nil: null }), v: version })
        .map(({ n, merged, v }) => ({
          kind: "pr" as const,
          n,
          merged,
          v,
        })),
      fc
        .record({
          n: fc.integer({ min: 1, max: 3 }),
          id: fc.constantFrom("r1", "r2", "r3", "r4"),
          status: fc.constantFrom("completed", "completed", "failed", "in_progress"),
          at: moment,
          v: version,
        })
        .map((r) => ({ kind: "review" as const, ...r })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(eventArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
        async (batches) => {
          const org = unique("span");
          for (const batch of batches) {
            const events = batch.map((e) =>
              e.kind === "pr"
                ? pr(org, e.n, { mergedAt: e.merged === null ? null : new Date(e.merged).toISOString(), updatedAt: e.v })
                : review(org, e.n, e.id, {
                    status: e.status,
                    completedAt: e.status === "completed" ? new Date(e.at).toISOString() : null,
                    updatedAt: e.v,
                  }),
            );
            expect((await postEvents(events)).status).toBe(200);
            const { stored, expected } = await spans(org);
            expect(stored).toEqual(expected);
          }
          const noted = await (await shardDb(org))
            .prepare("SELECT COUNT(*) AS n FROM pull_requests_to_refresh")
            .first<{ n: number }>();
          expect(noted?.n).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);

  it("the backfill of migration 0004 computes the span the write path keeps", async () => {
    const org = unique("backfill");
    await postEvents([
      pr(org, 1, { mergedAt: "2026-10-02T10:00:00Z" }),
      review(org, 1, "a", { completedAt: "2026-10-01T12:00:00Z" }),
      review(org, 1, "b", { completedAt: "2028-10-01T12:00:00Z" }),
      pr(org, 2, { mergedAt: null }),
      review(org, 2, "c"),
      pr(org, 3, { mergedAt: "2026-10-02T10:00:00Z" }),
      review(org, 3, "d", { status: "failed", completedAt: null }),
      review(org, 4, "e"),
    ]);
    const kept = (await spans(org)).stored;
    const backfill = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0004_review_spans"))?.queries.filter((q) =>
      q.includes("UPDATE"),
    );
    expect(backfill).toHaveLength(2);
    const db = await shardDb(org);
    await db
      .prepare(
        "UPDATE pull_requests SET first_reviewed_at = NULL, last_reviewed_at = NULL, after_merge_tier = NULL, before_merge_tier = NULL WHERE org_key = ?1",
      )
      .bind(org)
      .run();
    expect((await spans(org)).stored).not.toEqual(kept);
    for (const query of backfill ?? []) await db.prepare(query).run();
    expect((await spans(org)).stored).toEqual(kept);
  });
});

describe("batch validation", () => {
  it("one bad event rejects the whole batch with its path; nothing is stored", async () => {
    const org = unique("org");
    const res = await postEvents([pr(org, 1), review(org, 1, "r1"), finding(org, 1, "f1"), { ...pr(org, 2), prNumber: "2" }]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details).toEqual([{ path: "events.3.prNumber", message: expect.any(String) }]);
    expect(await snapshot(org)).toEqual({ pullRequests: [], reviews: [], findings: [], authorship: [] });
  });

  it.each([
    ["an unknown type", { type: "comment" }, "events.0.type"],
    ["an unknown field", { ...pr("o", 1), colour: "red" }, "events.0.colour"],
    ["a missing field", (({ author: _a, ...rest }) => rest)(pr("o", 1)), "events.0.author"],
    ["a zone-less timestamp", pr("o", 1, { createdAt: "2026-10-01T10:00:00" }), "events.0.createdAt"],
    ["an impossible date", pr("o", 1, { mergedAt: "2026-02-30T10:00:00Z" }), "events.0.mergedAt"],
    ["a year before 1970", pr("o", 1, { createdAt: "1969-12-31T23:59:59Z" }), "events.0.createdAt"],
    ["negative lines", pr("o", 1, { linesAdded: -1 }), "events.0.linesAdded"],
    ["fractional lines", authorship("o", 1, "a", 1.5), "events.0.lines"],
    ["a pull request number of 0", pr("o", 0), "events.0.prNumber"],
    ["an unknown review status", review("o", 1, "r", { status: "done" }), "events.0.status"],
    ["a completed review without completedAt", review("o", 1, "r", { completedAt: null }), "events.0.completedAt"],
    ["a bad feedback value", finding("o", 1, "f", { feedback: "meh" }), "events.0.feedback"],
    ["posted as a string", finding("o", 1, "f", { posted: "true" }), "events.0.posted"],
    ["an empty org", pr("", 1), "events.0.org"],
    ["an empty id", review("o", 1, ""), "events.0.reviewId"],
    ["an author with an unpaired high surrogate", pr("o", 1, { author: "\ud800high" }), "events.0.author"],
    ["an author with an unpaired low surrogate", pr("o", 1, { author: "low\udc00" }), "events.0.author"],
    ["a review id with an unpaired surrogate", review("o", 1, "r\ud83d"), "events.0.reviewId"],
    ["an AI source id with an unpaired surrogate", authorship("o", 1, "\udfff", 3), "events.0.sourceId"],
  ])("400 for %s, naming %s", async (_name, event, path) => {
    const res = await postEvents([event]);
    expect(res.status).toBe(400);
    const paths = ((await res.json()) as ErrorBody).error.details.map((d) => d.path);
    expect(paths).toContain(path);
  });

  it("text that is not well-formed Unicode is refused in words; emoji, U+FFFD and U+FFFF are text like any other", async () => {
    const org = unique("org");
    const bad = await postEvents([pr(org, 1, { author: "\ud800high" })]);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorBody).error.details).toEqual([
      { path: "events.0.author", message: "must be well-formed Unicode text (no unpaired surrogate)" },
    ]);
    const authors = ["😀", "\ufffd\ufffd\ufffdhigh", "\uffff"];
    const ok = await postEvents(authors.map((author, i) => pr(org, i + 1, { author })));
    expect(ok.status).toBe(200);
    expect((await snapshot(org)).pullRequests.map((p) => (p as { author: string }).author).sort()).toEqual([...authors].sort());
  });

  it("a date alone is refused with a message that says what a timestamp field takes", async () => {
    const res = await postEvents([
      pr("o", 1, { createdAt: "2026-01-01" }),
      review("o", 1, "r", { updatedAt: "2026-01-01" }),
      finding("o", 1, "f", { createdAt: "yesterday" }),
    ]);
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.details).toEqual([
      {
        path: "events.0.createdAt",
        message: "must be a timestamp with a time and Z or ±HH:MM, like 2026-11-02T00:00:00Z; a date alone is not accepted here",
      },
      {
        path: "events.1.updatedAt",
        message: "must be a timestamp with a time and Z or ±HH:MM, like 2026-11-02T00:00:00Z; a date alone is not accepted here",
      },
      { path: "events.2.createdAt", message: "must be an ISO 8601 timestamp with Z or ±HH:MM, like 2026-11-02T09:30:00Z" },
    ]);
  });

  it("400 for more than 1000 events; exactly 1000 is fine", async () => {
    const org = unique("org");
    const many = Array.from({ length: 1001 }, (_, i) => authorship(org, 1 + (i % 50), `a${i}`, i));
    const res = await postEvents(many);
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.details[0]?.path).toBe("events");
    const ok = await postEvents(many.slice(0, 1000));
    expect(await ok.json()).toEqual({ accepted: 1000 });
    expect((await snapshot(org)).authorship).toHaveLength(1000);
  });

  it("400 when events is missing or not an array", async () => {
    for (const body of [{}, { events: {} }, { events: null }]) {
      const res = await admin("POST", "/internal/v1/events", body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error.details[0]?.path).toBe("events");
    }
  });
});

describe("names (contract section 5)", () => {
  const nameProblem = async (event: unknown, path: string) => {
    const res = await postEvents([pr(unique("org"), 1), event]);
    expect(res.status).toBe(400);
    const details = ((await res.json()) as ErrorBody).error.details;
    expect(details).toEqual([{ path, message: expect.stringMatching(/^must be a GitHub (login|repository name)/) }]);
  };

  it.each([
    ["NUL inside", "a\u0000b"],
    ["a leading hyphen", "-acme"],
    ["40 characters", "a".repeat(40)],
    ["an underscore", "ac_me"],
    ["a dot", "ac.me"],
    ["a space", "ac me"],
    ["a non-ASCII letter", "acmé"],
    ["a trailing newline", "acme\n"],
  ])("org with %s is 400", (_what, org) => nameProblem(pr(org, 1), "events.1.org"));

  it.each([
    ["NUL inside", "b\u0000c"],
    ["only a dot", "."],
    ["two dots", ".."],
    ["101 characters", "r".repeat(101)],
    ["a slash", "a/b"],
    ["a space", "a b"],
    ["nothing", ""],
  ])("repo with %s is 400", (_what, repo) => nameProblem(review(unique("org"), 1, "r1", { repo }), "events.1.repo"));

  it("GitHub's edge cases are accepted: 39-character login, hyphens, dotted and 100-character repository names", async () => {
    const org = `${unique("o")}-`.padEnd(39, "x");
    const repos = ["...", ".github", "a-b_c.d", "R".repeat(100)];
    const res = await postEvents(repos.map((repo, i) => pr(org, i + 1, { repo })));
    expect(res.status).toBe(200);
    expect((await snapshot(org)).pullRequests.map((p) => (p as { repo: string }).repo).sort()).toEqual([...repos].sort());
  });
});

describe("reference keys", () => {
  it("names that would collide when joined with NUL stay separate records", async () => {
    // Validation refuses such names over HTTP; the write path must not depend on that.
    const base = unique("nul");
    const at = Date.parse("2026-10-01T12:00:00Z");
    const one = { type: "review", prNumber: 1, status: "completed", completedAt: at, updatedAt: at } as const;
    await storeEvents(env, [
      { ...one, org: `${base}\u0000b`, repo: "c", reviewId: "r1" },
      { ...one, org: base, repo: "b\u0000c", reviewId: "r2" },
    ]);
    const rows = await (await shardDb(base))
      .prepare(
        `SELECT r.review_id, p.org_key, p.repo_key FROM reviews AS r JOIN pull_requests AS p ON p.id = r.pr_id
       WHERE r.org_key IN (?1, ?2) ORDER BY r.review_id`,
      )
      .bind(`${base}\u0000b`, base)
      .all();
    expect(rows.results).toEqual([
      { review_id: "r1", org_key: `${base}\u0000b`, repo_key: "c" },
      { review_id: "r2", org_key: base, repo_key: "b\u0000c" },
    ]);
  });
});

describe("validator properties", () => {
  const eventLike = fc.record(
    {
      type: fc.constantFrom("pull_request", "review", "finding", "ai_authorship", "other"),
      org: fc.oneof(fc.string(), fc.integer()),
      repo: fc.string(),
      prNumber: fc.oneof(fc.integer(), fc.double(), fc.string()),
      author: fc.string(),
      createdAt: fc.oneof(
        fc.string(),
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      ),
      mergedAt: fc.oneof(
        fc.constant(null),
        fc.string(),
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      ),
      completedAt: fc.oneof(fc.constant(null), fc.string()),
      updatedAt: fc.oneof(
        fc.string(),
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      ),
      linesAdded: fc.oneof(fc.constant(null), fc.integer(), fc.double()),
      linesDeleted: fc.oneof(fc.constant(null), fc.integer()),
      reviewId: fc.oneof(fc.string(), fc.integer()),
      status: fc.constantFrom("completed", "failed", "in_progress", "x"),
      lines: fc.oneof(fc.integer(), fc.string()),
      posted: fc.oneof(fc.boolean(), fc.string()),
      feedback: fc.constantFrom(null, "positive", "negative", "x"),
    },
    { requiredKeys: [] },
  );

  it("the schema never throws: any input is either a batch or a list of problems with paths", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.record({ events: fc.array(fc.oneof(eventLike, fc.anything()), { maxLength: 5 }) })),
        (input) => {
          const result = EventBatch.safeParse(input);
          if (!result.success) expect(result.error.issues.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("over HTTP, random batches are answered 200 or 400, never 500, and a 400 stores nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventLike, { minLength: 1, maxLength: 4 }), async (events) => {
        const org = unique("prop");
        const tagged = events.map((e) => ({ ...e, org }));
        const res = await postEvents(tagged);
        expect([200, 400]).toContain(res.status);
        const valid = tagged.every((e) => Event.safeParse(e).success);
        expect(res.status).toBe(valid ? 200 : 400);
        if (res.status === 400) expect((await snapshot(org)).pullRequests).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});
