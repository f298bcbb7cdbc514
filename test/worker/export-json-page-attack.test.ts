import { describe, expect, it } from "vitest";
import { DOWNLOAD_PAGE_ROWS } from "../../src/analytics/download";
import {
  JSON_PAGE_MAX_ROWS,
  listMergedPullRequests,
  type MergedPullRequest,
  type MergedPullRequestQuery,
  mergedPullRequestsQuery,
} from "../../src/storage/analytics";
import { appCall, signIn } from "./app-helpers";
import { addMember, call, createKey, createOrg, createUser, ev, postEventsOk, scopeOf, shardDb, unique } from "./helpers";
import { exportRows } from "./summary-reference";

/**
 * Commit 70eecd3 reads the export's page as one JSON text built by SQLite
 * (`json_group_array(json_array(...))`) and sorts it again in the Worker. These tests attack that
 * read: names JSON treats specially, nulls and extreme numbers, ties at one millisecond across
 * cursors, the download's 1,000-row pages, an empty window. Each compares against the bare
 * statement (`mergedPullRequestsQuery`, what the page read before) or against the events sent.
 */

const WINDOW = "startDate=2026-10-01&endDate=2026-10-31";
/** The time of every direct statement: two weeks after the window. */
const NOW = Date.parse("2026-11-15T00:00:00Z");
type Row = Record<string, unknown> & { repo: string; author: string; prNumber: number; mergedAt: string };

/** Authors JSON and SQLite's json_array treat specially (the event schema takes any 1-255 characters). */
const SPECIAL_AUTHORS = [
  'quote"inside',
  "back\\slash\\",
  '\\"',
  "ctl\u0001\u001f\u007f",
  "new\nline\r\ttab",
  "nul\u0000byte",
  "emoji 😀👩‍💻",
  "beyond BMP 𝒜𐍈",
  "line\u2028para\u2029sep",
  "[1,2]",
  '{"a":1}',
  "null",
  " spaced ",
  "é combining é",
  "\u0001".repeat(255),
  "😀".repeat(127),
  "x".repeat(255),
];
/** Repository names GitHub allows that could still trip a reader: dots, dashes, underscores, 100 long. */
const SPECIAL_REPOS = ["api", "a.b-c_d", "...x", "R".repeat(100), "0", "1e5"];

async function adminWithKey() {
  const org = await createOrg(unique("jsonpage"), { plan: "pro" });
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "analytics");
  const get = (q: string) => call(`/api/analytics/v1/prs?${q}`, { headers: { Authorization: `Bearer ${key}` } });
  return { org, user, get };
}

/** Walks the export over HTTP until nextCursor is null; every page but the last is full. */
/** Every page of the export through `get` (a query without the path), as `exportRows` walks it. */
const walk = (get: (q: string) => Promise<Response>, query: string, perPage: number): Promise<Row[]> =>
  exportRows<Row>(
    async (path) => {
      const res = await get(path.slice(path.indexOf("?") + 1));
      expect(res.status).toBe(200);
      return res.json();
    },
    query,
    { perPage, maxPages: 2000 },
  );

/** The bare statement, as the page read it before the JSON wrapper: its rows, mapped as before. */
async function bareRows(db: D1Database, q: MergedPullRequestQuery): Promise<MergedPullRequest[]> {
  const { sql, params } = mergedPullRequestsQuery(q);
  const { results } = await db
    .prepare(sql)
    .bind(...params)
    .all<MergedPullRequest>();
  return results.map((r) => ({
    id: r.id,
    repo: r.repo,
    prNumber: r.prNumber,
    author: r.author,
    createdAt: r.createdAt,
    mergedAt: r.mergedAt,
    linesAdded: r.linesAdded,
    linesDeleted: r.linesDeleted,
    firstReviewedAt: r.firstReviewedAt,
    findingsFlagged: r.findingsFlagged,
    findingsFixed: r.findingsFixed,
    aiLines: r.aiLines,
  }));
}

/** Every page of `limit - 1` rows through `listMergedPullRequests` equals the bare statement's, cursor by cursor. */
async function expectSameAsBare(org: string, perPage: number): Promise<MergedPullRequest[]> {
  const db = await shardDb(org);
  const all: MergedPullRequest[] = [];
  let after: MergedPullRequestQuery["after"] = null;
  for (let i = 0; i < 2000; i++) {
    const q: MergedPullRequestQuery = { ...scopeOf(org.toLowerCase()), after, limit: perPage + 1, now: NOW };
    const { rows } = await listMergedPullRequests(db, q);
    expect(rows).toEqual(await bareRows(db, q));
    const page = rows.slice(0, perPage);
    all.push(...page);
    const last = page.at(-1);
    if (rows.length <= perPage || last === undefined) return all;
    after = { mergedAt: last.mergedAt, id: last.id };
  }
  throw new Error("the walk did not end");
}

describe("names JSON treats specially come back exactly", () => {
  it("every author and repository, every field, as the bare statement and as sent; pages of 1, 2 and 100", {
    timeout: 120_000,
  }, async () => {
    const { org, get } = await adminWithKey();
    const sent = SPECIAL_AUTHORS.flatMap((author, i) => {
      const repo = SPECIAL_REPOS[i % SPECIAL_REPOS.length] as string;
      const pr = i + 1;
      return [
        // Some merged at one instant (ties), the rest a minute apart.
        ev.pr(org, pr, {
          repo,
          author,
          mergedAt: i % 3 === 0 ? "2026-10-10T10:00:00.000Z" : `2026-10-10T1${i % 10}:0${i % 6}:00.000Z`,
        }),
        ev.review(org, pr, `r${pr}`, { repo, completedAt: "2026-10-05T12:00:00Z" }),
      ];
    });
    await postEventsOk(sent);

    const bare = await expectSameAsBare(org, 100);
    expect(bare.map((r) => r.author).sort()).toEqual([...SPECIAL_AUTHORS].sort());
    for (const perPage of [1, 2]) expect(await expectSameAsBare(org, perPage)).toEqual(bare);

    for (const perPage of [1, 2, 100]) {
      const rows = await walk(get, `org=${org}&${WINDOW}`, perPage);
      expect(rows.map((r) => [r.prNumber, r.repo, r.author])).toEqual(bare.map((r) => [r.prNumber, r.repo, r.author]));
      for (const row of rows) {
        const i = row.prNumber - 1;
        expect(row.author).toBe(SPECIAL_AUTHORS[i]);
        expect(row.repo).toBe(SPECIAL_REPOS[i % SPECIAL_REPOS.length]);
      }
    }
  });
});

describe("nulls, zeros and the largest numbers the service accepts", () => {
  it("come back as the bare statement reads them and as sent", { timeout: 60_000 }, async () => {
    const { org, get } = await adminWithKey();
    const MAX_INSTANT = "9999-12-31T23:59:59.999Z";
    const cases = [
      { linesAdded: null, linesDeleted: null, ai: [] as number[] },
      { linesAdded: 0, linesDeleted: 0, ai: [0] },
      { linesAdded: 1_000_000_000, linesDeleted: 1_000_000_000, ai: [1_000_000_000, 1_000_000_000, 1_000_000_000] },
      { linesAdded: null, linesDeleted: 7, ai: [3] },
      { linesAdded: 5, linesDeleted: null, ai: [] },
    ];
    const events = cases.flatMap((c, i) => {
      const pr = i === 2 ? 2_147_483_647 : i + 1;
      return [
        ev.pr(org, pr, {
          linesAdded: c.linesAdded,
          linesDeleted: c.linesDeleted,
          createdAt: i === 2 ? MAX_INSTANT : "1970-01-01T00:00:00.000Z",
          // One merged at the last instant the service accepts, reviewed inside the window.
          mergedAt: i === 2 ? MAX_INSTANT : `2026-10-0${i + 2}T00:00:00.000Z`,
        }),
        ev.review(org, pr, `r${pr}`, { completedAt: i === 4 ? "2026-10-31T23:59:59.999Z" : "2026-10-01T00:00:00.000Z" }),
        ...(i === 2 ? [ev.finding(org, pr, "f1", { aiAddressed: true }), ev.finding(org, pr, "f2")] : []),
        ...c.ai.map((lines, j) => ev.ai(org, pr, `a${pr}-${j}`, lines)),
      ];
    });
    await postEventsOk(events);
    const bare = await expectSameAsBare(org, 100);
    expect(bare).toHaveLength(cases.length);
    expect(bare[0]).toMatchObject({
      prNumber: 2_147_483_647,
      createdAt: Date.parse(MAX_INSTANT),
      mergedAt: Date.parse(MAX_INSTANT),
      aiLines: 2_000_000_000, // the figure as stored: the records summed (3e9), capped at the changed lines
      findingsFlagged: 2,
      findingsFixed: 1,
    });
    const rows = await walk(get, `org=${org}&${WINDOW}`, 2);
    expect(rows[0]).toMatchObject({
      prNumber: 2_147_483_647,
      createdAt: MAX_INSTANT,
      mergedAt: MAX_INSTANT,
      linesAdded: 1_000_000_000,
      totalAiLinesAuthored: 2_000_000_000,
      numberOfServiceIssuesFlagged: 2,
      numberOfServiceIssuesFixed: 1,
    });
    const byNumber = new Map(rows.map((r) => [r.prNumber, r]));
    expect(byNumber.get(1)).toMatchObject({ linesAdded: null, linesDeleted: null, totalAiLinesAuthored: null });
    expect(byNumber.get(2)).toMatchObject({
      linesAdded: 0,
      linesDeleted: 0,
      totalAiLinesAuthored: 0,
      numberOfServiceIssuesFlagged: 0,
    });
    expect(byNumber.get(4)).toMatchObject({ linesAdded: null, linesDeleted: 7, totalAiLinesAuthored: 3 });
    expect(byNumber.get(5)).toMatchObject({ linesAdded: 5, linesDeleted: null, totalAiLinesAuthored: null });
  });
});

describe("ties at one millisecond", () => {
  it("pages of 1, 2 and 100 across 150 merges at one instant: each row once, newest id first", { timeout: 180_000 }, async () => {
    const { org, get } = await adminWithKey();
    const count = 150;
    // Sent in an order unlike their numbers, so ids (first arrival) do not follow prNumber.
    const order = Array.from({ length: count }, (_, i) => ((i * 37) % count) + 1);
    await postEventsOk(
      order.flatMap((pr) => [
        ev.pr(org, pr, { mergedAt: "2026-10-15T12:00:00.000Z", repo: pr % 2 === 0 ? "api" : "web" }),
        ev.review(org, pr, `r${pr}`, { repo: pr % 2 === 0 ? "api" : "web", completedAt: "2026-10-14T12:00:00Z" }),
      ]),
    );
    // Newest id first: the last sent first.
    const expected = [...order].reverse();
    const bare = await expectSameAsBare(org, 100);
    expect(bare.map((r) => r.prNumber)).toEqual(expected);
    for (const perPage of [1, 2, 100]) {
      const rows = await walk(get, `org=${org}&${WINDOW}`, perPage);
      expect(rows.map((r) => r.prNumber)).toEqual(expected);
    }
  });
});

describe("the download's 1,000-row pages", () => {
  it("more than 1,000 rows with special names and ties: the file equals the export's pages", { timeout: 180_000 }, async () => {
    const { org, user, get } = await adminWithKey();
    const count = DOWNLOAD_PAGE_ROWS + 5;
    await postEventsOk(
      Array.from({ length: count }, (_, i) => {
        const pr = i + 1;
        const author = SPECIAL_AUTHORS[i % SPECIAL_AUTHORS.length] as string;
        // Groups of 7 merged at one millisecond, so ties straddle the download's page boundary.
        const mergedAt = new Date(Date.parse("2026-10-20T00:00:00.000Z") - Math.floor(i / 7) * 60_000).toISOString();
        return [ev.pr(org, pr, { author, mergedAt }), ev.review(org, pr, `r${pr}`, { completedAt: "2026-10-10T00:00:00Z" })];
      }).flat(),
    );
    const session = await signIn(user);
    const res = await appCall(`/app/api/analytics/prs.csv?org=${org}&${WINDOW}`, session);
    expect(res.status).toBe(200);
    const file = await res.text();

    let expected = "";
    let cursor: string | null = null;
    do {
      const q: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await get(`org=${org}&${WINDOW}&perPage=100&format=csv${q}`);
      const body = await page.text();
      expected += expected === "" ? body : body.slice(body.indexOf("\r\n") + 2);
      cursor = page.headers.get("X-Next-Cursor");
    } while (cursor !== null);
    expect(file).toBe(expected);

    const rows = await walk(get, `org=${org}&${WINDOW}`, 100);
    expect(rows).toHaveLength(count);
    expect(new Set(rows.map((r) => r.prNumber)).size).toBe(count);
    for (const row of rows) expect(row.author).toBe(SPECIAL_AUTHORS[(row.prNumber - 1) % SPECIAL_AUTHORS.length]);
    expect(await expectSameAsBare(org, DOWNLOAD_PAGE_ROWS)).toHaveLength(count);
  });
});

describe("an empty window", () => {
  it("is an empty page, not an error: over HTTP, through the statement, and for an empty access list", async () => {
    const { org, get } = await adminWithKey();
    await postEventsOk([ev.pr(org, 1), ev.review(org, 1, "r1")]);
    const res = await get(`org=${org}&startDate=2025-01-01&endDate=2025-01-31`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [], nextCursor: null });
    const db = await shardDb(org);
    const base = {
      ...scopeOf(org.toLowerCase(), "2025-01-01T00:00:00.000Z", "2025-01-31T23:59:59.999Z"),
      after: null,
      limit: 101,
      now: NOW,
    };
    expect((await listMergedPullRequests(db, base)).rows).toEqual([]);
    const none = { ...scopeOf(org.toLowerCase()), accessibleRepoKeys: [], after: null, limit: 101, now: NOW };
    expect((await listMergedPullRequests(db, none)).rows).toEqual([]);
    // The October window holds the one row (the empty answers above are not an empty shard).
    expect((await listMergedPullRequests(db, { ...base, ...scopeOf(org.toLowerCase()) })).rows).toHaveLength(1);
  });
});

describe("the page's one JSON value stays under D1's cap of 1,000,000 bytes for a string", () => {
  it("at the longest rows the events allow, for the largest page read as JSON; larger pages read as before", {
    timeout: 180_000,
  }, async () => {
    const { org, user } = await adminWithKey();
    // The widest row: a 255-character author of control characters (6 bytes each in JSON), a
    // 100-character repository, the largest numbers. Local D1 does not enforce the cap; D1 does.
    const author = "\u0001".repeat(255);
    const repo = "R".repeat(100);
    const MAX_INSTANT = "9999-12-31T23:59:59.999Z";
    const count = DOWNLOAD_PAGE_ROWS + 2;
    const events = Array.from({ length: count }, (_, i) => {
      const pr = 2_147_483_647 - i;
      return [
        ev.pr(org, pr, { repo, author, createdAt: MAX_INSTANT, mergedAt: MAX_INSTANT, linesAdded: 1e9, linesDeleted: 1e9 }),
        ev.review(org, pr, `r${pr}`, { repo, completedAt: "2026-10-10T00:00:00Z" }),
        ...(i === 0 ? [ev.ai(org, pr, "a1", 1e9, { repo }), ev.ai(org, pr, "a2", 1e9, { repo })] : []),
      ];
    }).flat();
    // Under the events route's 1 MB body.
    for (let i = 0; i < events.length; i += 300) await postEventsOk(events.slice(i, i + 300));

    const db = await shardDb(org);
    const q: MergedPullRequestQuery = { ...scopeOf(org.toLowerCase()), after: null, limit: 1, now: NOW };
    const { sql, params } = mergedPullRequestsQuery(q);
    const widest = await db
      .prepare(
        `SELECT length(CAST(json_array(id, repo, prNumber, author, createdAt, mergedAt, linesAdded, linesDeleted, firstReviewedAt, findingsFlagged, findingsFixed, aiLines) AS BLOB)) AS bytes FROM (${sql})`,
      )
      .bind(...params)
      .first<{ bytes: number }>();
    // The numbers not at their widest here (the id, the findings' counts): 64 bytes more a row.
    const rowBytes = (widest?.bytes ?? 0) + 64;
    expect(rowBytes).toBeGreaterThan(1_700);
    // One comma per row and the brackets.
    expect((rowBytes + 1) * JSON_PAGE_MAX_ROWS + 2).toBeLessThan(1_000_000);
    // The export's largest page (perPage 100) still reads as one value.
    expect(JSON_PAGE_MAX_ROWS).toBeGreaterThanOrEqual(101);

    // The download's pages of 1,001 rows (read row by row) equal the bare statement, and the file holds every row.
    expect(await expectSameAsBare(org, DOWNLOAD_PAGE_ROWS)).toHaveLength(count);
    const res = await appCall(`/app/api/analytics/prs.csv?org=${org}&${WINDOW}`, await signIn(user));
    expect(res.status).toBe(200);
    expect((await res.text()).split("\r\n")).toHaveLength(1 + count + 1);
  });
});
