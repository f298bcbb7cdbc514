import { describe, expect, it } from "vitest";
import { DURATION_BUCKET_BOUNDS, durationBucket } from "../../src/rules/duration-buckets";
import { SUMMARY_LIMITS, summarizeGroupings } from "../../src/storage/analytics-summary";
import type { GroupKind, GroupMonth } from "../../src/storage/summary-group-months";
import { buildGroupSpan, KEPT_SPANS, spanOf } from "../../src/storage/summary-group-spans";
import { SORTED_ROW_MIN } from "../../src/storage/summary-medians";
import { postEventsOk, seededRandom, shardDb } from "./helpers";
import { eventsOf, type Pr, sameDayPullRequests } from "./summary-attack-data";
import { agrees, groupingsOf, refusingOnePart, summaryOrg, type Window, windowQuery } from "./summary-attack-http";
import { type ExportRow, exportRows, type GroupBy, referenceSummary } from "./summary-reference";
import { byKey, plan, servedSpans, spans } from "./summary-span-helpers";

/**
 * Spans of month blocks per group (`summary-group-spans.ts`, migration 0016): three or more whole
 * months in a row made into one head, one row per group and one per bucket, once a summary served
 * them from their months' heads. The oracle is contract section 12: the summary is exactly the
 * export's rows (every page), grouped; and the same summary read without spans.
 */

const DAY = 86_400_000;
const day = (text: string) => Date.parse(`${text}T00:00:00Z`) / DAY;
const NOV = Date.parse("2025-11-01T00:00:00Z");
/** November 2025 to May 2026: seven whole months. */
const WINDOW: Window = { start: NOV, end: Date.parse("2026-05-31T23:59:59.999Z") };
const REPOS = ["api", "web", "docs"];
const AUTHORS = ["alice", "Bob", "carol", "dave", "Erin"];

/** Pull requests every few hours through the window, each reviewed and merged inside its own day. */
const pullRequests = (seed: number): Pr[] =>
  sameDayPullRequests(seededRandom(seed), {
    from: WINDOW.start,
    to: WINDOW.end,
    repos: REPOS,
    authors: AUTHORS,
    step: 4,
    spread: 24,
  });

/** The groups and buckets (of every group together) whose rows a span's head stands for, and the rows of no head (none after a build). */
async function spanRows(org: string) {
  const db = await shardDb(org);
  const count = async (what: string, where: string) =>
    (
      await db
        .prepare(
          `SELECT ${what} AS n FROM summary_group_span_buckets AS r WHERE r.org_key = ?1 AND ${where} EXISTS (
  SELECT 1 FROM summary_group_span_heads AS h
  WHERE h.org_key = r.org_key AND h.kind = r.kind AND h.first_day = r.first_day AND h.last_day = r.last_day AND h.version = r.version)`,
        )
        .bind(org)
        .first<{ n: number }>()
    )?.n;
  return {
    groups: await count("COUNT(DISTINCT r.group_key)", "r.group_key <> '' AND"),
    buckets: await count("COUNT(*)", "r.group_key = '' AND"),
    orphans: await count("COUNT(*)", "NOT"),
  };
}

/** The storage's answer with spans against the same read without month blocks (day blocks and walks), and the export's rows grouped. */
async function expectSame(org: string, w: Window, groupBys: GroupBy[], rows: ExportRow[], label: string) {
  const db = await shardDb(org);
  const q = groupingsOf(org, w, groupBys);
  const figures = await summarizeGroupings(db, q);
  const plain = await summarizeGroupings(db, q, { ...SUMMARY_LIMITS, groupMonths: false });
  groupBys.forEach((groupBy, i) => {
    const want = referenceSummary(rows, groupBy, w.start, w.end);
    expect(byKey(figures.groupings[i]?.groups ?? []), `${label} ${groupBy}`).toEqual(
      byKey(want.groups.filter((g) => g.pullRequests > 0)),
    );
    expect(figures.groupings[i]?.totals, `${label} ${groupBy} totals`).toEqual(want.totals);
    expect(byKey(figures.groupings[i]?.groups ?? []), `${label} ${groupBy} without month blocks`).toEqual(
      byKey(plain.groupings[i]?.groups ?? []),
    );
    expect(figures.groupings[i]?.totals).toEqual(plain.groupings[i]?.totals);
  });
  return figures;
}

describe("spans of month blocks per group (summary-group-spans.ts)", () => {
  it("whole months in a row are made into a span once served from their heads, and the span serves them, as the export counts", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    await postEventsOk(eventsOf(org, pullRequests(31)));
    // The first summary builds the day blocks and the months; the second serves the months and makes the span.
    const rows = await agrees(get, org, WINDOW, "builds", ["repo", "author"], { passes: 3 });
    expect(rows.length).toBeGreaterThan(300);
    const made = await spans(org);
    expect(made.map(({ kind, first, last }) => [kind, first, last])).toEqual([
      ["author", day("2025-11-01"), day("2026-05-31")],
      ["repo", day("2025-11-01"), day("2026-05-31")],
    ]);
    expect(made.every((s) => s.lo !== null)).toBe(true);
    const { groups, buckets, orphans } = await spanRows(org);
    expect(groups).toBe(REPOS.length + AUTHORS.length);
    expect(buckets).toBeGreaterThan(10);
    expect(orphans).toBe(0);
    // Served: the span alone, for one kind and for both.
    for (const kinds of [["repo"], ["author"], ["author", "repo"]] as GroupKind[][]) {
      const p = await plan(org, WINDOW, kinds);
      expect(
        p.served.map((m) => [m.kind, m.span]),
        kinds.join(),
      ).toEqual(kinds.map((k) => [k, true]));
      const figures = await expectSame(org, WINDOW, kinds, rows, kinds.join());
      expect(figures.fromGroupMonths).toBe(rows.length);
      expect(figures.bucketValues).toBeGreaterThan(0);
    }
    // Several groupings of the window (the dashboard's), and one that is not by group: the same figures.
    await expectSame(org, WINDOW, ["week", "repo", "author"], rows, "dashboard");
  });

  it("a window with partial months around its whole ones reads the span and the months' runs around it", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    await postEventsOk(eventsOf(org, pullRequests(32)));
    const w = { start: Date.parse("2025-11-08T00:00:00Z"), end: Date.parse("2026-05-21T23:59:59.999Z") };
    const rows = await agrees(get, org, w, "partial months", ["author"], { passes: 3 });
    // December to April made a span; November from the 8th and May to the 21st are months' runs.
    expect(await servedSpans(org, w, ["author"])).toEqual([["author", day("2025-12-01"), day("2026-04-30")]]);
    const p = await plan(org, w, ["author"]);
    expect(p.served.filter((m) => !m.span).map((m) => [m.first, m.last])).toEqual([
      [day("2025-11-08"), day("2025-11-30")],
      [day("2026-05-01"), day("2026-05-21")],
    ]);
    await expectSame(org, w, ["author"], rows, "partial months");
    // A window of the span's days alone, and one of two whole months (too few for a span of its own).
    const inner = { start: Date.parse("2025-12-01T00:00:00Z"), end: Date.parse("2026-04-30T23:59:59.999Z") };
    await expectSame(org, inner, ["author"], await agrees(get, org, inner, "the span's days", ["author"]), "inner");
    expect(await servedSpans(org, inner, ["author"])).toEqual([["author", day("2025-12-01"), day("2026-04-30")]]);
    const two = { start: Date.parse("2026-01-01T00:00:00Z"), end: Date.parse("2026-02-28T23:59:59.999Z") };
    await agrees(get, org, two, "two months", ["author"], { passes: 3 });
    expect(await servedSpans(org, two, ["author"])).toEqual([]);
    expect((await spans(org)).map((s) => [s.first, s.last])).toEqual([[day("2025-12-01"), day("2026-04-30")]]);
  });

  it("a write to a day of a span deletes its head: the next summaries read the months, as the export counts, and make it anew", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    const prs = pullRequests(33);
    await postEventsOk(eventsOf(org, prs));
    await agrees(get, org, WINDOW, "before", ["repo"], { passes: 3 });
    const [before] = await spans(org);
    expect(before?.lo).not.toBeNull();
    // A pull request merged on February 10th, and a new review of one merged in March.
    const march = prs.find((p) => p.merged >= Date.parse("2026-03-05T00:00:00Z")) as Pr;
    await postEventsOk(
      eventsOf(org, [
        {
          repo: "web",
          n: 90_001,
          author: "zed",
          created: Date.parse("2026-02-10T08:00:00Z"),
          merged: Date.parse("2026-02-10T12:00:00Z"),
          reviews: [Date.parse("2026-02-10T09:00:00Z")],
          findings: [{ at: Date.parse("2026-02-10T09:00:00Z"), fixed: true }],
        },
        { ...march, reviews: [...march.reviews, march.merged - 2], version: "2026-11-02T00:00:00.000Z" },
      ]),
    );
    expect(await spans(org)).toEqual([]);
    const rows = await exportRows<ExportRow>(get, windowQuery(org, WINDOW), { perPage: 100, maxPages: 100 });
    await expectSame(org, WINDOW, ["repo"], rows, "after the write");
    await agrees(get, org, WINDOW, "after the write", ["repo"], { passes: 3 });
    const [after] = await spans(org);
    expect([after?.first, after?.last, after?.lo === null]).toEqual([before?.first, before?.last, false]);
    expect(after?.version).not.toBe(before?.version);
    expect(await servedSpans(org, WINDOW, ["repo"])).toEqual([["repo", before?.first, before?.last]]);
    await expectSame(org, WINDOW, ["repo"], rows, "served anew");
    expect((await spanRows(org)).orphans).toBe(0);
  });

  it("a span is made only when its days are still stored as its months recorded them, and a change while it is read reads the summary again", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    await postEventsOk(eventsOf(org, pullRequests(34)));
    await agrees(get, org, WINDOW, "months", ["repo"], { passes: 2 });
    const db = await shardDb(org);
    // The months as a summary serves them, before any span.
    await db.prepare("DELETE FROM summary_group_span_heads WHERE org_key = ?1").bind(org).run();
    const months = spanOf((await plan(org, WINDOW, ["repo"])).served) as GroupMonth[];
    expect(months.map((m) => m.first)).toEqual(
      ["2025-11-01", "2025-12-01", "2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01"].map(day),
    );
    // A write to one of its days after its rows, before its head: no head.
    const late: Pr = {
      repo: "api",
      n: 90_002,
      created: Date.parse("2026-01-20T08:00:00Z"),
      merged: Date.parse("2026-01-20T12:00:00Z"),
      reviews: [Date.parse("2026-01-20T09:00:00Z")],
    };
    const write = () => postEventsOk(eventsOf(org, [late]));
    expect(await buildGroupSpan(db, org, "repo", months, { beforeHead: write })).toBe("not made");
    expect(await spans(org)).toEqual([]);
    // Made from the months as they stand now, in statements of a few groups each.
    await agrees(get, org, WINDOW, "rebuilt months", ["repo"], { passes: 2 });
    await db.prepare("DELETE FROM summary_group_span_heads WHERE org_key = ?1").bind(org).run();
    const now = spanOf((await plan(org, WINDOW, ["repo"])).served) as GroupMonth[];
    expect(now.length).toBe(7);
    expect(await buildGroupSpan(db, org, "repo", now, { pullRequestsPerStatement: 1 })).toBe("made");
    const rows = await exportRows<ExportRow>(get, windowQuery(org, WINDOW), { perPage: 100, maxPages: 100 });
    await expectSame(org, WINDOW, ["repo"], rows, "made a group at a time");
    // The span made again between the counts and the slices: the summary reads itself again.
    let raced = 0;
    const figures = await summarizeGroupings(db, groupingsOf(org, WINDOW, ["repo"]), SUMMARY_LIMITS, {
      beforeMedians: async () => {
        if (raced++ > 0) return;
        expect(await buildGroupSpan(db, org, "repo", now, { now: Date.now() + 1 })).toBe("made");
      },
    });
    expect(raced).toBeGreaterThan(1);
    const want = referenceSummary(rows, "repo", WINDOW.start, WINDOW.end);
    expect(byKey(figures.groupings[0]?.groups ?? [])).toEqual(byKey(want.groups.filter((g) => g.pullRequests > 0)));
    expect(figures.groupings[0]?.totals).toEqual(want.totals);
  });

  it("a damaged span's rows are found where read, its head deleted, and the answer is still the export's", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    await postEventsOk(eventsOf(org, pullRequests(35)));
    const rows = await agrees(get, org, WINDOW, "built", ["author"], { passes: 3 });
    const db = await shardDb(org);
    const notHex = async () =>
      (await db
        .prepare(
          `SELECT COUNT(*) AS n FROM summary_group_span_buckets WHERE org_key = ?1 AND CAST(sorted AS TEXT) GLOB '*[^0-9a-f]*'`,
        )
        .bind(org)
        .first<number>("n")) ?? 0;
    // A group's rows, then the rows of every group together (the totals').
    for (const table of ["group_key <> ''", "group_key = ''"]) {
      const [before] = await spans(org);
      expect(before?.lo, table).not.toBeNull();
      await db
        .prepare(
          `UPDATE summary_group_span_buckets SET sorted = CAST(replace(hex(zeroblob(length(sorted))), '00', char(1)) AS BLOB)
WHERE org_key = ?1 AND ${table}`,
        )
        .bind(org)
        .run();
      expect(await notHex(), table).toBeGreaterThan(0);
      await expectSame(org, WINDOW, ["author"], rows, `${table} damaged`);
      // Its head deleted where a slice was found damaged; the summary read again made it anew.
      const [after] = await spans(org);
      expect([after?.first, after?.last], table).toEqual([before?.first, before?.last]);
      expect(after?.version, table).not.toBe(before?.version);
      expect(await notHex(), table).toBe(0);
      await agrees(get, org, WINDOW, `${table} rebuilt`, ["author"], { passes: 2 });
    }
  });

  it("a span too big for a row is a marker, never served nor made again; a kind keeps its latest spans", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    await postEventsOk(eventsOf(org, pullRequests(36)));
    const rows = await agrees(get, org, WINDOW, "months", ["repo"], { passes: 2 });
    const db = await shardDb(org);
    await db.prepare("DELETE FROM summary_group_span_heads WHERE org_key = ?1").bind(org).run();
    const months = spanOf((await plan(org, WINDOW, ["repo"])).served) as GroupMonth[];
    expect(await buildGroupSpan(db, org, "repo", months, { maxBytes: 100 })).toBe("marker");
    const [marker] = await spans(org);
    expect(marker?.lo).toBeNull();
    for (let i = 0; i < 2; i++) await expectSame(org, WINDOW, ["repo"], rows, `beside the marker ${i}`);
    expect(await servedSpans(org, WINDOW, ["repo"])).toEqual([]);
    expect(await spans(org)).toEqual([marker]); // not made again
    // Spans of other whole months in a row: the latest two of the kind are kept, and only their rows.
    await db.prepare("DELETE FROM summary_group_span_heads WHERE org_key = ?1").bind(org).run();
    let now = Date.now();
    const kept: [number, number][] = [];
    for (const [from, to] of [
      [0, 3],
      [1, 4],
      [2, 5],
      [3, 7],
    ]) {
      const of = months.slice(from, to);
      expect(await buildGroupSpan(db, org, "repo", of, { now: now++ })).toBe("made");
      kept.push([of[0]?.first as number, of.at(-1)?.last as number]);
    }
    expect((await spans(org)).map((s) => [s.first, s.last])).toEqual(kept.slice(-KEPT_SPANS));
    expect((await spanRows(org)).orphans).toBe(0);
    // The window's days are served by the longest span that fits (November to May is gone):
    // February to May, and November to January as months.
    expect(await servedSpans(org, WINDOW, ["repo"])).toEqual([["repo", day("2026-02-01"), day("2026-05-31")]]);
    await expectSame(org, WINDOW, ["repo"], rows, "a span and months");
    // That summary made November to May of the span and the months it served (the span's bucket
    // rows read as a month's), and the next reads it.
    expect((await spans(org)).map((s) => [s.first, s.last])).toEqual(
      [...kept.slice(-(KEPT_SPANS - 1)), [NOV / DAY, day("2026-05-31")]].sort(
        (a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number),
      ),
    );
    expect(await servedSpans(org, WINDOW, ["repo"])).toEqual([["repo", NOV / DAY, day("2026-05-31")]]);
    await expectSame(org, WINDOW, ["repo"], rows, "made of a span and months");
    expect((await spanRows(org)).orphans).toBe(0);
  });
  it("the walk of a window's edges comes back in one part per group; a statement D1 refuses is run again in parts", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    await postEventsOk(eventsOf(org, pullRequests(37)));
    const rows = await agrees(get, org, WINDOW, "built", ["author"], { passes: 3 });
    const db = await shardDb(org);
    // D1 refuses a value over its cap (SQLITE_TOOBIG); local D1 does not, so a statement in one part refuses here.
    const statements: string[] = [];
    const refusing = (refuse: boolean) => refusingOnePart(db, statements, refuse);
    const want = referenceSummary(rows, "author", WINDOW.start, WINDOW.end);
    for (const refuse of [false, true]) {
      statements.length = 0;
      const figures = await summarizeGroupings(refusing(refuse), groupingsOf(org, WINDOW, ["author"]));
      expect(
        statements.map((sql) => /pid % 8/.test(sql)),
        `refused: ${refuse}`,
      ).toEqual(refuse ? [false, true] : [false]);
      expect(byKey(figures.groupings[0]?.groups ?? [])).toEqual(byKey(want.groups.filter((g) => g.pullRequests > 0)));
      expect(figures.groupings[0]?.totals).toEqual(want.totals);
    }
    // A window of unserved days (no blocks: months of a list) is walked in parts from the start.
    statements.length = 0;
    await summarizeGroupings(refusing(false), { ...groupingsOf(org, WINDOW, ["author"]), repoKeys: ["api"] });
    expect(statements.length).toBe(1);
    expect(statements[0]).toMatch(/pid % 8/);
  });
  it("heads and a span whose days hold pull requests reviewed or found outside the window are served with those days' corrections", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    const at = (text: string) => Date.parse(text);
    // Merged in the window's first days, reviewed or found before it; one reviewed only before it (not listed).
    const straddling: Pr[] = [
      {
        repo: "api",
        n: 80_001,
        author: "alice",
        created: at("2025-10-29T08:00:00Z"),
        merged: at("2025-11-02T12:00:00Z"),
        reviews: [at("2025-10-30T09:00:00Z"), at("2025-11-02T10:00:00Z")],
        findings: [
          { at: at("2025-10-30T09:30:00Z"), fixed: true },
          { at: at("2025-11-02T10:30:00Z"), fixed: false },
        ],
      },
      {
        repo: "web",
        n: 80_002,
        author: "Bob",
        created: at("2025-10-28T08:00:00Z"),
        merged: at("2025-11-03T12:00:00Z"),
        reviews: [at("2025-10-31T09:00:00Z")],
        findings: [{ at: at("2025-10-31T09:30:00Z"), fixed: true }],
      },
      {
        repo: "docs",
        n: 80_003,
        author: "carol",
        created: at("2025-10-20T08:00:00Z"),
        merged: at("2025-12-01T12:00:00Z"),
        reviews: [at("2025-10-21T09:00:00Z"), at("2025-12-01T09:00:00Z")],
        ai: 40,
      },
      // Reviewed after the window's end: merged on its last days.
      {
        repo: "api",
        n: 80_004,
        author: "dave",
        created: at("2026-05-29T08:00:00Z"),
        merged: at("2026-05-30T12:00:00Z"),
        reviews: [at("2026-05-29T09:00:00Z"), at("2026-06-02T09:00:00Z")],
        findings: [{ at: at("2026-06-02T09:30:00Z"), fixed: true }],
      },
    ];
    await postEventsOk(eventsOf(org, [...pullRequests(38), ...straddling]));
    for (const [label, w] of [
      ["from November 1st", WINDOW],
      ["from November 1st, noon", { start: at("2025-11-01T12:00:00Z"), end: WINDOW.end }],
    ] as const) {
      const rows = await agrees(get, org, w, label, ["repo", "author"], { passes: 3 });
      expect(
        rows.some((r) => r.repo === "web" && r.mergedAt.startsWith("2025-11-03")),
        label,
      ).toBe(false);
      const kinds: GroupKind[] = ["repo", "author"];
      const p = await plan(org, w, kinds);
      expect(
        p.served.some((m) => m.span && m.first <= day("2025-12-01")),
        label,
      ).toBe(true);
      await expectSame(org, w, ["repo", "author"], rows, label);
      await expectSame(org, w, ["author"], rows, label);
    }
  });

  it("a bucket of every group together of at least SORTED_ROW_MIN values is kept sorted, and a summary reads a window of it", async () => {
    const { org, get } = await summaryOrg("gspan", "admin", Object.fromEntries(REPOS.map((r) => [r, { private: false }])));
    // February to May 2026, a pull request every 70 minutes: each merged between one hour and the
    // next bound after its creation (one bucket of durations to merge), with repeated durations.
    const w = { start: Date.parse("2026-02-01T00:00:00Z"), end: Date.parse("2026-05-31T23:59:59.999Z") };
    const low = DURATION_BUCKET_BOUNDS.find((b) => b >= 3_600_000) as number;
    const high = DURATION_BUCKET_BOUNDS[durationBucket(low)] as number;
    const random = seededRandom(36);
    const prs: Pr[] = [];
    for (let at = w.start + 2 * 3_600_000, n = 1; at < w.end - 3_600_000; at += 70 * 60_000, n++) {
      const merged = at;
      const created = merged - (low + 1000 * Math.floor(random() * ((high - low) / 1000)));
      prs.push({
        repo: REPOS[n % REPOS.length] as string,
        n,
        author: AUTHORS[n % AUTHORS.length],
        created,
        merged,
        reviews: [created + 60_000 * (1 + (n % 30))],
      });
    }
    expect(prs.length).toBeGreaterThan(SORTED_ROW_MIN + 200);
    await postEventsOk(eventsOf(org, prs));
    const rows = await agrees(get, org, w, "one bucket", ["author"], { passes: 3 });
    expect(rows.length).toBe(prs.length);
    expect((await spans(org)).map((s) => [s.kind, s.first, s.last])).toEqual([["author", day("2026-02-01"), day("2026-05-31")]]);
    // The span's row of that bucket, of every group together: sorted; a small one: its months' rows one after the other.
    const db = await shardDb(org);
    const { results: big } = await db
      .prepare(
        `SELECT metric, bucket, CAST(sorted AS TEXT) AS text FROM summary_group_span_buckets
WHERE org_key = ?1 AND group_key = '' AND length(sorted) >= ?2 * 13`,
      )
      .bind(org, SORTED_ROW_MIN)
      .all<{ metric: number; bucket: number; text: string }>();
    expect(big.map((r) => [r.metric, r.bucket])).toEqual([[1, durationBucket(low)]]);
    const values = (big[0]?.text.match(/.{13}/g) ?? []) as string[];
    expect(values.length).toBe(prs.length);
    expect(values).toEqual([...values].sort());
    // Served from the span: the median's window of the row, not the row (and the same figures as without spans).
    const figures = await expectSame(org, w, ["author"], rows, "one bucket");
    const plain = await summarizeGroupings(db, groupingsOf(org, w, ["author"]), { ...SUMMARY_LIMITS, groupSpans: false });
    expect(figures.fromGroupMonths).toBe(rows.length);
    expect(plain.bucketValues - figures.bucketValues).toBeGreaterThan(SORTED_ROW_MIN);
    const head = await db
      .prepare("SELECT sorted_from AS f FROM summary_group_span_heads WHERE org_key = ?1")
      .bind(org)
      .first<{ f: number }>();
    expect(head?.f).toBe(SORTED_ROW_MIN);
    // A span as a Worker of before made it (deploys follow migration 0017): no sorted row named, its
    // row its months' values in another order. Read whole, the same figures.
    await db.batch([
      db.prepare("UPDATE summary_group_span_heads SET sorted_from = NULL WHERE org_key = ?1").bind(org),
      db
        .prepare(
          "UPDATE summary_group_span_buckets SET sorted = CAST(?2 AS BLOB) WHERE org_key = ?1 AND group_key = '' AND metric = ?3 AND bucket = ?4",
        )
        .bind(org, [...values].reverse().join(""), big[0]?.metric, big[0]?.bucket),
    ]);
    const before = await expectSame(org, w, ["author"], rows, "a span of before");
    expect(before.bucketValues - figures.bucketValues).toBeGreaterThan(SORTED_ROW_MIN);
  });
});
