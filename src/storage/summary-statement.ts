import { DAY_MS } from "../lib/time";
import type { SummaryGroupBy } from "../schemas/analytics-summary";
import { unionAll } from "./analytics";
import { findingsInWindowSql, fixedOf, flaggedOf } from "./pull-request-figures";
import { GAP_TIER_BOUNDS_MS, LAST_GAP_TIER } from "./review-span";
import { BLOCK_JSON, mergeEdgeSql, PULL_REQUEST_HI, PULL_REQUEST_LO, wholeMonths } from "./summary-days";
import { EDGE_CORRECTED, EDGE_OUTSIDE, EDGE_PARTIAL, type KnownEdge } from "./summary-edges";
import {
  BLOCK,
  type BlocksServed,
  blockColumns,
  bucketed,
  EDGE_SQL,
  type GroupingsQuery,
  KNOWN_USED,
  MISSING,
  MISSING_MONTH,
  MONTH_BLOCK,
  REMOVED_FROM,
  STALE,
  SUMMARY_LIMITS,
  SUMMED,
  type SummaryLimits,
  type SummaryQuery,
} from "./summary-rows";

/**
 * The summary's one statement (`summaryStatement`): its SQL. What it is asked and the rows it
 * answers are `summary-rows.ts`'s; `analytics-summary.ts` runs it, `summary-assemble.ts` adds its
 * rows up.
 */

const DAY = DAY_MS;

/** The first UTC day (a day number) of the calendar month of UTC day `day` (as `summary-days.ts` `monthStartDay`). */
const MONTH_OF = (day: string) => `CAST(strftime('%s', (${day}) * 86400, 'unixepoch', 'start of month') AS INTEGER) / 86400`;

/** Whole UTC days since 1970 of an instant in ms, rounded down also before 1970 (SQLite's `/` truncates). */
const DAY_OF = (ms: string) => `((${ms} - ((${ms} % ${DAY}) + ${DAY}) % ${DAY}) / ${DAY})`;

/**
 * The group key, as SQL: `row` groups a row, `key` (of the group's `row` value) is the key the
 * answer shows. The first day of the merge's UTC day, ISO week (Monday; 1970-01-01 was a Thursday,
 * weekday (d + 3) mod 7 from Monday, as `rules/analytics-summary.ts` computes it) or month, or the
 * repository or author as the row spells it. Integer day arithmetic, so a merge a millisecond
 * before midnight stays on its day. Days and weeks group by their day number and are spelled once
 * per group: `date()` on every row cost as much as the rest of the sums.
 */
function groupKeySql(groupBy: SummaryGroupBy, ms = "m"): { row: string; key: (k: string) => string } {
  const day = DAY_OF(ms);
  const asDate = (k: string) => `date(${k} * 86400, 'unixepoch')`;
  const same = (k: string) => k;
  switch (groupBy) {
    case "day":
      return { row: day, key: asDate };
    case "week":
      return { row: `(${day} - ((${day} + 3) % 7 + 7) % 7)`, key: asDate };
    case "month":
      return { row: `strftime('%Y-%m-01', ${day} * 86400, 'unixepoch')`, key: same };
    case "repo":
      return { row: "repo", key: same };
    case "author":
      return { row: "author", key: same };
  }
}

/** The columns of a pull request the summary reads, all of them in `pull_requests_summary_walk`. */
const COLUMNS = `p.id AS pid, p.repo AS repo, p.author AS author, p.merged_at AS m, p.created_at AS c,
    p.first_reviewed_at AS f, p.last_reviewed_at AS l, p.lines_added AS la, p.lines_deleted AS ld, p.ai_lines AS ai,
    p.posted_findings AS pf, p.fixed_findings AS xf, p.first_finding_at AS ff, p.last_finding_at AS lf`;

/**
 * The statement and its parameters (shared with the benchmark and the tests). The rows are the
 * export's (`storage/analytics.ts`): merged, in the organization (and repository), accessible, and
 * with a completed review in [start, end]. The window's full days served by blocks (`served`: chosen
 * by the statement, which then sends their blocks; none; or read before it in slices, which it
 * checks and answers STALE for any gone since) are not walked: a block whose day holds pull
 * requests with a review or finding outside the window is served with corrections (`CORRECTIONS`,
 * rows `REMOVED_FROM`: those pull requests alone are checked, on the day's index range). The rest
 * are found the way the
 * export's walk finds them, as disjoint index ranges of the review span (`review-span.ts`): merged
 * inside the window, one range per day not served; merged before it, one range per gap tier of the
 * last review after the merge; merged after it, one per tier of the first review before it. The
 * full days without a block come back as MISSING.
 *
 * What a row costs: the merges inside the window are walked on `pull_requests_summary_walk`,
 * which holds every column the summary reads, so such a row costs its index entry and no table row
 * (with a repository filter, each listed repository's walk, one range per day its block does not
 * serve, and the table row). The rows merged outside the window, found on the tier walks, read
 * their table row. A
 * candidate settles from its own columns unless its span crosses an edge of the window:
 * - reviews: its first or last completed review lies in the window, or both lie on one side; only
 *   one reviewed on both sides of the window, not inside, reads its reviews;
 * - findings (`pull-request-figures.ts`): its posted findings lie wholly inside the window (the two
 *   counts), or wholly outside (none); only one whose findings straddle an edge reads them.
 * Then per group the count of candidates, the sums of those that qualify and their durations as
 * JSON arrays in no order: the medians are selected by the caller (`assemble`), since every ordered
 * pass in SQL reads the rows again (D1 counts each step of a cursor, a sorter's included, as a row
 * read). One `GROUP BY` sorts the walked rows (about two rows read per row; few once blocks serve
 * the window), each group split into `arrayParts` parts by id. Each walk stops after `maxRows + 1`
 * candidates.
 */
/** Day blocks of at most this many pull requests are folded, this many days to a row (`foldedBlocks`). */
const FOLD_MAX_PULL_REQUESTS = 100;
const FOLD_DAYS = 64;

/**
 * The served day blocks of a request that also reads month blocks (an unfiltered time grouping of
 * listed repositories): when they are read as durations (`few`), the small ones are folded into rows
 * of a month block's shape (`MonthBlock`: at most FOLD_DAYS days of at most FOLD_MAX_PULL_REQUESTS
 * pull requests each, so a row stays far below D1's 1 MB), which the Worker adds up as it does a
 * month; every other block is a row of its own, as without months. Each row D1 sends costs the
 * Worker an object and two parses, and a year of a listed repository has dozens of day blocks
 * beside its months.
 */
function foldedBlocks(few: string): string {
  // No ORDER BY in the aggregates (each would sort the group's rows again): every aggregate of a
  // group sees its rows in the same order, so the days, sums and durations stay aligned, and a
  // month block's days need not be in order (`addMonth`).
  const element = (array: string) => `group_concat(substr(${array}, 2, length(${array}) - 2), ',')`;
  const fold = `(f.few AND v.n <= ${FOLD_MAX_PULL_REQUESTS})`;
  const folded = `MAX(${fold})`;
  const columns = BLOCK_JSON.map((name) =>
    name === "totals"
      ? `IIF(${folded}, NULL, MIN(s.totals))`
      : name === "counts"
        ? "IIF(MAX(f.few), NULL, MIN(s.counts))"
        : name === "durations"
          ? `IIF(MAX(f.few) AND NOT ${folded}, MIN(s.durations), NULL)`
          : "NULL",
  ).join(", ");
  const none = ["0", ...SUMMED.slice(1).map(() => "0"), "NULL", "NULL"].join(", ");
  return `SELECT IIF(${folded}, ${MONTH_BLOCK}, ${BLOCK}), MIN(v.day), SUM(v.n), ${none}, ${columns}, MIN(s.version), v.rk,
  IIF(${folded}, json('[' || json_group_array(v.day) || ',[' || ${element("s.totals")} || '],['
    || ${element("s.durations -> 0")} || '],[' || ${element("s.durations -> 1")} || ']]'), NULL)
FROM (SELECT ${few} AS few) AS f CROSS JOIN served AS v
CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = v.rk AND s.day = v.day
WHERE v.n > 0
GROUP BY v.rk, ${fold}, IIF(${fold}, v.day / ${FOLD_DAYS}, v.day)`;
}

/** The window's whole UTC calendar months (`[first day, last day]`), of its full days. */
function monthsOf(q: { start: number; end: number }): [number, number][] {
  const first = Math.ceil(q.start / DAY);
  const last = Math.floor((q.end + 1) / DAY) - 1;
  return last >= first ? wholeMonths(first, last) : [];
}

/**
 * A pull request `p` that straddles an edge of the window (`?2`, `?3`): a review or posted finding
 * outside it. Its day's block counts it as if all of them were inside.
 */
const STRADDLES = `(${PULL_REQUEST_LO} < ?2 OR ${PULL_REQUEST_HI} > ?3)`;

/**
 * Whether a stored block (columns prefixed `table`) can serve its full day of the window: it has
 * no pull request, or its every pull request's reviews and findings lie in the window, or, with
 * `corrections`, it has its content (not a marker: `lo` null) and is served with the corrections of
 * its straddling pull requests (`STRADDLED`).
 */
export const SERVABLE = (table: string, corrections: boolean, count = `${table}pull_requests`) =>
  corrections ? `(${count} = 0 OR ${table}lo IS NOT NULL)` : `(${count} = 0 OR (${table}lo >= ?2 AND ${table}hi <= ?3))`;

/** Whether a served block needs corrections: some of its pull requests straddle an edge of the window. */
const STRADDLED = (table: string, count = `${table}pull_requests`) =>
  `NOT (${count} = 0 OR (${table}lo >= ?2 AND ${table}hi <= ?3))`;

/**
 * A walked candidate's exact check (it has a completed review in the window: its first or last
 * does, or one between them, read only when both lie outside), and its posted findings and
 * AI-addressed ones in the window (its own columns unless they straddle an edge), over `COLUMNS`.
 */
const CHECKED = `(f >= ?2 OR l <= ?3 OR EXISTS (SELECT 1 FROM reviews AS r
      WHERE r.pr_id = pid AND r.status = 'completed' AND r.completed_at BETWEEN ?2 AND ?3))`;
/**
 * Both counts of findings in one value (`pull-request-figures.ts`), so that a candidate whose
 * findings straddle an edge reads them in one range of `findings_posted_by_pr_outcome` instead of
 * two seeks (a quarter of the corrections' time on the 1M file).
 */
const FINDINGS = findingsInWindowSql({ id: "pid", first: "ff", last: "lf", posted: "pf", fixed: "xf" });

/**
 * Per straddling pull request of a day served with corrections (`corrections`, walked on its day's
 * index range with the filters but not the window's span): what its block counted of it less what
 * the window counts. `gone`: the window does not list it (no completed review in the window), so
 * its block's count, lines, AI lines and durations are taken away; `fl`, `fx`: its block's findings
 * (all posted ones) less the window's, when it is listed; `cand`: whether the window's walk would
 * have found it (its span meets the window), for the candidates' count.
 */
const CORRECTIONS = (walk: string) => `SELECT pid, repo, author, m, la, ld, ai, tf, tm, cand, NOT ok AS gone,
    IIF(ff IS NULL, 0, pf) - IIF(ok, ${flaggedOf("fw")}, 0) AS fl, IIF(ff IS NULL, 0, xf) - IIF(ok, ${fixedOf("fw")}, 0) AS fx
  FROM (
    SELECT *, f - c AS tf, m - c AS tm, cand AND ${CHECKED} AS ok, CASE WHEN cand THEN ${FINDINGS} ELSE 0 END AS fw
    FROM (SELECT *, f <= ?3 AND l >= ?2 AS cand FROM (${walk}) LIMIT -1 OFFSET 0)
    LIMIT -1 OFFSET 0
  )`;

/** Blocks per bound part of the list of blocks read before the statement: about 40 bytes each. */
const READ_LIST_PART = 10_000;

export function summaryStatement(
  q: SummaryQuery | GroupingsQuery,
  limits: SummaryLimits = SUMMARY_LIMITS,
  served: BlocksServed = "chosen here",
  edges: readonly KnownEdge[] | null = null,
): { sql: string; params: (string | number)[] } {
  const groupBys = "groupBys" in q ? q.groupBys : [q.groupBy];
  if (groupBys.length === 0) throw new RangeError("a summary needs at least one grouping");
  for (const [name, value, min] of [
    ["maxRows", limits.maxRows, 0],
    ["arrayParts", limits.arrayParts, 1],
    ["bucketsFrom", limits.bucketsFrom, 0],
    ["bucketsPerBlock", limits.bucketsPerBlock, 0],
  ] as const)
    if (!Number.isSafeInteger(value) || value < min)
      throw new RangeError(`${name} must be a whole number of at least ${min}, got ${value}`);
  const params: (string | number)[] = [q.orgKey, q.start, q.end]; // ?1 ?2 ?3
  const bind = (value: string | number): string => `?${params.push(value)}`;
  // Edge days apply to the full statement without month blocks (`withMonths` serves no corrections).
  const edgesOn =
    edges !== null &&
    served !== "walk" &&
    !(q.repoKeys !== null && served === "chosen here" && bucketed({ ...q, groupBys }) && monthsOf(q).length > 0);
  // Section 21's lists, each bound once as JSON: the repositories' window walk takes the listed
  // ones from the repository index, the authors filter the rows once found (the summary walk holds
  // the author; the tier walks' rows are filtered after their table row is read). One repository
  // is bound as itself: an IN over json_each in each of the ranges cost it about 1 ms more to compile.
  const named = q.repoKeys === null ? null : [...new Set(q.repoKeys)];
  const repo =
    named === null
      ? null
      : named.length === 1
        ? `p.repo_key = ${bind(named[0] as string)}`
        : `p.repo_key IN (SELECT value FROM json_each(${bind(JSON.stringify(named))}))`;
  const authors = q.authorKeys === null ? null : bind(JSON.stringify([...new Set(q.authorKeys)]));
  const byAuthor = authors ? [`lower(p.author) IN (SELECT value FROM json_each(${authors}))`] : [];
  const access = q.accessibleRepoKeys === null ? null : bind(JSON.stringify(q.accessibleRepoKeys));
  const excluded = q.excludedRepoKeys && q.excludedRepoKeys.length > 0 ? bind(JSON.stringify(q.excludedRepoKeys)) : null;

  // Every range takes the filters here (the author's only where the range reads the author); the
  // listed repositories' walk of the window names its repository itself.
  // `windowed` false: every merged and reviewed pull request, as a day block holds them (`CORRECTIONS`).
  const where = (conditions: string[], listed = true, windowed = true): string =>
    [
      "p.org_key = ?1",
      ...conditions,
      ...(repo && listed ? [repo] : []),
      ...(access ? [`p.repo_key IN (SELECT value FROM json_each(${access}))`] : []),
      ...(excluded ? [`p.repo_key NOT IN (SELECT value FROM json_each(${excluded}))`] : []),
      ...(windowed
        ? ["p.first_reviewed_at <= ?3", "p.last_reviewed_at >= ?2"]
        : ["p.merged_at IS NOT NULL", "p.first_reviewed_at IS NOT NULL"]),
    ].join(" AND ");
  const tiers = Array.from({ length: LAST_GAP_TIER + 1 }, (_, tier) => ({ tier, bound: GAP_TIER_BOUNDS_MS[tier] }));
  // The merges outside the window, per gap tier (`review-span.ts`): one index range per tier,
  // written as one join over the tiers' bounds (bound once, as JSON) for each side, which compiles
  // in a fraction of sixteen ranges' time (the statement may be compiled for every request). The
  // last tier has no bound: the largest safe integer stands for it.
  const tierBounds = bind(
    JSON.stringify(tiers.map(({ tier, bound }) => [tier, bound === undefined ? Number.MAX_SAFE_INTEGER : bound])),
  );
  // With edge days (`summary-edges.ts`): the day a merge's block keeps it under (the organization's,
  // or its listed repository's), and those the isolate keeps (`known_out`) left to the Worker.
  const edgeKey = repo ? "p.repo_key" : "''";
  const tierJoin = (index: string, conditions: string[]) =>
    `SELECT p.id AS id${edgesOn ? `, ${DAY_OF("p.merged_at")} AS day, ${edgeKey} AS rk` : ""} FROM (SELECT value ->> 0 AS tier, value ->> 1 AS bound FROM json_each(${tierBounds})) AS t
  CROSS JOIN pull_requests AS p INDEXED BY ${index} ON ${where([
    ...conditions,
    ...(edgesOn
      ? [`NOT EXISTS (SELECT 1 FROM known_walked AS k WHERE k.rk = ${edgeKey} AND k.day = ${DAY_OF("p.merged_at")})`]
      : []),
  ])}`;
  const outside = [
    tierJoin("pull_requests_after_merge_walk", [
      "p.after_merge_tier = t.tier",
      "p.merged_at >= ?2 - t.bound",
      "p.merged_at < ?2",
    ]),
    tierJoin("pull_requests_before_merge_walk", [
      "p.before_merge_tier = t.tier",
      "p.merged_at > ?3",
      "p.merged_at <= ?3 + t.bound",
    ]),
  ];
  const viaIds = (ids: string) =>
    `SELECT ${COLUMNS} FROM (SELECT id FROM (${ids}) LIMIT -1) AS t JOIN pull_requests AS p ON p.id = t.id${
      byAuthor.length > 0 ? ` WHERE ${byAuthor.join(" AND ")}` : ""
    }`;
  // The window's merges on the days no block serves (`walked`, below), one index range per day: of
  // the organization's summary walk, or with a repository filter of each listed repository's walk
  // (a listed repository's day is served by that repository's block, `repo_key`; the
  // organization's blocks hold every repository of their day).
  const dayRange = [`p.merged_at >= MAX(w.d * ${DAY}, ?2)`, `p.merged_at <= MIN(w.d * ${DAY} + ${DAY - 1}, ?3)`];
  // The merges of the days listed in `days` (a CTE of `rk, d`), one index range per day.
  const dayWalk = (days: string, conditions: string[], windowed = true) =>
    repo
      ? `SELECT ${COLUMNS} FROM (SELECT rk, d FROM ${days} ORDER BY rk, d LIMIT -1) AS w
    CROSS JOIN pull_requests AS p INDEXED BY pull_requests_repo_merged_walk
    ON ${where(["p.repo_key = w.rk", ...dayRange, ...conditions], false, windowed)}`
      : `SELECT ${COLUMNS} FROM (SELECT d FROM ${days} ORDER BY d LIMIT -1) AS w
    CROSS JOIN pull_requests AS p INDEXED BY pull_requests_summary_walk ON ${where([...dayRange, ...conditions], true, windowed)}`;
  const walkOnly = served === "walk";
  // Per row: the exact check and the findings in the window (see above), from the candidate's columns.
  const metrics = `pid, repo, author, m, la, ld, ai, f - c AS tf, m - c AS tm, ${CHECKED} AS ok, ${FINDINGS} AS fw`;
  // Per group: its candidates, and the sums and durations of those that qualify.
  const aggregates = [
    "COUNT(*) AS candidates",
    "COUNT(*) FILTER (WHERE ok) AS pullRequests",
    ...[
      ["la", "linesAdded"],
      ["ld", "linesDeleted"],
      [flaggedOf("fw"), "serviceIssuesFlagged"],
      [fixedOf("fw"), "serviceIssuesFixed"],
      ["ai", "aiLinesAuthored"],
    ].map(([column, name]) => `COALESCE(SUM(${column}) FILTER (WHERE ok), 0) AS ${name}`),
    "COUNT(ai) FILTER (WHERE ok) AS pullRequestsWithAiData",
    ...["tf", "tm"].map((column) => `json_group_array(${column}) FILTER (WHERE ok AND ${column} IS NOT NULL) AS ${column}0`),
  ].join(",\n  ");
  // `LIMIT -1 OFFSET 0` keeps the metrics from being flattened into the grouping: flattened, each
  // aggregate that reads `ok` or `fw` computed its expression (subqueries included) again,
  // nine times a row; now once (the 30-day window's statement 20 -> 17 ms on the 1M file).
  const bounded = (rows: string) => `SELECT ${metrics} FROM (${rows} LIMIT ${limits.maxRows + 1}) LIMIT -1 OFFSET 0`;

  // The rows found once, each row once per grouping (k0, k1, ...), and one GROUP BY, which sorts
  // them; each group split in parts by id. Then the served blocks and the missing days.
  const groupKeys = groupBys.map((g) => groupKeySql(g));
  const keyed = groupKeys.map((key, i) => `SELECT ${i} AS grp, ${key.row} AS k, * FROM metrics`).join("\n  UNION ALL\n  ");
  const keyOf = (k: string) => `CASE grp ${groupKeys.map((key, i) => `WHEN ${i} THEN ${key.key(k)}`).join(" ")} END`;
  const grouped = `SELECT grp AS grouping, ${keyOf("k")} AS key, ${aggregates}, ${BLOCK_JSON.map((c) => `NULL AS ${c}`).join(", ")}, NULL AS version, NULL AS rk, NULL AS days
FROM (${keyed})
GROUP BY grp, k${limits.arrayParts > 1 ? `, pid % ${limits.arrayParts}` : ""}`;
  // A statement that walks every merge of the window and serves no block (`served` "walk": a
  // window known to hold few pull requests, `analytics-summary.ts`): a fraction of the full
  // statement's text, which D1 may compile for every request.
  if (walkOnly) {
    const inWindow = `SELECT ${COLUMNS} FROM pull_requests AS p INDEXED BY ${repo ? "pull_requests_repo_merged_walk" : "pull_requests_summary_walk"}
    WHERE ${where(["p.merged_at >= ?2", "p.merged_at <= ?3", "p.merged_at IS NOT NULL", ...byAuthor])}`;
    return {
      sql: `WITH metrics AS (
  ${bounded(`SELECT * FROM (${inWindow}\n  UNION ALL\n  ${viaIds(unionAll(outside))})`)}
)
${grouped}`,
      params,
    };
  }

  const blocksOk = served === "none" ? "0" : "1";
  const corrections = limits.corrections;
  // Whose blocks: the listed repositories' (each its own), or the organization's ('').
  const keys =
    named === null
      ? `keys(rk) AS (SELECT '')`
      : `keys(rk) AS (SELECT DISTINCT value FROM json_each(${bind(JSON.stringify(named))}))`;
  const read = Array.isArray(served) ? served : null;
  const counted = bucketed({ ...q, groupBys });
  // A listed repository's whole months are served by its month blocks (durations per day, for a
  // time grouping without a filter: `bucketed`) when the statement chooses its blocks itself;
  // their days are then neither read as day blocks nor walked.
  const months = named !== null && read === null && served === "chosen here" && counted ? monthsOf(q) : [];
  const withMonths = months.length > 0;
  // The blocks read before this statement (sliced; checked here), or the columns of the blocks it reads.
  // Bound in parts of at most READ_LIST_PART blocks: a long window of many listed repositories
  // serves tens of thousands, and one bound value should stay well under D1's 1 MB.
  const readLists: string[] = [];
  for (let i = 0; read !== null && i < read.length; i += READ_LIST_PART)
    readLists.push(bind(JSON.stringify(read.slice(i, i + READ_LIST_PART))));
  if (read !== null && read.length === 0) readLists.push(bind("[]"));
  const readValues = unionAll(readLists.map((list) => `SELECT value FROM json_each(${list})`));
  const readCount = readLists.map((list) => `json_array_length(${list})`).join(" + ");
  // A request served from counts reads the durations instead when its blocks hold few pull
  // requests, in all or each on average.
  const few = `(SELECT COALESCE(SUM(n), 0) < ${limits.bucketsFrom} OR COALESCE(SUM(n), 0) < ${limits.bucketsPerBlock} * COUNT(*) FROM served)`;
  const blockSelect = blockColumns({ ...q, groupBys })
    .map(([name, needed]) =>
      counted && name === "counts"
        ? `IIF(${few}, NULL, s.counts)`
        : counted && name === "durations"
          ? `IIF(${few}, s.durations, NULL)`
          : needed
            ? `s.${name}`
            : "NULL",
    )
    .join(", ");

  // The days: from the first to the last merge of the organization in the window (two index
  // seeks, so an endless window costs only the days that hold merges). A full day of the window
  // (from its first to its last millisecond) is served by its block when every review and
  // finding of its pull requests lies in the window (or it has none), or, with corrections, when
  // it has its content (not a marker); and the served blocks hold at most
  // BLOCKS_MAX_PULL_REQUESTS. Every other day is walked. A full day without a block is reported
  // (MISSING) for the caller to build. A listed repository's month blocks (`withMonths`) are served
  // without corrections.
  const withinBound = withMonths
    ? `(SELECT COALESCE(SUM(n), 0) FROM usable) + (SELECT COALESCE(SUM(n), 0) FROM usable_months) <= ${limits.blocksMax}`
    : `(SELECT SUM(n) FROM usable) <= ${limits.blocksMax}`;
  const days = `${keys},
bounds(lo, hi) AS (SELECT ${mergeEdgeSql("MIN")}, ${mergeEdgeSql("MAX")}),
days(d, last${withMonths ? ", mo" : ""}) AS (
  SELECT ${DAY_OF("lo")}, ${DAY_OF("hi")}${withMonths ? `, ${MONTH_OF(DAY_OF("lo"))}` : ""} FROM bounds WHERE lo IS NOT NULL
  UNION ALL SELECT d + 1, last${withMonths ? `, ${MONTH_OF("d + 1")}` : ""} FROM days WHERE d < last
),
full_days AS (SELECT d${withMonths ? ", mo" : ""} FROM days WHERE d * ${DAY} >= ?2 AND d * ${DAY} + ${DAY - 1} <= ?3),
${
  withMonths
    ? `full_months(mo, last) AS MATERIALIZED (SELECT value ->> 0, value ->> 1 FROM json_each(${bind(JSON.stringify(months))})),
usable_months AS MATERIALIZED (
  SELECT k.rk AS rk, m.mo AS mo, m.last AS last, s.pull_requests AS n
  FROM keys AS k CROSS JOIN full_months AS m CROSS JOIN summary_months AS s ON s.org_key = ?1 AND s.repo_key = k.rk AND s.month = m.mo
  WHERE s.pull_requests = 0 OR (s.lo >= ?2 AND s.hi <= ?3)
),
month_days AS MATERIALIZED (SELECT d, mo, d * ${DAY} >= ?2 AND d * ${DAY} + ${DAY - 1} <= ?3 AS full FROM days),
open_days AS MATERIALIZED (
  SELECT o.rk AS rk, x.d AS d, x.full AS full FROM (
    SELECT k.rk AS rk, a.mo AS mo FROM keys AS k CROSS JOIN (SELECT DISTINCT mo FROM month_days) AS a
    WHERE NOT EXISTS (SELECT 1 FROM usable_months AS u WHERE u.rk = k.rk AND u.mo = a.mo)
  ) AS o CROSS JOIN month_days AS x ON x.mo = o.mo
),
usable AS MATERIALIZED (
  SELECT w.rk AS rk, s.day AS day, s.pull_requests AS n
  FROM open_days AS w CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = w.rk AND s.day = w.d
  WHERE w.full AND (s.pull_requests = 0 OR (s.lo >= ?2 AND s.hi <= ?3))
),`
    : `stored AS MATERIALIZED (
  SELECT k.rk AS rk, s.day AS day, s.pull_requests AS n, s.lo AS lo, s.hi AS hi
  FROM keys AS k CROSS JOIN full_days AS f CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = k.rk AND s.day = f.d
),`
}
${
  read === null
    ? `${withMonths ? "" : `usable AS MATERIALIZED (SELECT rk, day, n, ${STRADDLED("", "n")} AS corr FROM stored WHERE ${blocksOk} AND ${SERVABLE("", corrections, "n")}),\n`}${
        withMonths
          ? `within AS MATERIALIZED (SELECT ${withinBound} AS ok),
served AS MATERIALIZED (SELECT rk, day, n FROM usable WHERE (SELECT ok FROM within)),
served_months AS MATERIALIZED (SELECT rk, mo, last, n FROM usable_months WHERE (SELECT ok FROM within)),`
          : `served AS MATERIALIZED (SELECT rk, day, n, corr FROM usable WHERE ${withinBound}),`
      }`
    : `served AS MATERIALIZED (
  SELECT s.repo_key AS rk, s.day AS day, s.pull_requests AS n, ${STRADDLED("s.")} AS corr FROM (${readValues}) AS j
  CROSS JOIN summary_days AS s
  ON s.org_key = ?1 AND s.repo_key = j.value ->> 0 AND s.day = j.value ->> 1 AND s.version = j.value ->> 2
),`
}
walked AS (${
    withMonths
      ? `
  SELECT rk, d FROM open_days AS o WHERE NOT EXISTS (SELECT 1 FROM served AS v WHERE v.rk = o.rk AND v.day = o.d)
  UNION ALL
  SELECT u.rk, x.d FROM within AS w CROSS JOIN usable_months AS u CROSS JOIN month_days AS x ON x.mo = u.mo WHERE NOT w.ok`
      : `
  SELECT k.rk AS rk, d FROM keys AS k CROSS JOIN days WHERE NOT EXISTS (SELECT 1 FROM served AS v WHERE v.rk = k.rk AND v.day = d)${
    edgesOn ? "\n    AND NOT EXISTS (SELECT 1 FROM known_part AS e WHERE e.rk = k.rk AND e.day = d)" : ""
  }
),
corrected AS (SELECT rk, day AS d FROM served AS v WHERE corr${
          edgesOn ? " AND NOT EXISTS (SELECT 1 FROM known_ok AS k WHERE k.rk = v.rk AND k.day = v.day)" : ""
        }`
  }
)`;
  // The window's merges on the days no block serves.
  const inWindow = dayWalk("walked", byAuthor);
  // Per group, what the served blocks counted of their pull requests that straddle an edge of the
  // window less what the window counts of them (`CORRECTIONS`): the caller takes it away
  // (`REMOVED_FROM`). Few rows: the straddling pull requests of the window's edge days, each
  // checked once.
  const removedKeyed = groupKeys.map((key, i) => `SELECT ${i} AS grp, ${key.row} AS k, * FROM removed`).join("\n  UNION ALL\n  ");
  const removal = `SELECT ${REMOVED_FROM} - grp AS grouping, ${keyOf("k")} AS key, COUNT(*) - SUM(cand) AS candidates,
  COUNT(*) FILTER (WHERE gone), COALESCE(SUM(la) FILTER (WHERE gone), 0), COALESCE(SUM(ld) FILTER (WHERE gone), 0),
  SUM(fl), SUM(fx), COALESCE(SUM(ai) FILTER (WHERE gone), 0), COUNT(ai) FILTER (WHERE gone),
  json_group_array(tf) FILTER (WHERE gone AND tf IS NOT NULL), json_group_array(tm) FILTER (WHERE gone AND tm IS NOT NULL),
  ${BLOCK_JSON.map(() => "NULL").join(", ")}, NULL, NULL, NULL
FROM (${removedKeyed})
GROUP BY grp, k`;
  const noBlock = BLOCK_JSON.map(() => "NULL").join(", ");
  const none = ["0 AS pullRequests", ...SUMMED.slice(1).map((name) => `0 AS ${name}`), "NULL AS tf0", "NULL AS tm0"].join(", ");

  const terms = withMonths
    ? [
        grouped,
        foldedBlocks(few),
        `SELECT ${MISSING}, w.d, 0, ${none}, ${noBlock}, NULL, w.rk, NULL FROM open_days AS w
WHERE w.full AND NOT EXISTS (SELECT 1 FROM summary_days AS s WHERE s.org_key = ?1 AND s.repo_key = w.rk AND s.day = w.d)`,
        `SELECT ${MONTH_BLOCK}, v.mo, v.n, ${none}, ${noBlock}, NULL, v.rk, s.days
FROM served_months AS v CROSS JOIN summary_months AS s ON s.org_key = ?1 AND s.repo_key = v.rk AND s.month = v.mo WHERE v.n > 0`,
        `SELECT ${MISSING_MONTH}, m.mo, 0, ${none}, ${noBlock}, NULL, k.rk, NULL FROM full_months AS m CROSS JOIN keys AS k
WHERE NOT EXISTS (SELECT 1 FROM summary_months AS s WHERE s.org_key = ?1 AND s.repo_key = k.rk AND s.month = m.mo)`,
      ]
    : read === null
      ? [
          grouped,
          `SELECT ${BLOCK}, v.day, v.n, ${none}, ${blockSelect}, s.version, v.rk, NULL
FROM served AS v CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = v.rk AND s.day = v.day WHERE v.n > 0`,
          `SELECT ${MISSING}, d, 0, ${none}, ${noBlock}, NULL, k.rk, NULL FROM full_days CROSS JOIN keys AS k
WHERE (k.rk, d) NOT IN (SELECT rk, day FROM stored)`,
          removal,
        ]
      : [
          grouped,
          `SELECT ${STALE}, ${readCount} - (SELECT COUNT(*) FROM served), 0, ${none}, ${noBlock}, NULL, NULL, NULL`,
          `SELECT ${MISSING}, d, 0, ${none}, ${noBlock}, NULL, k.rk, NULL FROM full_days CROSS JOIN keys AS k
WHERE (k.rk, d) NOT IN (SELECT rk, day FROM stored)`,
          removal,
        ];
  const removedRows = withMonths
    ? ""
    : // Read once per grouping: kept in a table for several, run where read for one (1 ms of a year by author).
      `removed AS ${groupKeys.length > 1 ? "" : "NOT "}MATERIALIZED (\n  ${CORRECTIONS(dayWalk("corrected", [STRADDLES, ...byAuthor], false))}\n),\n`;
  // Edge days (`summary-edges.ts`): those the isolate keeps whose blocks are stored as it keeps
  // them (`known_ok`), of which those wholly outside the window (`known_out`); the merges outside
  // the window found once (`outside_ids`), for the metrics and for the days they were found on.
  let edgeCtes = "";
  let outsideIds = viaIds(unionAll(outside));
  if (edgesOn && !withMonths) {
    const known = bind(JSON.stringify(edges));
    const outsideWindow = (day: string) => `((${day} + 1) * ${DAY} <= ?2 OR ${day} * ${DAY} > ?3)`;
    // The day the window starts in, past its first millisecond, when the window ends after that day.
    const partial = (day: string) =>
      `(${day} * ${DAY} < ?2 AND ${day} * ${DAY} + ${DAY - 1} >= ?2 AND ${day} * ${DAY} + ${DAY - 1} < ?3)`;
    // Kept days whose blocks are stored as kept; of them, those the walks leave to the Worker: wholly
    // outside the window (its merges found by the gap tiers), and the first day when partial (its
    // merges from the start on, walked, and those before it, found by the tiers).
    edgeCtes = `known_ok AS MATERIALIZED (
  SELECT s.repo_key AS rk, s.day AS day, ${outsideWindow("s.day")} AS out, ${partial("s.day")} AS part FROM (
    SELECT value ->> 0 AS rk, value ->> 1 AS day, value ->> 2 AS version, value ->> 3 AS ev FROM json_each(${known})
  ) AS j CROSS JOIN summary_days AS s
  ON s.org_key = ?1 AND s.repo_key = j.rk AND s.day = j.day AND s.version = j.version AND s.edge_version = j.ev
),
known_walked AS MATERIALIZED (SELECT rk, day FROM known_ok WHERE out OR part),
known_part AS MATERIALIZED (SELECT rk, day FROM known_ok WHERE part),
outside_ids AS MATERIALIZED (SELECT * FROM (${unionAll(outside)}) LIMIT ${limits.maxRows + 1}),
`;
    outsideIds = viaIds("SELECT id FROM outside_ids");
    // What the Worker counts (KNOWN_USED) and what the statement checked itself (EDGE_SQL), per day
    // and use (`summary-edges.ts`), in one term.
    const first = DAY_OF("?2");
    terms.push(`SELECT kind, day, use, ${none}, ${noBlock}, version, rk, NULL FROM (
  SELECT ${KNOWN_USED} AS kind, e.day AS day, ${EDGE_CORRECTED} AS use, NULL AS version, e.rk AS rk FROM served AS e
  WHERE e.corr AND EXISTS (SELECT 1 FROM known_ok AS k WHERE k.rk = e.rk AND k.day = e.day)
  UNION ALL SELECT ${KNOWN_USED}, day, IIF(part, ${EDGE_PARTIAL}, ${EDGE_OUTSIDE}), NULL, rk FROM known_ok WHERE out OR part
  UNION ALL SELECT ${EDGE_SQL}, e.d, ${EDGE_CORRECTED}, s.version, e.rk FROM corrected AS e
  CROSS JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = e.rk AND s.day = e.d
  UNION ALL SELECT ${EDGE_SQL}, e.day, ${EDGE_OUTSIDE}, s.version, e.rk
  FROM (SELECT DISTINCT day, rk FROM outside_ids WHERE ${outsideWindow("day")}) AS e
  LEFT JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = e.rk AND s.day = e.day
  UNION ALL SELECT ${EDGE_SQL}, ${first}, ${EDGE_PARTIAL}, s.version, k.rk FROM keys AS k
  LEFT JOIN summary_days AS s ON s.org_key = ?1 AND s.repo_key = k.rk AND s.day = ${first}
  WHERE ${partial(first)} AND NOT EXISTS (SELECT 1 FROM known_part AS e WHERE e.rk = k.rk)
)`);
  }
  const sql = `WITH RECURSIVE ${edgeCtes}${days},
${removedRows}metrics AS (
  ${bounded(`SELECT * FROM (${inWindow}\n  UNION ALL\n  ${outsideIds})`)}
)
${unionAll(terms)}`;
  return { sql, params };
}
