import { describe, expect, it } from "vitest";
import { type GroupingsQuery, SUMMARY_LIMITS, summarizeGroupings } from "../../src/storage/analytics-summary";
import { EdgeCache } from "../../src/storage/summary-edges";
import { postEventsOk, shardDb } from "./helpers";
import { eventsOf, type Pr } from "./summary-attack-data";
import { expectedGroupings, scopeOf, shapeOf, summaryOrg, type Window, windowQuery } from "./summary-attack-http";
import { type ExportRow, exportRows, type GroupBy } from "./summary-reference";

/**
 * Edge days (`storage/summary-edges.ts`): a summary's window edges counted from a day's reviews and
 * findings kept by the isolate. The oracle is contract section 12 (the summary is exactly the
 * export's rows grouped), before and after writes that change what a window counts of a pull
 * request without changing any of its columns (a review or finding between its first and last):
 * only the block's `edge_version` (migration 0019) shows them.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const at = (text: string) => Date.parse(text);

/** A window of ten full days from a midnight; `D` its second day, `B` the day before it. */
const S = at("2026-05-04T00:00:00.000Z");
const E = S + 10 * DAY - 1;
const W: Window = { start: S, end: E };
const D = S + DAY;
const B = S - DAY;
const LATER = "2026-11-20T00:00:00.000Z";

const shape = shapeOf;
const expected = expectedGroupings;
const scope = (org: string, w: Window) => scopeOf(org, w);

/** Two pull requests a day from `from` to `to`, reviewed and merged on their day (no edge of theirs). */
function background(from: number, to: number): Pr[] {
  const prs: Pr[] = [];
  for (let day = from, n = 1; day < to; day += DAY)
    for (let k = 0; k < 2; k++, n++)
      prs.push({
        repo: k === 0 ? "api" : "web",
        n,
        author: k === 0 ? "alice" : "bob",
        created: day + HOUR,
        merged: day + (5 + k) * HOUR,
        reviews: [day + 3 * HOUR],
        findings: n % 3 === 0 ? [{ at: day + 2 * HOUR, fixed: n % 2 === 0 }] : [],
      });
  return prs;
}

/**
 * The pull requests whose middle review or finding the writes move (ids 101 to 103):
 * - 101, merged on D: findings before the start, a millisecond before it (the middle) and inside;
 * - 102, merged on D: reviewed before the start, again before it (the middle), and after the end;
 *   not listed until the middle review moves inside;
 * - 103, merged on the day before the window: reviewed that day, inside the window (the middle)
 *   and after the end; listed until the middle review moves after the end; findings around the start.
 */
function edgePullRequests(moved: boolean): Pr[] {
  return [
    {
      repo: "api",
      n: 101,
      author: "carol",
      created: S - 8 * HOUR,
      merged: D + 10 * HOUR,
      reviews: [S - 6 * HOUR, D + 9 * HOUR],
      findings: [
        { at: S - 5 * HOUR, fixed: false },
        { at: moved ? S : S - 1, fixed: true },
        { at: D + 2 * HOUR, fixed: false },
      ],
    },
    {
      repo: "web",
      n: 102,
      author: "dave",
      created: S - 9 * HOUR,
      merged: D + 12 * HOUR,
      reviews: [S - 7 * HOUR, moved ? S + 2 * HOUR : S - 2 * HOUR, E + 5 * HOUR],
      findings: [{ at: S - 7 * HOUR, fixed: false }],
    },
    {
      repo: "api",
      n: 103,
      author: "erin",
      created: B + HOUR,
      merged: B + 3 * HOUR,
      reviews: [B + 2 * HOUR, moved ? E + HOUR : S + 2 * HOUR, E + 3 * HOUR],
      findings: [
        { at: B + 2 * HOUR, fixed: true },
        { at: moved ? S - HOUR : S + HOUR, fixed: true },
        { at: E + 2 * HOUR, fixed: false },
      ],
    },
  ].map((p) => ({ ...p, ...(moved ? { version: LATER } : {}) }));
}

/** The edge version and version of the organization's blocks of D and of the day before the window. */
async function edgeVersions(db: D1Database, org: string): Promise<{ day: number; version: number; edge: number }[]> {
  const { results } = await db
    .prepare(
      "SELECT day, version, edge_version AS edge FROM summary_days WHERE org_key = ?1 AND repo_key = '' AND day IN (?2, ?3) ORDER BY day",
    )
    .bind(org, B / DAY, D / DAY)
    .all<{ day: number; version: number; edge: number }>();
  return results;
}

describe("summary edge days", () => {
  it("a review or finding moved between a pull request's first and last: its block's edge version counts up, and kept edge days are read again", {
    timeout: 60_000,
  }, async () => {
    const { org, get } = await summaryOrg("edges", "admin", { api: { private: false }, web: { private: false } });
    await postEventsOk(eventsOf(org, [...background(S - 3 * DAY, E + 1 + 3 * DAY), ...edgePullRequests(false)]));
    const db = await shardDb(org);
    const groupBys: GroupBy[] = ["week", "repo", "author"];
    const q: GroupingsQuery = { ...scope(org, W), groupBys };
    const exported = () => exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 });
    const before = expected(await exported(), groupBys, W);
    const edgeCache = new EdgeCache();
    const asked: number[] = [];
    for (let ask = 1; ask <= 4; ask++) {
      const figures = await summarizeGroupings(db, q, SUMMARY_LIMITS, { edgeCache });
      expect(shape(figures), `before, ask ${ask}`).toEqual(before);
      asked.push(figures.edgeDays);
    }
    // The first builds the blocks, the second reads D and the day before as edge days, then both count from them.
    expect(asked).toEqual([0, 0, 2, 2]);
    const built = await edgeVersions(db, org);
    expect(built.map(({ day, edge }) => [day, edge])).toEqual([
      [B / DAY, 0],
      [D / DAY, 0],
    ]);

    // The middle review and finding of each move: no column of the pull requests changes (their
    // blocks stay), only what the window counts of them, and the blocks' edge versions.
    await postEventsOk(eventsOf(org, edgePullRequests(true)));
    const after = expected(await exported(), groupBys, W);
    expect(after).not.toEqual(before);
    const moved = await edgeVersions(db, org);
    expect(moved.map(({ day, version }) => [day, version])).toEqual(built.map(({ day, version }) => [day, version]));
    for (const [i, block] of moved.entries()) expect(block.edge, `day ${block.day}`).toBeGreaterThan(built[i]?.edge as number);

    // Edge days kept from before the writes are not used: checked in SQL, read again, then counted.
    asked.length = 0;
    for (let ask = 1; ask <= 3; ask++) {
      const figures = await summarizeGroupings(db, q, SUMMARY_LIMITS, { edgeCache });
      expect(shape(figures), `after, ask ${ask}`).toEqual(after);
      asked.push(figures.edgeDays);
    }
    expect(asked).toEqual([0, 2, 2]);

    // The control: a write the edge versions do not show (set back after it, as if no trigger had
    // counted it up) leaves kept edge days taken for the new state: the answer is the old one. The
    // edge version is what keeps them exact.
    const stale = new EdgeCache();
    await db.prepare("UPDATE summary_days SET edge_version = 0 WHERE org_key = ?1").bind(org).run();
    await summarizeGroupings(db, q, SUMMARY_LIMITS, { edgeCache: stale }); // checks in SQL, reads the edge days
    await postEventsOk(
      eventsOf(
        org,
        edgePullRequests(false).map((p) => ({ ...p, version: "2026-11-21T00:00:00.000Z" })),
      ),
    );
    expect(await exported().then((rows) => expected(rows, groupBys, W))).toEqual(before);
    await db.prepare("UPDATE summary_days SET edge_version = 0 WHERE org_key = ?1").bind(org).run();
    const fooled = await summarizeGroupings(db, q, SUMMARY_LIMITS, { edgeCache: stale });
    expect(fooled.edgeDays).toBe(2);
    expect(shape(fooled), "edge versions set back").toEqual(after);
    expect(shape(await summarizeGroupings(db, q, SUMMARY_LIMITS, { edgeCache: new EdgeCache() })), "checked in SQL").toEqual(
      before,
    );
  });

  it("a day whose block is a marker (too large to build) is read for its edge day once, then checked in SQL without reading it again until rebuilt", async () => {
    const { org, get } = await summaryOrg("edgemark", "admin", { api: { private: false }, web: { private: false } });
    // The day before the window holds five pull requests (the background's two, 103, two more), D four.
    const more = [201, 202].map(
      (n): Pr => ({ repo: "web", n, author: "frank", created: B + HOUR, merged: B + 4 * HOUR, reviews: [B + 2 * HOUR] }),
    );
    await postEventsOk(eventsOf(org, [...background(S - 3 * DAY, E + 1 + 3 * DAY), ...edgePullRequests(false), ...more]));
    const db = await shardDb(org);
    const groupBys: GroupBy[] = ["week", "author"];
    const q: GroupingsQuery = { ...scope(org, W), groupBys };
    const want = expected(await exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 }), groupBys, W);
    // Blocks of at most four pull requests: the day before the window is a marker.
    const small = { ...SUMMARY_LIMITS, dayBlockMax: 4 };
    const loads: string[] = [];
    const counted = new Proxy(db, {
      get(target, name) {
        if (name === "prepare")
          return (sql: string) => {
            if (sql.startsWith("WITH blocks AS MATERIALIZED")) loads.push(sql);
            return target.prepare(sql);
          };
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const edgeCache = new EdgeCache();
    const asked: number[] = [];
    for (let ask = 1; ask <= 5; ask++) {
      const figures = await summarizeGroupings(counted, q, small, { edgeCache });
      expect(shape(figures), `ask ${ask}`).toEqual(want);
      asked.push(figures.edgeDays);
    }
    const marker = await db
      .prepare("SELECT lo IS NULL AS marker FROM summary_days WHERE org_key = ?1 AND repo_key = '' AND day = ?2")
      .bind(org, B / DAY)
      .first<{ marker: number }>();
    expect(marker?.marker).toBe(1);
    // D read once and counted from then on; the marker read once (it gives none), never again.
    expect(asked).toEqual([0, 0, 1, 1, 1]);
    expect(loads.length).toBe(1);
    // A write to the marker's day deletes it; rebuilt with room, it is read and counted.
    await postEventsOk(eventsOf(org, [{ ...background(B, B + DAY)[0], linesAdded: 7, version: LATER } as Pr]));
    const after = expected(await exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 }), groupBys, W);
    asked.length = 0;
    for (let ask = 1; ask <= 3; ask++) {
      const figures = await summarizeGroupings(counted, q, SUMMARY_LIMITS, { edgeCache });
      expect(shape(figures), `rebuilt, ask ${ask}`).toEqual(after);
      asked.push(figures.edgeDays);
    }
    expect(asked).toEqual([1, 1, 2]);
  });

  it("with `defer` (the routes' ctx.waitUntil), the edge days are read after the answer, which does not wait for them", async () => {
    const { org, get } = await summaryOrg("edgedefer", "admin", { api: { private: false }, web: { private: false } });
    await postEventsOk(eventsOf(org, [...background(S - 3 * DAY, E + 1 + 3 * DAY), ...edgePullRequests(false)]));
    const db = await shardDb(org);
    const groupBys: GroupBy[] = ["week", "repo"];
    const q: GroupingsQuery = { ...scope(org, W), groupBys };
    const want = expected(await exportRows<ExportRow>(get, windowQuery(org, W), { perPage: 100, maxPages: 100 }), groupBys, W);
    const edgeCache = new EdgeCache();
    const deferred: Promise<unknown>[] = [];
    const ask = async () => {
      const figures = await summarizeGroupings(db, q, SUMMARY_LIMITS, { edgeCache, defer: (start) => deferred.push(start()) });
      expect(shape(figures)).toEqual(want);
      return figures.edgeDays;
    };
    // The first builds the window's blocks and the day before's (a write: before the answer); nothing to read yet.
    expect(await ask()).toBe(0);
    expect(deferred.length).toBe(0);
    expect(await ask()).toBe(0);
    // The answer came back with the reads handed over, not done: nothing is kept yet.
    expect(deferred.length).toBe(1);
    expect(edgeCache.size.days).toBe(0);
    await Promise.all(deferred.splice(0));
    expect(edgeCache.size.days).toBe(2);
    expect(await ask()).toBe(2);
    expect(deferred.length).toBe(0); // every edge counted from kept days: nothing left to read
  });

  it("a day claimed by another request's read is left to it, and a claim older than a minute is taken over", async () => {
    const org = new EdgeCache().of("acme");
    const at = 1_000_000;
    const first = org.claim("", D / DAY, at);
    expect(first).not.toBeNull();
    expect(org.claim("", D / DAY, at + 59_999)).toBeNull();
    expect(org.claim("", B / DAY, at)).not.toBeNull(); // another day
    // Abandoned (work the runtime cancelled never releases it): taken over after a minute.
    const second = org.claim("", D / DAY, at + 60_000);
    expect(second).not.toBeNull();
    // The first holder's late release leaves the new claim alone; its own release ends it.
    org.release("", D / DAY, first as number);
    expect(org.claim("", D / DAY, at + 60_001)).toBeNull();
    org.release("", D / DAY, second as number);
    expect(org.claim("", D / DAY, at + 60_002)).not.toBeNull();
  });

  it("the triggers: completed reviews and posted findings of a merged pull request count its day's blocks up; others do not", async () => {
    const { org } = await summaryOrg("edgetrig", "admin", { api: { private: false } });
    await postEventsOk(eventsOf(org, background(S, S + 2 * DAY)));
    const db = await shardDb(org);
    await summarizeGroupings(db, { ...scope(org, { start: S, end: S + 2 * DAY - 1 }), groupBys: ["day"] });
    const { results: prs } = await db
      .prepare("SELECT id, repo_key FROM pull_requests WHERE org_key = ?1 AND merged_at < ?2 ORDER BY id")
      .bind(org, S + DAY)
      .all<{ id: number; repo_key: string }>();
    const pr = prs[0] as { id: number; repo_key: string };
    const versions = async () => {
      const { results } = await db
        .prepare("SELECT repo_key, day, edge_version AS edge FROM summary_days WHERE org_key = ?1 ORDER BY day, repo_key")
        .bind(org)
        .all<{ repo_key: string; day: number; edge: number }>();
      return results;
    };
    const start = await versions();
    expect(start.length).toBeGreaterThanOrEqual(2);
    let bumps = 0;
    const expectBumped = async (what: string, bumped: boolean) => {
      if (bumped) bumps++;
      const now = await versions();
      for (const block of now) {
        const mine = block.day === S / DAY && (block.repo_key === "" || block.repo_key === pr.repo_key);
        expect(block.edge, `${what}: ${block.repo_key || "organization"} ${block.day}`).toBe(mine ? bumps : 0);
      }
    };
    const run = (sql: string, ...binds: (string | number)[]) =>
      db
        .prepare(sql)
        .bind(...binds)
        .run();
    await run(
      "INSERT INTO reviews (org_key, review_id, pr_id, status, completed_at) VALUES (?1, 'x1', ?2, 'in_progress', NULL)",
      org,
      pr.id,
    );
    await expectBumped("a review not completed", false);
    await run(
      "UPDATE reviews SET status = 'completed', completed_at = ?3 WHERE org_key = ?1 AND review_id = 'x1' AND pr_id = ?2",
      org,
      pr.id,
      S + HOUR,
    );
    await expectBumped("the review completed", true);
    await run("UPDATE reviews SET completed_at = ?2 WHERE org_key = ?1 AND review_id = 'x1'", org, S + 2 * HOUR);
    await expectBumped("its time moved", true);
    await run("UPDATE reviews SET updated_at = 5 WHERE org_key = ?1 AND review_id = 'x1'", org);
    await expectBumped("only its version changed", false);
    await run("DELETE FROM reviews WHERE org_key = ?1 AND review_id = 'x1'", org);
    await expectBumped("the review deleted", true);
    await run(
      "INSERT INTO findings (org_key, finding_id, pr_id, created_at, posted, ai_addressed) VALUES (?1, 'y1', ?2, ?3, 0, 0)",
      org,
      pr.id,
      S + HOUR,
    );
    await expectBumped("a finding not posted", false);
    await run("UPDATE findings SET posted = 1 WHERE org_key = ?1 AND finding_id = 'y1'", org);
    await expectBumped("the finding posted", true);
    await run("UPDATE findings SET ai_addressed = 1 WHERE org_key = ?1 AND finding_id = 'y1'", org);
    await expectBumped("addressed", true);
    await run("UPDATE findings SET created_at = ?2 WHERE org_key = ?1 AND finding_id = 'y1'", org, S + 3 * HOUR);
    await expectBumped("its time moved", true);
    await run("UPDATE findings SET feedback = 'positive' WHERE org_key = ?1 AND finding_id = 'y1'", org);
    await expectBumped("feedback only", false);
    await run("DELETE FROM findings WHERE org_key = ?1 AND finding_id = 'y1'", org);
    await expectBumped("the finding deleted", true);
    expect(bumps).toBe(7);
  });
});
