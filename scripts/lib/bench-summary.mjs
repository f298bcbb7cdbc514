/**
 * The analytics summary's cases for `npm run bench:analytics` (issue 20, item 3): each case's
 * statement timed on the SQLite file (the floor), its D1 rows read as the Worker reports them, and
 * its c=1 p50 against /readyz with requests interleaved one by one, as the export's cases are.
 * Each case is checked first: its totals must count exactly the rows of the export's statement for
 * the same window (every page), so a fast wrong answer fails the run (CI's smoke run too).
 */
import { DatabaseSync } from "node:sqlite";
import { mergedPullRequestsQuery } from "../../src/storage/analytics.ts";
import { summaryStatement } from "../../src/storage/analytics-summary.ts";
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
      const { sql, params } = summaryStatement(input(c));
      const statement = sqlite.prepare(sql);
      statement.all(...params);
      const samples = [];
      for (let i = 0; i < runs; i++) {
        const t = performance.now();
        statement.all(...params);
        samples.push(performance.now() - t);
      }
      c.floor = percentiles(samples);
      c.exportRows = countExportRows(sqlite, c);
    }
  } finally {
    sqlite.close();
  }
}

/** The export's rows for the window, every page (pages of 5,000), counted. */
function countExportRows(sqlite, c) {
  let count = 0;
  for (let after = null; ; ) {
    const q = { ...input(c), after, limit: 5000, now: c.window.end + 1 };
    const { sql, params } = mergedPullRequestsQuery(q);
    const page = sqlite.prepare(sql).all(...params);
    count += page.length;
    if (page.length < 5000) return count;
    const last = page[page.length - 1];
    after = { mergedAt: last.mergedAt, id: last.id };
  }
}

/** Each case once (checked), then interleaved with /readyz for `span` (bench-common `span`). */
export async function summaryHttp(server, cases, { headers, span, log }) {
  for (const c of cases) {
    const res = await fetch(`${server.url}/api/analytics/v1/summary?${c.query}`, { headers });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`summary, ${c.name} answered ${res.status}: ${body.slice(0, 500)}`);
    const { totals, groups } = JSON.parse(body);
    // The default window ends when the Worker answers, a little after the file's count was taken.
    const exact = c.query.includes("startDate")
      ? totals.pullRequests === c.exportRows
      : Math.abs(totals.pullRequests - c.exportRows) <= 2;
    if (!exact) throw new Error(`summary, ${c.name}: ${totals.pullRequests} pull requests, the export lists ${c.exportRows}`);
    c.groups = groups.length;
    c.pullRequests = totals.pullRequests;
    c.rowsRead = Number(res.headers.get("X-Debug-Rows-Read"));
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
}

export function summaryReport(cases) {
  const report = table(
    [
      "summary case",
      "pull requests",
      "groups",
      "rows read",
      "SQLite p50 ms",
      "c=1 p50 ms",
      "c=1 p99 ms",
      "c=1 p50 vs /readyz, interleaved (ms / ms)",
      "target",
    ],
    cases.map((c) => [
      c.name,
      c.pullRequests.toLocaleString("en"),
      String(c.groups),
      c.rowsRead.toLocaleString("en"),
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
    const ratio = c.paired.endpoint / one.paired.endpoint;
    const perRow = ratio / (c.pullRequests / Math.max(1, one.pullRequests));
    targets.push(
      `- ${ratio <= 1.2 ? "met" : "MISSED"}: ${c.name} within 1.2x of one repository (${fmt(c.paired.endpoint)} vs ${fmt(one.paired.endpoint)} ms, ` +
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
export function dashboardFloor(file, now, { runs }) {
  const sqlite = new DatabaseSync(file, { readOnly: true });
  const groupBys = ["week", "repo", "author"];
  const sortRows = (rows) => rows.map((r) => JSON.stringify(r)).sort();
  try {
    return [30, 365].map((days) => {
      const scope = {
        orgKey: "bigco",
        repoKeys: null,
        authorKeys: null,
        accessibleRepoKeys: null,
        start: now - days * DAY,
        end: now,
      };
      const singles = groupBys.map((groupBy) => {
        const { sql, params } = summaryStatement({ ...scope, groupBy });
        return { statement: sqlite.prepare(sql), params };
      });
      const together = summaryStatement({ ...scope, groupBys });
      const combined = { statement: sqlite.prepare(together.sql), params: together.params };
      const separate = singles.map(({ statement, params }, i) =>
        statement.all(...params).map(({ grouping: _, ...r }) => ({ grouping: i, ...r })),
      );
      const one = combined.statement.all(...combined.params);
      if (JSON.stringify(sortRows(separate.flat())) !== JSON.stringify(sortRows(one)))
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
      return { days, three: percentiles(threeSamples), one: percentiles(oneSamples) };
    });
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
