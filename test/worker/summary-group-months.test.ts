import { describe, expect, it } from "vitest";
import { SUMMARY_PLANS } from "../../src/analytics/summary";
import { SUMMARY_LIMITS, type SummaryLimits, summarizeGroupings } from "../../src/storage/analytics-summary";
import { buildSummaryDays } from "../../src/storage/summary-days";
import { buildGroupMonths } from "../../src/storage/summary-group-months";
import {
  addMember,
  adminOk,
  call,
  createKey,
  createOrg,
  createUser,
  postEventsOk,
  seededRandom,
  shardDb,
  unique,
} from "./helpers";
import { eventsOf, type Pr, sameDayPullRequests } from "./summary-attack-data";
import { groupingsOf, windowQuery } from "./summary-attack-http";
import { type ExportRow, exportRows, type GroupBy, referenceAnswer, referenceSummary } from "./summary-reference";

/**
 * The month blocks per group (`summary-group-months.ts`, migration 0015): a summary grouped by
 * repository or author alone reads the window's whole months from them once built. The oracle is
 * contract section 12: the summary is exactly the export's rows (every page), grouped.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const _iso = (ms: number) => new Date(ms).toISOString();
const JAN = Date.parse("2026-01-01T00:00:00Z");
/** January to April 2026: four whole months, more full days than a slice of blocks (92), so read in slices. */
const WINDOW = { start: JAN, end: Date.parse("2026-04-30T23:59:59.999Z") };
const REPOS = ["api", "web", "docs"];
const AUTHORS = ["alice", "Bob", "carol", "dave"];

/** Pull requests every few hours from January to April, each reviewed and merged inside its own day. */
const pullRequests = (seed: number): Pr[] =>
  sameDayPullRequests(seededRandom(seed), { from: JAN, to: WINDOW.end, repos: REPOS, authors: AUTHORS, step: 3, spread: 20 });

async function adminOrg() {
  const org = await createOrg(unique("gmonth"), { plan: "pro", installedAt: "2024-01-01T00:00:00Z" });
  const user = await createUser();
  await addMember(org, user, "admin");
  for (const repo of REPOS) await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/${repo}`, { private: false });
  const { key } = await createKey(user, "analytics");
  const get = async (path: string) => {
    SUMMARY_PLANS.clear(); // the blocks' statement, always
    const res = await call(path, { headers: { Authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${await res.text()}`);
    return res.json();
  };
  return { org, get };
}

/** An organization with the pull requests of `seed`, the export's rows of the window, and its author months built by a summary. */
async function builtByAuthor(seed: number) {
  const { org, get } = await adminOrg();
  await postEventsOk(eventsOf(org, pullRequests(seed)));
  const q = windowQuery(org, WINDOW);
  const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
  await get(`/api/analytics/v1/summary?${q}&groupBy=author`);
  return { org, rows, db: await shardDb(org) };
}

const scopeOf = groupingsOf;

/** Month blocks without their spans (`summary-group-spans.ts`): the tests of a month's own rows. */
const MONTHS_ONLY: SummaryLimits = { ...SUMMARY_LIMITS, groupSpans: false };

const byKey = (groups: readonly { key: string }[]) => [...groups].sort((a, b) => (a.key < b.key ? -1 : 1));

/** The storage's groupings against the export's rows grouped (groups with rows only, as the storage answers). */
function expectGrouped(
  figures: Awaited<ReturnType<typeof summarizeGroupings>>,
  groupBys: GroupBy[],
  rows: ExportRow[],
  label: string,
) {
  groupBys.forEach((groupBy, i) => {
    const want = referenceSummary(rows, groupBy, WINDOW.start, WINDOW.end);
    const got = figures.groupings[i];
    expect(byKey(got?.groups ?? []), `${label} ${groupBy}`).toEqual(byKey(want.groups.filter((g) => g.pullRequests > 0)));
    expect(got?.totals, `${label} ${groupBy} totals`).toEqual(want.totals);
  });
}

type Head = { month: number; kind: string; first: number; last: number; lo: number | null; version: number };

async function heads(org: string): Promise<Head[]> {
  const { results } = await (await shardDb(org))
    .prepare(
      `SELECT month, kind, first_day AS first, last_day AS last, lo, version FROM summary_group_month_heads
WHERE org_key = ?1 ORDER BY month, kind, first_day`,
    )
    .bind(org)
    .all<Head>();
  return results;
}

/** The pull requests merged on the days of the heads of one kind. */
const inRuns = (prs: readonly Pr[], of: readonly Head[]) =>
  prs.filter((p) => of.some((h) => p.merged >= h.first * DAY && p.merged < (h.last + 1) * DAY)).length;

const MONTHS = ["2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01"].map((d) => Date.parse(d) / DAY);

describe("month blocks per group (summary-group-months.ts)", () => {
  it("a window grouped by repository or author reads its whole months from them once built, and agrees with the export", async () => {
    const { org, get } = await adminOrg();
    const prs = pullRequests(11);
    await postEventsOk(eventsOf(org, prs));
    const q = windowQuery(org, WINDOW);
    const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    expect(rows.length).toBeGreaterThan(200);
    for (const groupBy of ["repo", "author"] as const) {
      const want = referenceAnswer(org, rows, groupBy, WINDOW.start, WINDOW.end);
      for (const pass of ["builds", "reads"])
        expect(await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`), `${groupBy} ${pass}`).toEqual(want);
    }
    // Every whole month has a head of each kind, with content.
    const built = await heads(org);
    expect(built.map(({ month, kind }) => [month, kind])).toEqual(
      MONTHS.flatMap((m) => [
        [m, "author"],
        [m, "repo"],
      ]),
    );
    expect(built.every((h) => h.lo !== null)).toBe(true);
    // Served: every pull request of the window from the months (each merged, reviewed and found inside one).
    const db = await shardDb(org);
    for (const groupBys of [["repo"], ["author"], ["repo", "author"], ["author", "repo", "repo"]] as GroupBy[][]) {
      const figures = await summarizeGroupings(db, scopeOf(org, WINDOW, groupBys));
      expect(figures.fromGroupMonths, groupBys.join()).toBe(rows.length);
      expect(figures.candidates).toBe(rows.length);
      expect(figures.bucketValues).toBeGreaterThan(0); // the medians' buckets read as slices
      expectGrouped(figures, groupBys, rows, groupBys.join());
    }
    // A time grouping, a filter or a list does not read them.
    const week = await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo", "week"]));
    expect(week.fromGroupMonths).toBe(0);
    const listed = await summarizeGroupings(db, { ...scopeOf(org, WINDOW, ["repo"]), repoKeys: ["api", "web"] });
    expect(listed.fromGroupMonths).toBe(0);
    const authors = await summarizeGroupings(db, { ...scopeOf(org, WINDOW, ["repo"]), authorKeys: ["alice"] });
    expect(authors.fromGroupMonths).toBe(0);
    expect(byKey(authors.groupings[0]?.groups ?? [])).toEqual(
      byKey(
        referenceSummary(
          rows.filter((r) => r.author.toLowerCase() === "alice"),
          "repo",
          WINDOW.start,
          WINDOW.end,
        ).groups,
      ),
    );
  });

  it("at the window's edges a head holds the run of the month's days the window can serve, from and to a week's boundary", async () => {
    const { org } = await adminOrg();
    // A pull request merged on January 3 with a review on December 31: it straddles the start of a
    // window from January 1st, whose January head is then served with that day's correction.
    const early: Pr = {
      repo: "api",
      n: 9_999,
      author: "alice",
      created: Date.parse("2025-12-30T10:00:00Z"),
      merged: Date.parse("2026-01-03T12:00:00Z"),
      reviews: [Date.parse("2025-12-31T10:00:00Z")],
    };
    const prs = [...pullRequests(12), early];
    await postEventsOk(eventsOf(org, prs));
    const db = await shardDb(org);
    const day = (text: string) => Date.parse(text) / DAY;
    const check = async (w: { start: number; end: number }, label: string) => {
      const q = scopeOf(org, w, ["repo"]);
      const figures = await summarizeGroupings(db, q);
      const days = await summarizeGroupings(db, q, { ...SUMMARY_LIMITS, groupMonths: false });
      expect(byKey(figures.groupings[0]?.groups ?? []), label).toEqual(byKey(days.groupings[0]?.groups ?? []));
      expect(figures.groupings[0]?.totals, label).toEqual(days.groupings[0]?.totals);
      return figures;
    };
    const runs = async () => (await heads(org)).filter((h) => h.kind === "repo").map((h) => [h.first, h.last]);
    const to20 = { start: JAN + 3 * HOUR, end: Date.parse("2026-04-20T23:59:59.999Z") };
    await check(to20, "builds");
    // January from the 8th (its 4th to 7th from day blocks), April to the 14th (then the 15th to 20th).
    const first = [
      [day("2026-01-08"), day("2026-01-31")],
      [day("2026-02-01"), day("2026-02-28")],
      [day("2026-03-01"), day("2026-03-31")],
      [day("2026-04-01"), day("2026-04-14")],
    ];
    expect(await runs()).toEqual(first);
    const served = (of: number[][]) =>
      inRuns(
        prs,
        of.map(([a, b]) => ({ first: a, last: b }) as Head),
      );
    expect((await check(to20, "reads")).fromGroupMonths).toBe(served(first));
    // One day more: the same runs serve (April's next boundary is the 21st).
    const to21 = { ...to20, end: Date.parse("2026-04-21T23:59:59.999Z") };
    expect((await check(to21, "a day more, builds")).fromGroupMonths).toBe(served(first));
    const april21 = [day("2026-04-01"), day("2026-04-21")];
    expect(await runs()).toEqual([...first, april21]); // April to the 21st, beside the run to the 14th
    expect((await check(to21, "a day more, reads")).fromGroupMonths).toBe(served([...first.slice(0, 3), april21]));
    // To the month's end: April whole.
    await check(WINDOW, "to April's end, builds");
    expect((await runs()).at(-1)).toEqual([day("2026-04-01"), day("2026-04-30")]);
    // January whole too: the window starts on its first day (the early pull request corrected).
    const whole = [[day("2026-01-01"), day("2026-01-31")], ...first.slice(1, 3), [day("2026-04-01"), day("2026-04-30")]];
    expect((await check(WINDOW, "to April's end, reads")).fromGroupMonths).toBe(served(whole));
    // A window that starts on January 27th: its January run would start on the 29th, too short to
    // be made; its days are read as day blocks.
    const late = { start: Date.parse("2026-01-27T00:00:00Z"), end: WINDOW.end };
    await check(late, "late start");
    expect((await check(late, "late start, reads")).fromGroupMonths).toBe(served(whole.slice(1)));
  });

  it("windows that start or end on different days of a month each have their run, and stop asking for one", async () => {
    const { org, get } = await adminOrg();
    await postEventsOk(eventsOf(org, pullRequests(16)));
    const windows = [
      WINDOW,
      ...["2026-01-03", "2026-01-08", "2026-01-13", "2026-01-18", "2026-01-23"].map((d) => ({
        start: Date.parse(`${d}T00:00:00Z`),
        end: WINDOW.end,
      })),
      { start: WINDOW.start, end: Date.parse("2026-04-15T23:59:59.999Z") },
    ];
    const answers = async () => {
      for (const w of windows) {
        const q = windowQuery(org, w);
        const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
        expect(await get(`/api/analytics/v1/summary?${q}&groupBy=repo`)).toEqual(
          referenceAnswer(org, rows, "repo", w.start, w.end),
        );
      }
    };
    await answers();
    await answers();
    const settled = await heads(org);
    const jan = MONTHS[0] as number;
    const apr = MONTHS[3] as number;
    // January: whole, from the 8th, 15th and 22nd (the 23rd's would start on the 29th: too short).
    expect(settled.filter((h) => h.month === jan).map((h) => [h.first, h.last])).toEqual(
      [0, 7, 14, 21].map((d) => [jan + d, jan + 30]),
    );
    // April: whole, and to the 14th.
    expect(settled.filter((h) => h.month === apr).map((h) => [h.first, h.last])).toEqual([
      [apr, apr + 13],
      [apr, apr + 29],
    ]);
    for (let i = 0; i < 2; i++) await answers();
    expect(await heads(org)).toEqual(settled); // nothing built again
  });

  it("a month keeps its latest few runs and no rows without a head", async () => {
    const { org } = await adminOrg();
    await postEventsOk(eventsOf(org, pullRequests(19)));
    const db = await shardDb(org);
    await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo"])); // the day blocks, and the months
    const jan = MONTHS[0] as number;
    const run = (first: number, last = jan + 30) => ({ first, last, month: jan });
    const count = async (table: string) => {
      const { results } = await db
        .prepare(`SELECT COUNT(DISTINCT first_day || '/' || last_day) AS runs FROM ${table} WHERE org_key = ?1 AND month = ?2`)
        .bind(org, jan)
        .all<{ runs: number }>();
      return results[0]?.runs;
    };
    const januaryRuns = async () =>
      (await heads(org)).filter((h) => h.month === jan && h.kind === "repo").map((h) => [h.first, h.last]);
    // Seven more runs of January, one after the other: the latest six of all are kept.
    let now = Date.now() + 1000; // later than the summary's build above
    const firsts = [1, 2, 3, 4, 5, 6, 7].map((d) => jan + d);
    for (const first of firsts) await buildGroupMonths(db, org, "repo", [run(first)], { now: now++ });
    expect(await januaryRuns()).toEqual(firsts.slice(1).map((first) => [first, jan + 30]));
    expect([await count("summary_group_months"), await count("summary_group_month_buckets")]).toEqual([6, 6]);
    // The same first day to another last day is another run; the same run again replaces itself.
    await buildGroupMonths(db, org, "repo", [run(jan + 7, jan + 20)], { now: now++ });
    await buildGroupMonths(db, org, "repo", [run(jan + 7, jan + 20)], { now: now++ });
    expect(await januaryRuns()).toEqual(
      [...firsts.slice(2).map((first) => [first, jan + 30]), [jan + 7, jan + 20]].sort(
        (a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number),
      ),
    );
    expect(await count("summary_group_months")).toBe(6);
    // A write deletes the heads; the next build deletes the rows no head stands for.
    await db
      .prepare("DELETE FROM summary_days WHERE org_key = ?1 AND repo_key = '' AND day = ?2")
      .bind(org, jan + 25)
      .run();
    expect(await januaryRuns()).toEqual([]);
    await buildSummaryDays(db, org, [jan + 25]);
    await buildGroupMonths(db, org, "repo", [run(jan + 10, jan + 20)], { now: now++ });
    expect(await januaryRuns()).toEqual([[jan + 10, jan + 20]]);
    expect([await count("summary_group_months"), await count("summary_group_month_buckets")]).toEqual([1, 1]);
    // One run of a month per build.
    await expect(buildGroupMonths(db, org, "repo", [run(jan + 1), run(jan + 2)])).rejects.toThrow(/one run of a month/);
  });

  it("an endless window plans only the months from its first merge to its last", async () => {
    const { org, get } = await adminOrg();
    const prs = pullRequests(17);
    await postEventsOk(eventsOf(org, prs));
    const endless = { start: Date.parse("1990-01-01T00:00:00Z"), end: Date.parse("2099-12-31T23:59:59.999Z") };
    const q = windowQuery(org, endless);
    const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    for (const pass of ["builds", "reads"])
      expect(await get(`/api/analytics/v1/summary?${q}&groupBy=author`), pass).toEqual(
        referenceAnswer(org, rows, "author", endless.start, endless.end),
      );
    expect((await heads(org)).map((h) => h.month)).toEqual(MONTHS);
    const { results } = await (await shardDb(org))
      .prepare("SELECT COUNT(*) AS n FROM summary_days WHERE org_key = ?1")
      .bind(org)
      .all<{ n: number }>();
    expect(results[0]?.n).toBeLessThanOrEqual(121); // the days of January to April, not a century's
  });

  it("a group or bucket row over the cap on a row is not written, and its month is a marker", async () => {
    const { org } = await adminOrg();
    const prs = pullRequests(18);
    await postEventsOk(eventsOf(org, prs));
    const db = await shardDb(org);
    await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo"])); // the day blocks
    const march = { first: MONTHS[2] as number, last: (MONTHS[2] as number) + 30, month: MONTHS[2] as number };
    await db.prepare("DELETE FROM summary_group_month_heads WHERE org_key = ?1").bind(org).run();
    await buildGroupMonths(db, org, "repo", [march], { maxBytes: 5 * 13 });
    const { results } = await db
      .prepare(
        `SELECT MAX(length(sorted)) AS biggest FROM (
  SELECT sorted FROM summary_group_months WHERE org_key = ?1 AND month = ?2
  UNION ALL SELECT sorted FROM summary_group_month_buckets WHERE org_key = ?1 AND month = ?2)`,
      )
      .bind(org, march.month)
      .all<{ biggest: number | null }>();
    expect(results[0]?.biggest ?? 0).toBeLessThanOrEqual(5 * 13);
    expect((await heads(org)).map((h) => [h.month, h.lo])).toEqual([[MONTHS[2], null]]);
    const rows = await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo"]), { ...SUMMARY_LIMITS, groupMonths: false });
    const served = await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo"]));
    expect(byKey(served.groupings[0]?.groups ?? [])).toEqual(byKey(rows.groupings[0]?.groups ?? []));
    expect(served.groupings[0]?.totals).toEqual(rows.groupings[0]?.totals);
  });

  it("a write to a day deletes its month's heads; the next summary counts the write and builds the month again", async () => {
    const { org, get } = await adminOrg();
    const prs = pullRequests(13);
    await postEventsOk(eventsOf(org, prs));
    const q = windowQuery(org, WINDOW);
    await get(`/api/analytics/v1/summary?${q}&groupBy=repo`);
    await get(`/api/analytics/v1/summary?${q}&groupBy=author`);
    const before = await heads(org);
    expect(before).toHaveLength(8);
    // A February pull request changes its lines and author.
    const target = prs.find((p) => p.merged >= Date.parse("2026-02-10") && p.merged < Date.parse("2026-02-20")) as Pr;
    await postEventsOk(
      eventsOf(org, [{ ...target, linesAdded: 99_999, author: "zed", version: "2026-11-02T00:00:00.000Z" }]).slice(0, 1),
    );
    const after = await heads(org);
    expect(after.map((h) => h.month)).toEqual(before.map((h) => h.month).filter((m) => m !== MONTHS[1]));
    const rows = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    expect(rows.some((r) => r.author === "zed" && r.linesAdded === 99_999)).toBe(true);
    for (const groupBy of ["repo", "author"] as const)
      for (const pass of ["builds", "reads"])
        expect(await get(`/api/analytics/v1/summary?${q}&groupBy=${groupBy}`), `${groupBy} ${pass}`).toEqual(
          referenceAnswer(org, rows, groupBy, WINDOW.start, WINDOW.end),
        );
    const rebuilt = await heads(org);
    expect(rebuilt).toHaveLength(8);
    const february = rebuilt.filter((h) => h.month === MONTHS[1]);
    for (const head of february)
      expect(before.find((h) => h.month === head.month && h.kind === head.kind)?.version).not.toBe(head.version);
  });

  it("a month rebuilt between the counts and the slices makes the summary read again; one only deleted is read as it was", async () => {
    const { org, get } = await adminOrg();
    const prs = pullRequests(14);
    await postEventsOk(eventsOf(org, prs));
    const q = windowQuery(org, WINDOW);
    const rowsBefore = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    await get(`/api/analytics/v1/summary?${q}&groupBy=repo`);
    await get(`/api/analytics/v1/summary?${q}&groupBy=repo`);
    const db = await shardDb(org);
    const target = prs.find((p) => p.merged >= Date.parse("2026-03-10") && p.merged < Date.parse("2026-03-20")) as Pr;
    const write = () =>
      postEventsOk(
        eventsOf(org, [{ ...target, author: "zed", linesAdded: 77_777, version: "2026-11-03T00:00:00.000Z" }]).slice(0, 1),
      );
    // Deleted only (the write): the group rows the counts came from are still stored, so the
    // summary is the state its statement read, before the write.
    let writes = 0;
    const deletedOnly = await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo"]), SUMMARY_LIMITS, {
      beforeMedians: async () => {
        if (writes++ === 0) await write();
      },
    });
    expectGrouped(deletedOnly, ["repo"], rowsBefore, "deleted only");
    const rowsAfter = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    expect(rowsAfter).not.toEqual(rowsBefore);
    // Rebuilt in between (another summary built March again): its slices are of another version,
    // so the whole is read again, and counts the write.
    await get(`/api/analytics/v1/summary?${q}&groupBy=repo`); // builds March again
    const march = {
      first: Date.parse("2026-03-01") / DAY,
      last: Date.parse("2026-03-31") / DAY,
      month: Date.parse("2026-03-01") / DAY,
    };
    let rebuilds = 0;
    const rebuilt = await summarizeGroupings(db, scopeOf(org, WINDOW, ["repo"]), SUMMARY_LIMITS, {
      beforeMedians: async () => {
        if (rebuilds++ > 0) return;
        await postEventsOk(
          eventsOf(org, [{ ...target, author: "yan", linesAdded: 5, version: "2026-11-04T00:00:00.000Z" }]).slice(0, 1),
        );
        const days = Array.from({ length: march.last - march.first + 1 }, (_, i) => march.first + i);
        await buildSummaryDays(db, org, days);
        await buildGroupMonths(db, org, "repo", [march]);
      },
    });
    expect(rebuilds).toBeGreaterThan(1); // read again
    const rowsLast = await exportRows<ExportRow>(get, q, { perPage: 100, maxPages: 100 });
    expect(rowsLast.some((r) => r.linesAdded === 5 && r.author === "yan")).toBe(true);
    expectGrouped(rebuilt, ["repo"], rowsLast, "rebuilt");
  });

  it("group and bucket rows damaged to control bytes of the same length are found when decoded (never read as durations), deleted and built again", async () => {
    const { org, rows, db } = await builtByAuthor(16);
    // Every byte of every group and bucket row becomes 0x01: the same length, so the slices' counts
    // still match, but no hexadecimal digit (JSON would escape each in six bytes).
    const damage = (table: string) =>
      db
        .prepare(
          `UPDATE ${table} SET sorted = CAST(replace(hex(zeroblob(length(sorted))), '00', char(1)) AS BLOB) WHERE org_key = ?1`,
        )
        .bind(org)
        .run();
    const notHex = async () =>
      (await db
        .prepare(
          `SELECT COUNT(*) AS n FROM (SELECT sorted FROM summary_group_months WHERE org_key = ?1
  UNION ALL SELECT sorted FROM summary_group_month_buckets WHERE org_key = ?1) WHERE CAST(sorted AS TEXT) GLOB '*[^0-9a-f]*'`,
        )
        .bind(org)
        .first<number>("n")) ?? 0;
    await damage("summary_group_months");
    await damage("summary_group_month_buckets");
    expect(await notHex()).toBeGreaterThan(0);
    const damaged = await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY);
    expectGrouped(damaged, ["author"], rows, "damaged");
    // Each damaged head was deleted as its slice was read, then built again (a pass per block found).
    for (let pass = 0; pass < 20 && (await notHex()) > 0; pass++)
      expectGrouped(
        await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY),
        ["author"],
        rows,
        `pass ${pass}`,
      );
    expect(await notHex()).toBe(0);
    expect((await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY)).fromGroupMonths).toBe(rows.length);
    // The group rows alone: the totals' bucket rows decode, so what is found is a group's slice,
    // reported with its group (the head it names is deleted, not a day block).
    await damage("summary_group_months");
    expect(await notHex()).toBeGreaterThan(0);
    for (let pass = 0; pass < 20 && (await notHex()) > 0; pass++)
      expectGrouped(
        await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY),
        ["author"],
        rows,
        `groups, pass ${pass}`,
      );
    expect(await notHex()).toBe(0);
    expect((await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY)).fromGroupMonths).toBe(rows.length);
  });

  it("a damaged group row is found, its head deleted and the month built again; a marker head is never served", async () => {
    const { org, rows, db } = await builtByAuthor(15);
    // Every group row of April loses all but its first value.
    await db
      .prepare("UPDATE summary_group_months SET sorted = substr(sorted, 1, 13) WHERE org_key = ?1 AND month = ?2")
      .bind(org, MONTHS[3])
      .run();
    const damaged = await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY);
    expectGrouped(damaged, ["author"], rows, "damaged");
    const { results } = await db
      .prepare("SELECT MIN(length(sorted)) AS shortest FROM summary_group_months WHERE org_key = ?1 AND month = ?2")
      .bind(org, MONTHS[3])
      .all<{ shortest: number }>();
    expect(results[0]?.shortest).toBeGreaterThan(13); // built again after the answer
    expect((await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY)).fromGroupMonths).toBe(rows.length);
    // Markers: a cap on a row's bytes that no month fits. Never served, never built again until a write.
    await db.prepare("DELETE FROM summary_group_month_heads WHERE org_key = ?1").bind(org).run();
    await buildGroupMonths(
      db,
      org,
      "author",
      MONTHS.map((m, i) => ({ first: m, last: (MONTHS[i + 1] ?? Date.parse("2026-05-01") / DAY) - 1, month: m })),
      { maxBytes: 10 },
    );
    expect((await heads(org)).map((h) => h.lo)).toEqual([null, null, null, null]);
    const markers = await summarizeGroupings(db, scopeOf(org, WINDOW, ["author"]), MONTHS_ONLY);
    expect(markers.fromGroupMonths).toBe(0);
    expectGrouped(markers, ["author"], rows, "markers");
    expect((await heads(org)).map((h) => h.lo)).toEqual([null, null, null, null]);
  });
});
