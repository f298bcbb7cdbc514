/**
 * The analytics summary's cases for `npm run bench:analytics` (issue 20, item 3): each case's
 * statement timed on the SQLite file (the floor), its D1 rows read as the Worker reports them, and
 * its c=1 p50 against /readyz with requests interleaved one by one, as the export's cases are.
 * Each case is checked first: its totals must count exactly the rows of the export's statement for
 * the same window (every page), so a fast wrong answer fails the run (CI's smoke run too).
 */
import { DatabaseSync } from "node:sqlite";
import { mergedPullRequestsQuery } from "../../src/storage/analytics.ts";
import { assemble, summaryStatement } from "../../src/storage/analytics-summary.ts";
import { sliceReaderOf } from "../../src/storage/summary-medians.ts";
import { fmt, interleave, percentiles, table } from "./bench-common.mjs";
import { smallOrg } from "./bench-data.mjs";

const DAY = 86_400_000;
const iso = (ms) => new Date(ms).toISOString();

/** The cases and their targets (the endpoint's c=1 p50 over /readyz's, interleaved); `oneRepo` and `threeRepos` name bigco's repositories (keys). */
export function summaryCases(now, { oneRepo, threeRepos }) {
  // Explicit windows reach the Worker after `now`; the default window is the Worker's own.
  const month = { start: now - 30 * DAY, end: now };
  const year = { start: now - 365 * DAY, end: now };
  const at = (w) => `startDate=${iso(w.start)}&endDate=${iso(w.end)}`;
  return [
    {
      name: "30-day window by week",
      orgKey: "bigco",
      window: month,
      groupBy: "week",
      query: `org=bigco&${at(month)}`,
      target: 3,
    },
    {
      name: "one-year window by week",
      orgKey: "bigco",
      window: year,
      groupBy: "week",
      query: `org=bigco&${at(year)}`,
      target: 10,
    },
    {
      name: "one-year window by repository",
      orgKey: "bigco",
      window: year,
      groupBy: "repo",
      query: `org=bigco&${at(year)}`,
      target: 10,
    },
    {
      name: "one-year window by author",
      orgKey: "bigco",
      window: year,
      groupBy: "author",
      query: `org=bigco&${at(year)}`,
      target: 10,
    },
    // Contract section 21 (issue 33): a team's three repositories against one of them.
    {
      name: "one repository, one-year window by week",
      orgKey: "bigco",
      window: year,
      groupBy: "week",
      repoKeys: [oneRepo],
      query: `org=bigco&repo=${oneRepo}&${at(year)}`,
      target: 10,
    },
    {
      name: `${threeRepos.length} repositories (a list), one-year window by week`,
      orgKey: "bigco",
      window: year,
      groupBy: "week",
      repoKeys: threeRepos,
      query: `org=bigco&repo=${threeRepos.join(",")}&${at(year)}`,
      target: 10,
      vsOneRepository: "one repository, one-year window by week",
    },
    {
      name: "small organization, default window (30 days) by week",
      orgKey: smallOrg(1),
      window: month,
      groupBy: "week",
      query: `org=${smallOrg(1)}`,
      target: 1.5,
    },
  ].map((c) => ({ ...c, query: `${c.query}&groupBy=${c.groupBy}` }));
}

/** The statement's input for a case (an admin: every repository). */
const input = (c) => ({
  orgKey: c.orgKey,
  repoKeys: c.repoKeys ?? null,
  authorKeys: null,
  accessibleRepoKeys: null,
  ...c.window,
  groupBy: c.groupBy,
});

/** SQLite floor and the export's row count of each case's window, on the D1 file. */
export function summaryFloor(file, cases, { runs }) {
  const sqlite = new DatabaseSync(file, { readOnly: true });
  try {
    for (const c of cases) {
      // Without blocks (the column says so), whatever blocks earlier runs left in the file.
      const { sql, params } = summaryStatement(input(c), undefined, "none");
      const statement = sqlite.prepare(sql);
      statement.all(...params);
      const samples = [];
      for (let i = 0; i < runs; i++) {
        const t = performance.now();
        statement.all(...params);
        samples.push(performance.now() - t);
      }
      c.floor = percentiles(samples);
      c.exportTotals = exportTotals(sqlite, c);
      c.exportRows = c.exportTotals.pullRequests;
    }
  } finally {
    sqlite.close();
  }
}

/**
 * The export's rows for the window, every page (pages of 5,000), added up as section 12 defines
 * the totals (sums skipping nulls, the AI lines capped as the export caps them, lower medians).
 */
function exportTotals(sqlite, c) {
  const rows = [];
  for (let after = null; ; ) {
    const q = { ...input(c), after, limit: 5000, now: c.window.end + 1 };
    const { sql, params } = mergedPullRequestsQuery(q);
    const page = sqlite.prepare(sql).all(...params);
    rows.push(...page);
    if (page.length < 5000) break;
    const last = page[page.length - 1];
    after = { mergedAt: last.mergedAt, id: last.id };
  }
  const sum = (pick) => rows.reduce((n, r) => n + (pick(r) ?? 0), 0);
  const ai = (r) =>
    r.aiLines === null || (r.linesAdded === null && r.linesDeleted === null)
      ? r.aiLines
      : Math.min(r.aiLines, (r.linesAdded ?? 0) + (r.linesDeleted ?? 0));
  const median = (values) => {
    const sorted = values.sort((a, b) => a - b);
    return sorted.length === 0 ? null : sorted[Math.floor((sorted.length - 1) / 2)];
  };
  return {
    pullRequests: rows.length,
    linesAdded: sum((r) => r.linesAdded),
    linesDeleted: sum((r) => r.linesDeleted),
    serviceIssuesFlagged: sum((r) => r.findingsFlagged),
    serviceIssuesFixed: sum((r) => r.findingsFixed),
    aiLinesAuthored: sum(ai),
    pullRequestsWithAiData: rows.filter((r) => r.aiLines !== null).length,
    medianMsToFirstReview: median(rows.map((r) => r.firstReviewedAt - r.createdAt)),
    medianMsToMerge: median(rows.map((r) => r.mergedAt - r.createdAt)),
  };
}

/** The dashboard's 365-day window (the page's: the last 365 UTC days, today's included, whole days) at `now`. */
export const dashboardWindow = (now) => {
  const today = Math.floor(now / DAY) * DAY;
  return { start: today - 364 * DAY, end: today + DAY - 1 };
};

/** The export's totals of bigco's `window` on the D1 file (see `exportTotals`). */
export function exportTotalsOf(file, window) {
  const sqlite = new DatabaseSync(file, { readOnly: true });
  try {
    return exportTotals(sqlite, { orgKey: "bigco", window, groupBy: "week" });
  } finally {
    sqlite.close();
  }
}

/**
 * Each case four times (each checked): the first request builds the window's day blocks
 * (`storage/summary-days.ts`; grouped by repository or author, also its month blocks per group,
 * `storage/summary-group-months.ts`) and its rows read say what that costs once; the second,
 * grouped by repository or author, serves those months and makes their span
 * (`storage/summary-group-spans.ts`); the second and third read the window's edge days
 * (`storage/summary-edges.ts`, six a request); the fourth is what every later request reads. Then
 * each is interleaved with /readyz for `span` (bench-common `span`).
 */
export async function summaryHttp(server, cases, { headers, span, log }) {
  for (const c of cases) {
    for (const round of ["first", "second", "third", "again"]) {
      const res = await fetch(`${server.url}/api/analytics/v1/summary?${c.query}`, { headers });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`summary, ${c.name} answered ${res.status}: ${body.slice(0, 500)}`);
      const { totals, groups } = JSON.parse(body);
      // The default window ends when the Worker answers, a little after the file's count was taken.
      // With explicit dates, every figure of the totals must be the export's.
      const exact = c.query.includes("startDate")
        ? JSON.stringify(totals) === JSON.stringify(c.exportTotals)
        : Math.abs(totals.pullRequests - c.exportRows) <= 2;
      if (!exact)
        throw new Error(
          `summary, ${c.name} (${round} request): totals ${JSON.stringify(totals)}, the export's rows ${JSON.stringify(c.exportTotals)}`,
        );
      c.groups = groups.length;
      c.pullRequests = totals.pullRequests;
      const rowsRead = Number(res.headers.get("X-Debug-Rows-Read"));
      if (round === "first") c.rowsReadFirst = rowsRead;
      else c.rowsRead = rowsRead;
    }
  }
  for (const c of cases) {
    log(`Measuring summary, ${c.name}...`);
    const [readyz, endpoint] = await interleave(
      [
        { url: server.url, path: "/readyz" },
        { url: server.url, path: `/api/analytics/v1/summary?${c.query}`, headers },
      ],
      span,
    );
    c.paired = { readyz: readyz.p50, endpoint: endpoint.p50, p99: endpoint.p99, ratio: endpoint.p50 / readyz.p50 };
  }
  // Contract section 21's target compares a list with one of its repositories: the two requests
  // alternate, one by one, so both p50s are taken at the same moments (runs in sequence on this
  // shared machine drift by more than the margin the target leaves).
  for (const c of cases.filter((c) => c.vsOneRepository)) {
    const one = cases.find((o) => o.name === c.vsOneRepository);
    log(`Measuring summary, ${c.name} against ${one.name}...`);
    const [single, list] = await interleave(
      [
        { url: server.url, path: `/api/analytics/v1/summary?${one.query}`, headers },
        { url: server.url, path: `/api/analytics/v1/summary?${c.query}`, headers },
      ],
      span,
    );
    c.vsOne = { one: single.p50, list: list.p50, ratio: list.p50 / single.p50 };
  }
}

export function summaryReport(cases) {
  const report = table(
    [
      "summary case",
      "pull requests",
      "groups",
      "rows read, first request (builds the day blocks)",
      "rows read",
      "rows read per pull request",
      "SQLite p50 ms, without blocks",
      "c=1 p50 ms",
      "c=1 p99 ms",
      "c=1 p50 vs /readyz, interleaved (ms / ms)",
      "target",
    ],
    cases.map((c) => [
      c.name,
      c.pullRequests.toLocaleString("en"),
      String(c.groups),
      c.rowsReadFirst.toLocaleString("en"),
      c.rowsRead.toLocaleString("en"),
      fmt(c.rowsRead / Math.max(c.pullRequests, 1)),
      fmt(c.floor.p50, 3),
      fmt(c.paired.endpoint),
      fmt(c.paired.p99),
      `${fmt(c.paired.ratio)}x (${fmt(c.paired.endpoint)} / ${fmt(c.paired.readyz)})`,
      `${c.target}x`,
    ]),
  );
  const targets = cases.map(
    (c) => `- ${c.paired.ratio <= c.target ? "met" : "MISSED"}: ${c.name} within ${c.target}x /readyz (${fmt(c.paired.ratio)}x)`,
  );
  // Contract section 21 (issue 33): a list of repositories against one of them, per request and per pull request counted.
  for (const c of cases.filter((c) => c.vsOneRepository)) {
    const one = cases.find((o) => o.name === c.vsOneRepository);
    const { ratio } = c.vsOne;
    const perRow = ratio / (c.pullRequests / Math.max(1, one.pullRequests));
    targets.push(
      `- ${ratio <= 1.2 ? "met" : "MISSED"}: ${c.name} within 1.2x of one repository (requests interleaved: ${fmt(c.vsOne.list)} vs ${fmt(c.vsOne.one)} ms, ` +
        `${fmt(ratio)}x for ${c.pullRequests.toLocaleString("en")} pull requests against ${one.pullRequests.toLocaleString("en")}: ${fmt(perRow)}x per pull request; SQLite ${fmt(c.floor.p50 / one.floor.p50)}x)`,
    );
  }
  return { report, targets: targets.join("\n") };
}

/**
 * The dashboard's three groupings of one window (week, repository, author; contract section 14):
 * three summary statements one after the other, as three summary requests cost the database, against
 * the one statement of `GET /app/api/analytics/summaries` (`summarizeGroupings`), on the D1 file.
 * The combined answer must equal the three (every group and the totals), or the run fails.
 */
export async function dashboardFloor(file, now, { runs }) {
  const sqlite = new DatabaseSync(file, { readOnly: true });
  const groupBys = ["week", "repo", "author"];
  // The week's statement reads its blocks' duration counts; the medians' buckets come from the file too.
  const slices = sliceReaderOf(
    async (statements) => statements.map(([sql, params]) => ({ results: sqlite.prepare(sql).all(...params), rowsRead: 0 })),
    "bigco",
  );
  // Each grouping's figures (parts added up, medians selected), groups in key order.
  const figures = async (groupings, rows) =>
    (await assemble(groupings, rows, { repo: null, author: null }, slices)).groupings.map(({ groups, totals }) => ({
      totals,
      groups: [...groups].sort((a, b) => (String(a.key) < String(b.key) ? -1 : 1)),
    }));
  const results = [];
  try {
    for (const days of [30, 365]) {
      const scope = {
        orgKey: "bigco",
        repoKeys: null,
        authorKeys: null,
        accessibleRepoKeys: null,
        start: now - days * DAY,
        end: now,
      };
      const singles = groupBys.map((groupBy) => {
        const { sql, params } = summaryStatement({ ...scope, groupBy }, undefined, "none");
        return { groupBy, statement: sqlite.prepare(sql), params };
      });
      const together = summaryStatement({ ...scope, groupBys }, undefined, "none");
      const combined = { statement: sqlite.prepare(together.sql), params: together.params };
      const separate = [];
      for (const { groupBy, statement, params } of singles)
        separate.push(...(await figures([groupBy], statement.all(...params))));
      const one = await figures(groupBys, combined.statement.all(...combined.params));
      if (JSON.stringify(separate) !== JSON.stringify(one))
        throw new Error(`dashboard, ${days} days: the combined statement's groups differ from the three statements'`);
      const threeSamples = [];
      const oneSamples = [];
      for (let i = 0; i < runs; i++) {
        let t = performance.now();
        for (const { statement, params } of singles) statement.all(...params);
        threeSamples.push(performance.now() - t);
        t = performance.now();
        combined.statement.all(...combined.params);
        oneSamples.push(performance.now() - t);
      }
      results.push({ days, three: percentiles(threeSamples), one: percentiles(oneSamples) });
    }
    return results;
  } finally {
    sqlite.close();
  }
}

export function dashboardReport(rows) {
  return table(
    ["dashboard window (week, repository, author)", "three statements, SQLite p50 ms", "one statement, SQLite p50 ms", "ratio"],
    rows.map((r) => [`${r.days} days`, fmt(r.three.p50), fmt(r.one.p50), `${fmt(r.one.p50 / r.three.p50)}x`]),
  );
}

/**
 * The dashboard's 365-day view as the page asks for it (contract section 14, issue 31): its charts
 * and tables come from one `GET /app/api/analytics/summaries` request (week, repository, author) of
 * the last 365 UTC days, signed in as bench's admin (`DEV_SIGN_IN`). Its answer is checked against
 * the export's totals of the same window first; then timed, interleaved with /readyz. The page
 * draws its charts as soon as this request answers (the previous window's totals come after).
 */
export async function dashboardHttp(server, { cookie, window, span, expected }) {
  const day = (ms) => iso(ms).slice(0, 10);
  const path = `/app/api/analytics/summaries?org=bigco&startDate=${day(window.start)}&endDate=${day(window.end)}&groupBy=week,repo,author`;
  const headers = { Cookie: cookie };
  for (const round of ["first", "again"]) {
    const res = await fetch(`${server.url}${path}`, { headers });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`dashboard's summaries answered ${res.status}: ${body.slice(0, 500)}`);
    const { summaries } = JSON.parse(body);
    if (summaries.length !== 3 || summaries.some((s) => JSON.stringify(s.totals) !== JSON.stringify(expected)))
      throw new Error(`dashboard's summaries (${round} request): totals differ from the export's: ${body.slice(0, 500)}`);
  }
  const [readyz, endpoint] = await interleave(
    [
      { url: server.url, path: "/readyz" },
      { url: server.url, path, headers },
    ],
    span,
  );
  return { readyz: readyz.p50, endpoint: endpoint.p50, p99: endpoint.p99, requests: endpoint.requests };
}

/**
 * The cross-tenant case (issue 31): another organization's first export page, interleaved with
 * /readyz, alone and then while one client loops bigco's one-year summary without pause. Locally
 * every D1 database, object and the Worker share one workerd thread, so this is the worst case.
 */
export async function crossTenant(server, { headers, hogQuery, otherPath, span }) {
  const pair = () =>
    interleave(
      [
        { url: server.url, path: "/readyz" },
        { url: server.url, path: otherPath, headers },
      ],
      span,
    );
  const [, alone] = await pair();
  let stop = false;
  let loops = 0;
  const hog = (async () => {
    while (!stop) {
      const res = await fetch(`${server.url}/api/analytics/v1/summary?${hogQuery}`, { headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`the looping summary answered ${res.status}`);
      loops++;
    }
  })();
  try {
    const [, busy] = await pair();
    return { alone: alone.p50, busy: busy.p50, ratio: busy.p50 / alone.p50, loops };
  } finally {
    stop = true;
    await hog;
  }
}
