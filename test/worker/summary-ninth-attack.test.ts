import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { durationBucket } from "../../src/rules/duration-buckets";
import { summarizeGroupings } from "../../src/storage/analytics-summary";
import { appCall, signIn } from "./app-helpers";
import { postEvents, postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr } from "./summary-attack-data";
import { agrees, type Get, groupingsOf, summaryOrg, type Window, windowQuery } from "./summary-attack-http";
import { type ExportRow, exportRows, type GroupBy, referenceAnswer } from "./summary-reference";

/**
 * An outside review's attacks, over HTTP, on the medians' slices read two to a row with one seek
 * (`summary-medians.ts` `sliceReaderOf`) and on the summary's turns (`taking-turns.ts`). The oracle
 * is contract sections 12 and 21: the summary is exactly the export's rows for the same parameters
 * (every page), grouped, with lower medians. A failing test is a finding.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MIN = 60_000;
const at = (text: string) => Date.parse(text);
const JAN = at("2026-01-01T00:00:00.000Z");
const FEB = at("2026-02-01T00:00:00.000Z");
const MAR = at("2026-03-01T00:00:00.000Z");
const APR = at("2026-04-01T00:00:00.000Z");
const MAY = at("2026-05-01T00:00:00.000Z");
const LATER = "2026-11-05T00:00:00.000Z";
const FOUR = { start: JAN, end: MAY - 1 };
const ALL: GroupBy[] = ["repo", "author", "week", "month", "day"];

const REPOS = { api: { private: false }, web: { private: false }, docs: { private: false }, rare: { private: false } };
/** Authors that share every bucket, and some spelled alike or with characters JSON and SQL treat apart. */
const AUTHORS = [
  ...Array.from({ length: 24 }, (_, i) => `u${String(i).padStart(2, "0")}`),
  "Bob",
  "bob",
  'quote"back\\slash',
  "tab\there",
  "emoji😀",
  "ünï",
  "123",
  "%_like",
];

/**
 * Four whole months of pull requests, `perDay` a day, where a duration to first review and the one
 * to merge are often equal (reviewed at the merge) or a minute apart (the same bucket of one row),
 * and most groups' durations fall in a handful of buckets; `febOnly` authors only in February, the
 * repository `rare` only in January and April.
 */
function months(seed: number, perDay: number, first = 1): Pr[] {
  const random = seededRandom(seed);
  const prs: Pr[] = [];
  let n = first;
  for (let day = JAN; day < MAY; day += DAY) {
    for (let k = 0; k < perDay; k++, n++) {
      const merged = day + Math.floor(random() * 23 * HOUR) + (n % 60) * 1000;
      // 5 h plus up to 20 min: two or three buckets (10% wide) for everyone.
      const age = 5 * HOUR + Math.floor(random() * 20) * MIN + (n % 7) * 1000;
      const created = merged - age;
      const shape = n % 4;
      const reviewed = shape === 0 ? merged : shape === 1 ? merged - MIN : shape === 2 ? created + age / 2 : merged - 1;
      const inFeb = day >= FEB && day < MAR;
      const author = inFeb && n % 9 === 0 ? `feb-only-${n % 2}` : (AUTHORS[Math.floor(random() * AUTHORS.length)] as string);
      const rareMonth = day < FEB || day >= APR;
      const repo = rareMonth && n % 5 === 0 ? "rare" : (["api", "web", "docs"][n % 3] as string);
      prs.push({
        repo,
        n,
        author,
        created,
        merged,
        reviews: [reviewed],
        linesAdded: n % 11 === 0 ? null : n,
        findings: n % 6 === 0 ? [{ at: merged - MIN, fixed: n % 12 === 0 }] : [],
        ...(n % 5 === 0 ? { ai: n % 40 } : {}),
      });
    }
  }
  return prs;
}

/**
 * How the organization's summary of `w` grouped by `groupBy` is served now (admin scope, no list):
 * the pull requests from month blocks per group, and the values read from the medians' slices.
 */
async function served(org: string, w: Window, groupBy: GroupBy) {
  const { fromGroupMonths, fromBlocks, bucketValues } = await summarizeGroupings(
    await shardDb(org),
    groupingsOf(org, w, [groupBy]),
  );
  return { fromGroupMonths, fromBlocks, bucketValues };
}

const summaryOf = (get: Get, org: string, w: Window, groupBy: GroupBy, extra = "") =>
  get(`/api/analytics/v1/summary?${windowQuery(org, w)}${extra}&groupBy=${groupBy}`);

describe("attack: the medians' two slices of a row, and the summary's turns", () => {
  it("whole months by repo and author where a group's two medians share a bucket, groups in some months only, many groups per bucket", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("ninth", "admin", REPOS);
    const prs = months(9, 5);
    await postEventsOk(eventsOf(org, prs));
    const rows = await agrees(get, org, FOUR, "built", ALL, { passes: 3 });
    expect(rows.length).toBe(prs.length);
    // The data is what the attack means: groups in some months only, and two medians in one bucket.
    expect(new Set(rows.filter((r) => r.author.startsWith("feb-only")).map((r) => r.mergedAt.slice(0, 7)))).toEqual(
      new Set(["2026-02"]),
    );
    expect(new Set(rows.filter((r) => r.repo === "rare").map((r) => r.mergedAt.slice(0, 7)))).toEqual(
      new Set(["2026-01", "2026-04"]),
    );
    const byAuthor = referenceAnswer(org, rows, "author", FOUR.start, FOUR.end);
    const sameBucket = byAuthor.groups.filter(
      (g) =>
        g.medianMsToFirstReview !== null &&
        g.medianMsToMerge !== null &&
        durationBucket(g.medianMsToFirstReview) === durationBucket(g.medianMsToMerge),
    );
    expect(sameBucket.length).toBeGreaterThan(3);
    // Served from the month blocks per group, their medians from slices of them.
    for (const g of ["repo", "author"] as const) {
      const how = await served(org, FOUR, g);
      expect(how.fromGroupMonths, g).toBe(rows.length);
      expect(how.bucketValues, g).toBeGreaterThan(0);
    }
    // Filters by repository and author lists (section 21) over the built months.
    await agrees(get, org, FOUR, "repo list", ["repo", "author"], { extra: "&repo=rare,docs", passes: 2 });
    await agrees(get, org, FOUR, "author list", ["repo", "author", "month"], {
      extra: `&author=${encodeURIComponent('BOB,feb-only-1,QUOTE"BACK\\SLASH,emoji😀')}`,
      passes: 2,
    });
    // Partial months at both ends, reading the whole months' blocks between.
    await agrees(get, org, { start: JAN + 10 * DAY + 7 * HOUR, end: APR + 3 * DAY - 1 }, "partial ends", ["repo", "author"]);
    // Late writes: a February-only author now in March, a rare pull request moved to February,
    // and one group's review moved so its two durations become equal.
    const feb = prs.find((p) => p.author === "feb-only-1") as Pr;
    const rare = prs.find((p) => p.repo === "rare" && p.merged >= APR) as Pr;
    const u = prs.find((p) => p.author === "u03" && p.merged >= MAR && p.merged < APR) as Pr;
    await postEventsOk(
      eventsOf(org, [
        { ...feb, merged: MAR + 2 * DAY, created: MAR + 2 * DAY - 5 * HOUR, reviews: [MAR + 2 * DAY], version: LATER },
        { ...rare, merged: FEB + 9 * DAY, created: FEB + 9 * DAY - 5 * HOUR, reviews: [FEB + 9 * DAY - MIN], version: LATER },
      ]).filter((e) => (e as { type: string }).type !== "finding"),
    );
    await postEventsOk([
      {
        type: "review",
        org,
        repo: u.repo,
        prNumber: u.n,
        updatedAt: LATER,
        reviewId: "late-same",
        status: "completed",
        completedAt: new Date(u.created + 60_000).toISOString(),
      },
    ]);
    const after = await agrees(get, org, FOUR, "after late writes", ALL, { passes: 2 });
    expect(after.find((r) => r.prNumber === feb.n)?.mergedAt.slice(0, 7)).toBe("2026-03");
    expect(after.find((r) => r.prNumber === rare.n)?.mergedAt.slice(0, 7)).toBe("2026-02");
  });

  it("summaries in flight together, of two organizations, answer each its own (built, then read)", {
    timeout: 300_000,
  }, async () => {
    const a = await summaryOrg("ninth-a", "admin", REPOS);
    const b = await summaryOrg("ninth-b", "admin", REPOS);
    await postEventsOk(eventsOf(a.org, months(11, 3)));
    await postEventsOk(eventsOf(b.org, months(12, 2, 50_000)));
    const asks: { get: Get; org: string; w: Window; groupBy: GroupBy }[] = [];
    const wants: unknown[] = [];
    for (const { get, org } of [a, b])
      for (const w of [FOUR, { start: FEB, end: APR - 1 }, { start: JAN + 5 * DAY, end: MAR + 9 * DAY }]) {
        const rows = await exportRows<ExportRow>(get, windowQuery(org, w), { perPage: 100, maxPages: 100 });
        for (const groupBy of ["repo", "author", "week"] as GroupBy[]) {
          asks.push({ get, org, w, groupBy });
          wants.push(referenceAnswer(org, rows, groupBy, w.start, w.end));
        }
      }
    // Round 1 builds the month blocks while the others read; rounds 2 and 3 read them, all at once.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(asks.map(({ get, org, w, groupBy }) => summaryOf(get, org, w, groupBy)));
      for (const [i, answer] of answers.entries()) {
        const { org, groupBy, w } = asks[i] as (typeof asks)[number];
        expect(answer, `round ${round}: ${org} ${groupBy} ${new Date(w.start).toISOString()}`).toEqual(wants[i]);
      }
    }
  });

  it("a write in flight with summaries: each answer is the export before or after it, never a mix", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("ninth-w", "admin", REPOS);
    const prs = months(13, 3);
    await postEventsOk(eventsOf(org, prs));
    await agrees(get, org, FOUR, "built", ["repo", "author"], { passes: 1 });
    const snapshot = async () => {
      const rows = await exportRows<ExportRow>(get, windowQuery(org, FOUR), { perPage: 100, maxPages: 100 });
      return Object.fromEntries(
        (["repo", "author"] as GroupBy[]).map((g) => [g, referenceAnswer(org, rows, g, FOUR.start, FOUR.end)]),
      );
    };
    const random = seededRandom(14);
    for (let step = 0; step < 4; step++) {
      const before = await snapshot();
      // A batch of changes of one version: authors and repositories moved, merges moved across months.
      const changed = prs
        .filter(() => random() < 0.04)
        .map((p, i) => ({
          ...p,
          author: i % 2 === 0 ? `late-${step}` : (p.author as string),
          repo: i % 3 === 0 ? "rare" : p.repo,
          merged: i % 2 === 1 ? p.merged + 20 * DAY : p.merged,
          version: new Date(at(LATER) + step * 1000).toISOString(),
        }))
        .filter((p) => p.merged < MAY);
      expect(changed.length).toBeGreaterThan(5);
      const [answers] = await Promise.all([
        Promise.all(
          [0, 1, 2, 3].map(async (k) => {
            const groupBy: GroupBy = k % 2 === 0 ? "repo" : "author";
            return { groupBy, answer: await summaryOf(get, org, FOUR, groupBy) };
          }),
        ),
        postEventsOk(eventsOf(org, changed).filter((e) => (e as { type: string }).type === "pull_request")),
      ]);
      const after = await snapshot();
      expect(after.author, `step ${step}: the write changed the summary`).not.toEqual(before.author);
      for (const { groupBy, answer } of answers) {
        const one = [before[groupBy], after[groupBy]];
        expect(one, `step ${step}: ${groupBy} is neither before nor after`).toContainEqual(answer);
      }
      // And once the write is done, every summary (built or read) is the export after it.
      for (const groupBy of ["repo", "author"] as GroupBy[])
        for (let pass = 0; pass < 2; pass++)
          expect(await summaryOf(get, org, FOUR, groupBy), `step ${step}: ${groupBy} pass ${pass}`).toEqual(after[groupBy]);
    }
  });

  it("the dashboard's week, repo and author summaries over whole months, built then read, with a write between", {
    timeout: 300_000,
  }, async () => {
    const { org, user, get } = await summaryOrg("ninth-d", "admin", REPOS);
    const prs = months(15, 4);
    await postEventsOk(eventsOf(org, prs));
    const session = await signIn(user);
    const dashboard = async (w: Window, label: string) => {
      const q = windowQuery(org, w);
      const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
      for (const groupBys of [
        ["week", "repo", "author"],
        ["author", "week", "repo"],
        ["week", "repo", "author"],
      ] as GroupBy[][]) {
        SUMMARY_PLANS.clear();
        const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=${groupBys.join(",")}`, session);
        expect(res.status, label).toBe(200);
        const { summaries } = (await res.json()) as { summaries: unknown[] };
        expect(summaries, `${label}: ${groupBys.join()}`).toEqual(
          groupBys.map((g) => referenceAnswer(org, rows, g, w.start, w.end)),
        );
      }
      return rows;
    };
    await dashboard(FOUR, "four months");
    await dashboard({ start: JAN + 3 * DAY, end: APR + 12 * DAY }, "partial ends");
    // Several dashboards at once with a public summary.
    const q = windowQuery(org, FOUR);
    const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    const many = await Promise.all([
      ...[0, 1, 2].map(async () => {
        const res = await appCall(`/app/api/analytics/summaries?${q}&groupBy=week,repo,author`, session);
        return ((await res.json()) as { summaries: unknown[] }).summaries;
      }),
      summaryOf(get, org, FOUR, "author").then((s) => [s]),
    ]);
    const want = (["week", "repo", "author"] as GroupBy[]).map((g) => referenceAnswer(org, rows, g, FOUR.start, FOUR.end));
    for (const s of many.slice(0, 3)) expect(s).toEqual(want);
    expect(many[3]).toEqual([want[2]]);
    // A write that makes a new author in every month, then the dashboard builds and reads again.
    const moved = prs.filter((p) => p.n % 37 === 0).map((p) => ({ ...p, author: "Newcomer", version: LATER }));
    await postEventsOk(eventsOf(org, moved).filter((e) => (e as { type: string }).type === "pull_request"));
    const after = await dashboard(FOUR, "after a write");
    expect(after.filter((r) => r.author === "Newcomer").length).toBe(moved.length);
  });

  it("month blocks of groups whose keys JSON and SQL spell apart: NUL, U+FFFF, U+2028, 255 escaped characters", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("ninth-k", "admin", REPOS);
    const odd = [
      "nul\u0000x",
      "nul",
      "\uffff",
      "\u0001".repeat(255),
      '"'.repeat(255),
      "\\".repeat(255),
      "é".repeat(255),
      "😀".repeat(127),
      "x\u2028y",
    ];
    const prs = months(17, 4).map((p, i) => ({ ...p, author: odd[i % odd.length] as string }));
    await postEventsOk(eventsOf(org, prs));
    const rows = await agrees(get, org, FOUR, "odd keys", ["author", "repo"], { passes: 3 });
    expect(rows.length).toBe(prs.length);
    const how = await served(org, FOUR, "author");
    expect(how.fromGroupMonths).toBe(rows.length);
    expect(how.bucketValues).toBeGreaterThan(0);
  });

  it("an author spelled with U+FFFD beside one with an unpaired surrogate: the latter is refused at the door, the former served from its month blocks in one reading", {
    timeout: 300_000,
  }, async () => {
    // Found by this attack: an unpaired surrogate was stored as bytes D1 reads back as three U+FFFD,
    // so the group's month block row was never found (every summary read three times) and, beside
    // an author spelled with those U+FFFD, another group's block was deleted as corrupt on every
    // summary. The events schema now refuses such text (events.test.ts).
    const { org, get } = await summaryOrg("ninth-s", "admin", REPOS);
    const refused = eventsOf(org, [{ ...(months(21, 1)[0] as Pr), author: "\ud800high" }]);
    expect((await postEvents(refused)).status).toBe(400);
    const authors = ["\ufffd\ufffd\ufffdhigh", "alice"];
    const prs = months(21, 3).map((p, i) => ({ ...p, author: authors[i % authors.length] as string }));
    await postEventsOk(eventsOf(org, prs));
    const rows = await agrees(get, org, FOUR, "U+FFFD", ["author", "repo", "month"], { passes: 3 });
    expect(new Set(rows.map((r) => r.author))).toEqual(new Set(authors));
    let attempts = 0;
    const f = await summarizeGroupings(await shardDb(org), groupingsOf(org, FOUR, ["author"]), undefined, {
      beforeWalk: async () => void attempts++,
    });
    expect({ attempts, fromGroupMonths: f.fromGroupMonths }).toEqual({ attempts: 1, fromGroupMonths: rows.length });
  });

  it("time groupings over more than a year (day blocks' counts read in slices, two slices a row), then a late write", {
    timeout: 300_000,
  }, async () => {
    const { org, get } = await summaryOrg("ninth-y", "admin", REPOS);
    const START = at("2025-01-01T00:00:00.000Z");
    const random = seededRandom(19);
    const prs: Pr[] = [];
    for (let day = START, n = 1; day < MAY; day += DAY)
      for (let k = 0; k < 2; k++, n++) {
        const merged = day + Math.floor(random() * 23 * HOUR);
        const age = 3 * HOUR + Math.floor(random() * 15) * MIN;
        const created = merged - age;
        prs.push({
          repo: ["api", "web", "docs"][n % 3] as string,
          n,
          author: AUTHORS[n % AUTHORS.length] as string,
          created,
          merged,
          reviews: [n % 3 === 0 ? merged : merged - (n % 5) * MIN],
          findings: n % 7 === 0 ? [{ at: merged - MIN, fixed: true }] : [],
        });
      }
    await postEventsOk(eventsOf(org, prs));
    const YEARS = { start: START, end: MAY - 1 };
    const DAYS400 = { start: at("2025-03-27T00:00:00.000Z"), end: MAY - 1 };
    await agrees(get, org, YEARS, "16 months", ["week", "month", "repo", "author"], { passes: 3 });
    await agrees(get, org, DAYS400, "400 days", ["day"], { passes: 3 });
    expect((await served(org, YEARS, "week")).bucketValues).toBeGreaterThan(0);
    // A write in the middle, making one day's two medians equal, then both again.
    const mid = prs.filter((p) => p.merged >= at("2025-09-10T00:00:00.000Z"))[0] as Pr;
    await postEventsOk([
      {
        type: "review",
        org,
        repo: mid.repo,
        prNumber: mid.n,
        updatedAt: LATER,
        reviewId: "late-y",
        status: "completed",
        completedAt: new Date(mid.created + 1).toISOString(),
      },
    ]);
    await agrees(get, org, YEARS, "16 months after", ["week", "month", "author"], { passes: 2 });
    await agrees(get, org, DAYS400, "400 days after", ["day"], { passes: 2 });
  });
});
