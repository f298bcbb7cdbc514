import { DAY_MS } from "../lib/time";
import { mergeEdgeSql, monthStartDay, monthsMeeting } from "./summary-days";
import type { DayRun, GroupEntry, GroupKind, GroupMonth } from "./summary-group-months";

/**
 * Which month blocks per group (`summary-group-months.ts`) a summary serves, and which runs it asks
 * to build: the runs of days a window can be served from, narrowed to a week's boundaries.
 */

/** A run shorter than this many days is not worth a head: its days are read as day blocks. */
export const MIN_RUN_DAYS = 7;

/** What a summary serves from month blocks per group, and what it asks to build after its answer. */
export interface GroupMonthsPlan {
  /** The heads served: at most one span per kind (`summary-group-spans.ts`), the months' runs around it. */
  served: GroupMonth[];
  /** Runs to build, each for every kind asked: per month, the longest run of days that could serve this window, aligned. */
  missing: DayRun[];
  /** The spans stored, served or not (markers too), as `kind/first/last`: a span is made only where none stands. */
  spans: Set<string>;
  rowsRead: number;
}

/**
 * The spans of the kinds asked (`?7`, `?8` how many) within the window's full days (`?4`..`?5`), if
 * spans are read at all (`?9`), ranked: `all_serve` when a span of those days serves the window
 * (`?2`..`?3`: `serving` its `lo` and `hi`) for every kind, `top`
 * 1 for each kind's span of the most days among them (the same days for every kind).
 */
const spansRanked = (
  serving: (lo: string, hi: string) => string,
) => `SELECT *, ROW_NUMBER() OVER (PARTITION BY kind ORDER BY all_serve DESC, last_day - first_day DESC, first_day) AS top
  FROM (
    SELECT *, COUNT(*) FILTER (WHERE serves) OVER (PARTITION BY first_day, last_day) = ?8 AS all_serve
    FROM (
      SELECT kind, first_day, last_day, version, pull_requests, lo, hi,
        days IS NOT NULL AND (pull_requests = 0 OR ${serving("lo", "hi")}) AS serves
      FROM summary_group_span_heads
      WHERE ?9 AND org_key = ?1 AND kind IN (SELECT value FROM json_each(?7)) AND first_day >= ?4 AND last_day <= ?5
    )
  )`;

/** A span's key in `GroupMonthsPlan.spans`. */
export const spanKey = (kind: GroupKind, first: number, last: number): string => `${kind}/${first}/${last}`;

/**
 * Chooses, for each month that meets the window's full days (`days`), whether a head of every kind
 * asked serves it, and reads those heads: one batch (one snapshot) of the window's day blocks' edges
 * and the months' heads. A head serves when it lies in the window's full days, every review and
 * finding of its pull requests lies in the window (its `lo` and `hi`), and every kind's head holds
 * the same day blocks; of a month's runs, the longest that serves every kind asked (its heads
 * alone are sent with their groups). Each month's best run is the longest run of its days in the
 * window whose day blocks could be served (or are not built yet), narrowed to a week's boundaries
 * of the month (`alignedRun`); a month is asked to be built for it when no run serves as many of
 * its days, the run has at least `MIN_RUN_DAYS` days, and no marker stands for that very run. At
 * most `MAX_RUNS_BUILT` runs a request.
 */
export async function planGroupMonths(
  db: D1Database | D1DatabaseSession,
  orgKey: string,
  kinds: readonly GroupKind[],
  window: { start: number; end: number },
  days: { first: number; last: number },
  { spans: readSpans = true, corrections = true }: { spans?: boolean; corrections?: boolean } = {},
): Promise<GroupMonthsPlan> {
  const { start, end } = window;
  // A head (or a day block for a run) serves when it has content and, without the window's edge
  // corrections, when its every review and finding lies in the window; with them, the statement
  // corrects the days whose pull requests straddle an edge (`summary-statement.ts` `CORRECTIONS`).
  const serving = (lo: string, hi: string) => (corrections ? `${lo} IS NOT NULL` : `(${lo} >= ?2 AND ${hi} <= ?3)`);
  // The months' heads and the spans are read with the same parameters (the months a span serves are not read).
  const headParams = [
    orgKey,
    start,
    end,
    days.first,
    days.last,
    monthStartDay(days.first),
    JSON.stringify(kinds),
    kinds.length,
    readSpans ? 1 : 0,
  ];
  const [mergeRows, dayRows, headRows, spanRows] = await db.batch([
    db.prepare(`SELECT ${mergeEdgeSql("MIN")} AS lo, ${mergeEdgeSql("MAX")} AS hi`).bind(orgKey, start, end),
    db
      .prepare(
        `SELECT day, pull_requests AS n, pull_requests = 0 OR ${serving("lo", "hi")} AS usable FROM summary_days
WHERE org_key = ?1 AND repo_key = '' AND day BETWEEN ?4 AND ?5`,
      )
      .bind(orgKey, start, end, days.first, days.last),
    db
      .prepare(
        `WITH chosen AS (SELECT first_day, last_day FROM (${spansRanked(serving)}) WHERE all_serve AND top = 1 LIMIT 1)
SELECT r.month AS month, r.kind AS kind, r.first_day AS first, r.last_day AS last, r.version AS version,
  r.pull_requests AS n, r.lo AS lo, r.hi AS hi, h.days AS days,
  IIF(r.all_serve AND r.top = 1 AND NOT EXISTS (SELECT 1 FROM chosen AS c WHERE c.first_day <= r.month AND c.last_day >= r.month),
    h.groups, NULL) AS groups,
  r.all_serve AND r.top = 1 AS serves
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY month, kind ORDER BY all_serve DESC, last_day - first_day DESC, first_day) AS top
  FROM (
    SELECT *, COUNT(*) FILTER (WHERE serves) OVER (PARTITION BY month, first_day, last_day) = ?8 AS all_serve
    FROM (
      SELECT month, kind, first_day, last_day, version, pull_requests, lo, hi,
        days IS NOT NULL AND first_day >= ?4 AND last_day <= ?5 AND (pull_requests = 0 OR ${serving("lo", "hi")}) AS serves
      FROM summary_group_month_heads
      WHERE org_key = ?1 AND month BETWEEN ?6 AND ?5 AND kind IN (SELECT value FROM json_each(?7))
    )
  )
) AS r
CROSS JOIN summary_group_month_heads AS h
  ON h.org_key = ?1 AND h.month = r.month AND h.kind = r.kind AND h.first_day = r.first_day AND h.last_day = r.last_day`,
      )
      .bind(...headParams),
    // The spans within the window's full days: the one that serves every kind asked and covers
    // the most days is read whole (its head's days and groups); the months it covers are not.
    db
      .prepare(
        `SELECT r.kind AS kind, r.first_day AS first, r.last_day AS last, r.version AS version, r.pull_requests AS n,
  r.lo AS lo, r.hi AS hi, IIF(r.all_serve AND r.top = 1, h.days, NULL) AS days,
  IIF(r.all_serve AND r.top = 1, h.groups, NULL) AS groups, r.all_serve AND r.top = 1 AS serves, h.sorted_from AS sortedFrom
FROM (${spansRanked(serving)}) AS r
CROSS JOIN summary_group_span_heads AS h
  ON h.org_key = ?1 AND h.kind = r.kind AND h.first_day = r.first_day AND h.last_day = r.last_day
WHERE ?6 IS NOT NULL`,
      )
      .bind(...headParams),
  ]);
  const usable = new Map<number, boolean>();
  for (const row of (dayRows?.results ?? []) as { day: number; usable: number }[]) usable.set(row.day, row.usable === 1);
  const served: GroupMonth[] = [];
  const spans = new Set<string>();
  let span: { first: number; last: number } | null = null;
  for (const row of (spanRows?.results ?? []) as Omit<HeadRow, "month">[]) {
    spans.add(spanKey(row.kind, row.first, row.last));
    if (row.serves !== 1) continue;
    span = { first: row.first, last: row.last };
    served.push(groupMonthOf({ ...row, month: monthStartDay(row.first) }, true));
  }
  const heads = new Map<number, HeadRow[]>();
  for (const row of (headRows?.results ?? []) as HeadRow[]) heads.set(row.month, [...(heads.get(row.month) ?? []), row]);
  const missing: DayRun[] = [];
  // Only the days from the window's first merge to its last (as the statement walks them): an
  // endless window of a young organization plans its few years, not every month since 1970.
  const merges = mergeRows?.results[0] as { lo: number | null; hi: number | null } | undefined;
  if (merges?.lo == null || merges.hi == null) return { served: [], missing, spans, rowsRead: 0 };
  const from = Math.max(days.first, Math.floor(merges.lo / DAY_MS));
  const to = Math.min(days.last, Math.floor(merges.hi / DAY_MS));
  const length = (run: { first: number; last: number }) => run.last - run.first + 1;
  for (const [monthFirst, monthLast] of monthsMeeting(from, to)) {
    // A month of the span served is neither read nor built.
    if (span !== null && monthFirst >= span.first && monthLast <= span.last) continue;
    const a = Math.max(monthFirst, from);
    const b = Math.min(monthLast, to);
    // The longest run of days whose blocks serve the window, or that have none yet (built before
    // the run), narrowed to a week's boundaries of the month.
    const longest = longestRun(a, b, monthFirst, (day) => usable.get(day) !== false);
    const best = longest === null ? null : alignedRun(longest, monthLast);
    const of = heads.get(monthFirst) ?? [];
    // The runs with a serving head of every kind asked, all of the same day blocks.
    const runs = new Map<string, HeadRow[]>();
    for (const h of of) runs.set(`${h.first}/${h.last}`, [...(runs.get(`${h.first}/${h.last}`) ?? []), h]);
    let chosen: HeadRow[] | null = null;
    for (const run of runs.values()) {
      const head = run[0] as HeadRow;
      const serves =
        kinds.every((kind) => run.some((h) => h.kind === kind)) && run.every((h) => h.serves === 1 && h.days === head.days);
      if (serves && (chosen === null || length(head) > length(chosen[0] as HeadRow))) chosen = run;
    }
    for (const h of chosen ?? []) served.push(groupMonthOf({ ...h, month: monthFirst }, false));
    // Built when no run serves as many days as the best; not when a marker (never served: too
    // big, or a day block without content) stands for that very run: building it again would make
    // the same marker, until a write deletes it.
    const covered = chosen === null ? 0 : length(chosen[0] as HeadRow);
    const marker = best !== null && of.some((h) => h.days === null && h.first === best.first && h.last === best.last);
    if (best !== null && !marker && covered < length(best)) missing.push(best);
  }
  const rowsRead = [mergeRows, dayRows, headRows, spanRows].reduce((n, r) => n + (r?.meta.rows_read ?? 0), 0);
  return { served, missing: missing.slice(0, MAX_RUNS_BUILT), spans, rowsRead };
}

/** A month's head or a span's as the plan reads it (a span's `month`: its first month's). */
type HeadRow = {
  month: number;
  kind: GroupKind;
  first: number;
  last: number;
  version: number;
  n: number;
  lo: number | null;
  hi: number | null;
  days: string | null;
  groups: string | null;
  serves: number;
  /** A span's `sorted_from` (a month head has none). */
  sortedFrom?: number | null;
};

/** A served head as read (its days and groups parsed). */
function groupMonthOf(h: HeadRow, span: boolean): GroupMonth {
  return {
    kind: h.kind,
    month: h.month,
    first: h.first,
    last: h.last,
    span,
    version: h.version,
    pullRequests: h.n,
    lo: h.lo,
    hi: h.hi,
    days: JSON.parse(h.days as string) as [number, number][],
    groups: h.groups === null ? null : (JSON.parse(h.groups) as GroupEntry[]),
    sortedFrom: span ? (h.sortedFrom ?? null) : null,
  };
}

/** The most runs one request builds after its answer (a year's): a longer window gets the rest from its next requests. */
export const MAX_RUNS_BUILT = 13;

/**
 * A run narrowed to a week's boundaries of its month: from its month's day 1, 8, 15, 22 or 29 (the
 * first at or after its start) to the day before one of them or the month's last day (the last at
 * or before its end); null when fewer than `MIN_RUN_DAYS` days remain. A window that moves a day a
 * day then asks for the same run for a week, and the windows that meet a month for a few runs at
 * most (`KEPT_RUNS`).
 */
export function alignedRun({ first, last, month }: DayRun, monthLast: number): DayRun | null {
  const from = month + Math.ceil((first - month) / 7) * 7;
  const to = last === monthLast ? last : month + Math.floor((last - month + 1) / 7) * 7 - 1;
  return to - from + 1 >= MIN_RUN_DAYS ? { first: from, last: to, month } : null;
}

/** The longest run of days from `a` to `b` (of the month starting `month`) that `ok` passes; null when none. */
export function longestRun(a: number, b: number, month: number, ok: (day: number) => boolean): DayRun | null {
  let best: DayRun | null = null;
  for (let day = a, from = a; day <= b + 1; day++) {
    if (day <= b && ok(day)) continue;
    if (day - from > (best === null ? 0 : best.last - best.first + 1)) best = { first: from, last: day - 1, month };
    from = day + 1;
  }
  return best;
}
