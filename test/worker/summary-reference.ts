import { expect } from "vitest";
import type { components } from "../../web/api-schema";

/**
 * The summary's reference (contract section 12: the summary is exactly the export's rows for the
 * same parameters, every page, grouped): the export's rows read page by page and grouped with plain
 * loops, independently of the Worker's SQL and of `rules/analytics-summary.ts`. Shared by the
 * summary's property test and the attacks that compare the summary with the export.
 */

/** The export's row and the summary's figures, as the contract's document describes them (`npm run openapi` generates the types). */
export type ExportRow = components["schemas"]["AnalyticsPrRow"];
export type Figures = components["schemas"]["AnalyticsSummaryTotals"];
export type GroupBy = "day" | "week" | "month" | "repo" | "author";
export const GROUP_BYS: GroupBy[] = ["day", "week", "month", "repo", "author"];

const DAY = 86_400_000;
const dayOf = (iso: string) => iso.slice(0, 10);
function mondayOf(iso: string): string {
  const d = new Date(`${dayOf(iso)}T00:00:00Z`);
  return new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY).toISOString().slice(0, 10);
}
const monthOf = (iso: string) => `${iso.slice(0, 7)}-01`;
const keyOf: Record<GroupBy, (row: Pick<ExportRow, "mergedAt" | "repo" | "author">) => string> = {
  day: (r) => dayOf(r.mergedAt),
  week: (r) => mondayOf(r.mergedAt),
  month: (r) => monthOf(r.mergedAt),
  repo: (r) => r.repo,
  author: (r) => r.author,
};

/** The value at floor((n - 1) / 2) of the values sorted; null when there are none. */
export function lowerMedian(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
}

function figures(rows: ExportRow[]): Figures {
  const sum = (pick: (r: ExportRow) => number | null) => rows.reduce((n, r) => n + (pick(r) ?? 0), 0);
  return {
    pullRequests: rows.length,
    linesAdded: sum((r) => r.linesAdded),
    linesDeleted: sum((r) => r.linesDeleted),
    serviceIssuesFlagged: sum((r) => r.numberOfServiceIssuesFlagged),
    serviceIssuesFixed: sum((r) => r.numberOfServiceIssuesFixed),
    aiLinesAuthored: sum((r) => r.totalAiLinesAuthored),
    pullRequestsWithAiData: rows.filter((r) => r.totalAiLinesAuthored !== null).length,
    medianMsToFirstReview: lowerMedian(rows.map((r) => Date.parse(r.serviceFirstReviewedAt) - Date.parse(r.createdAt))),
    medianMsToMerge: lowerMedian(rows.map((r) => Date.parse(r.mergedAt) - Date.parse(r.createdAt))),
  };
}

/** Every bucket from the window's start to its end, by walking its days. */
function windowBuckets(groupBy: GroupBy, start: number, end: number): string[] {
  const keys = new Set<string>();
  for (let day = Math.floor(start / DAY) * DAY; day <= end; day += DAY)
    keys.add(keyOf[groupBy]({ mergedAt: new Date(day).toISOString(), repo: "", author: "" }));
  return [...keys];
}

/** The summary's groups (in the answer's order, a time grouping's empty buckets included) and totals of the rows. */
export function referenceSummary(rows: ExportRow[], groupBy: GroupBy, start: number, end: number) {
  const byKey = new Map<string, ExportRow[]>();
  for (const row of rows) byKey.set(keyOf[groupBy](row), [...(byKey.get(keyOf[groupBy](row)) ?? []), row]);
  const time = groupBy === "day" || groupBy === "week" || groupBy === "month";
  if (time) for (const key of windowBuckets(groupBy, start, end)) if (!byKey.has(key)) byKey.set(key, []);
  const groups = [...byKey].map(([key, members]) => ({ key, ...figures(members) }));
  groups.sort(
    time
      ? (a, b) => (a.key < b.key ? -1 : 1)
      : (a, b) => b.pullRequests - a.pullRequests || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  return { groups, totals: figures(rows) };
}

/** The whole answer of `GET /api/analytics/v1/summary` for the rows of the export of `org` over [start, end]. */
export function referenceAnswer(org: string, rows: ExportRow[], groupBy: GroupBy, start: number, end: number) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return { org, startDate: iso(start), endDate: iso(end), groupBy, ...referenceSummary(rows, groupBy, start, end) };
}

/**
 * Every row of the export for `query` (its parameters without `perPage` and `cursor`), page by
 * page; every page but the last is full (contract section 9: no empty last page).
 */
export async function exportRows<R = ExportRow>(
  get: (path: string) => Promise<unknown>,
  query: string,
  { perPage, maxPages }: { perPage: number; maxPages: number },
): Promise<R[]> {
  const rows: R[] = [];
  for (let cursor: string | null = null, pages = 0; ; pages++) {
    expect(pages).toBeLessThan(maxPages);
    const page = (await get(
      `/api/analytics/v1/prs?${query}&perPage=${perPage}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    )) as { data: R[]; nextCursor: string | null };
    if (page.nextCursor !== null) expect(page.data).toHaveLength(perPage);
    rows.push(...page.data);
    cursor = page.nextCursor;
    if (cursor === null) return rows;
  }
}
