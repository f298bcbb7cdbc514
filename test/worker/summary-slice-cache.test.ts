import { describe, expect, it, vi } from "vitest";
import { SUMMARY_SLICES } from "../../src/analytics/summary";
import { SUMMARY_LIMITS, summarizeGroupings } from "../../src/storage/analytics-summary";
import { SliceCache } from "../../src/storage/summary-slice-cache";
import { postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr } from "./summary-attack-data";
import { agrees, groupingsOf, summaryOrg, type Window } from "./summary-attack-http";

/**
 * The isolate's slices of blocks (`storage/summary-slice-cache.ts`, issue 31): a summary asked
 * again reads no slice from D1 and answers the same; a write that rebuilds a day's block is read
 * anew (its new version), and every answer still equals the export's rows grouped (contract
 * section 12), over HTTP, where the routes share one cache.
 */

vi.setConfig({ testTimeout: 120_000 });

const MIN = 60_000;
const HOUR = 3_600_000;
const START = Date.parse("2026-03-02T00:00:00Z");
const END = Date.parse("2026-04-05T23:59:59.999Z");
const W: Window = { start: START, end: END };
const REPOS = ["api", "web", "docs"];
const SLICES_SQL = "SELECT json_group_array(json_array(i, version, text, second))";

/** Pull requests merged every `stepMin` minutes inside the window, with durations of minutes to days. */
function prsOf(random: () => number, stepMin: number, n0: number): Pr[] {
  const prs: Pr[] = [];
  for (let at = START + HOUR, n = n0; at < END - HOUR; at += stepMin * MIN, n++) {
    const created = at - Math.floor(random() * 5 * 86_400_000) - MIN;
    prs.push({
      repo: REPOS[n % REPOS.length] as string,
      n,
      author: `dev${n % 7}`,
      created,
      merged: at,
      reviews: [created + Math.floor((at - created) * random())],
    });
  }
  return prs;
}

/** `db`, counting the slices statements sent through it (alone or in a batch). */
function countingSlices(db: D1Database) {
  const sent = { slices: 0 };
  const counted = new Proxy(db, {
    get(target, name) {
      if (name === "prepare")
        return (sql: string) => {
          if (sql.startsWith(SLICES_SQL)) sent.slices++;
          return target.prepare(sql);
        };
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: counted, sent };
}

describe("the isolate's slices of blocks (summary-slice-cache.ts)", () => {
  it("a summary asked again reads no slice and answers the same; a rebuilt day is read anew, and every answer is the export's", async () => {
    const { org, get } = await summaryOrg("slcache", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    const random = seededRandom(3101);
    // About 2,400 pull requests over 35 days: the blocks are served by their counts per bucket.
    const prs = prsOf(random, 20, 1);
    expect(prs.length).toBeGreaterThan(2_000);
    await postEventsOk(eventsOf(org, prs));
    SUMMARY_SLICES.clear();
    // Over HTTP: the first pass builds the blocks, the second reads their slices, the third keeps them.
    const before = await agrees(get, org, W, "cached", ["week"], { passes: 3 });
    expect(SUMMARY_SLICES.size.slices).toBeGreaterThan(0);

    const db = await shardDb(org);
    const q = groupingsOf(org, W, ["week"]);
    const cache = new SliceCache();
    const first = countingSlices(db);
    const answer = await summarizeGroupings(first.db, q, SUMMARY_LIMITS, { sliceCache: cache });
    expect(first.sent.slices).toBeGreaterThan(0);
    expect(answer.bucketValues).toBeGreaterThan(0);
    const again = countingSlices(db);
    const second = await summarizeGroupings(again.db, q, SUMMARY_LIMITS, { sliceCache: cache });
    expect(again.sent.slices).toBe(0);
    expect(second.groupings).toEqual(answer.groupings);
    expect(second.rowsRead).toBeLessThan(answer.rowsRead);
    const without = await summarizeGroupings(db, q, SUMMARY_LIMITS);
    expect(without.groupings).toEqual(answer.groupings);

    // A write to one day deletes its block; the next summary builds it again under a new version,
    // whose slices are read from D1 (the other days' are kept), and the answers are the export's.
    const late = prsOf(seededRandom(3102), 90, 100_000)
      .filter((p) => p.merged > START + 10 * 86_400_000)
      .slice(0, 8);
    await postEventsOk(eventsOf(org, late));
    const rows = await agrees(get, org, W, "after a write", ["week"], { passes: 3 });
    expect(rows.length).toBe(before.length + late.length);
    // (The HTTP passes built the day's block again.)
    const after = countingSlices(db);
    const rebuilt = await summarizeGroupings(after.db, q, SUMMARY_LIMITS, { sliceCache: cache });
    expect(after.sent.slices).toBeGreaterThan(0);
    expect(rebuilt.groupings).toEqual((await summarizeGroupings(db, q, SUMMARY_LIMITS)).groupings);
    expect(rebuilt.groupings[0]?.totals.pullRequests).toBe(rows.length);
  });
});
