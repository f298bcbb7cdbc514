import { formatInstant } from "../lib/time";
import type { AnalyticsAccess } from "../rules/analytics-access";
import { arrangeGroups, windowTooWide } from "../rules/analytics-summary";
import type { AnalyticsSummary } from "../schemas/analytics-summary";
import { type SummaryFigures, type SummaryQuery, summarizeMergedPullRequests } from "../storage/analytics-summary";
import type { ReadAlongside } from "./early-page";
import { analyticsReader, analyticsScope } from "./read";
import { type AnalyticsSummaryQuery, windowTooWideError } from "./summary-query";

/** What the summary reads alongside the key verdict: the export's access decision and, maybe, the figures already. */
export type SummaryRead = ReadAlongside<SummaryQuery, SummaryFigures>;

/**
 * The statement's input for a request once its access is known: the export's scope and the
 * grouping; null when the window is too wide for a time grouping (a 400, nothing to read).
 */
export function statementInput(query: AnalyticsSummaryQuery, access: AnalyticsAccess, now: number): SummaryQuery | null {
  const scope = analyticsScope(query, access, now);
  if (windowTooWide(query.groupBy, scope)) return null;
  return { ...scope, groupBy: query.groupBy };
}

/**
 * The summary's read: the export's read path (`read.ts`) with the summary's statement. Refusals
 * keep the export's order: the access (404, 403) first, then a time grouping over a window that
 * starts at the installation and is too wide, then a repository only an admin could name that no
 * event knows (403, as the export answers it).
 */
export const summaryReader = analyticsReader({
  input: statementInput,
  refused: (query) => windowTooWideError(query.groupBy),
  statement: summarizeMergedPullRequests,
  hasRows: (figures) => figures.totals.pullRequests > 0,
});

/** The summary for an allowed caller (contract section 12): the export's window and rows, grouped by one statement, arranged by the pure rules. */
export async function summarize(
  query: AnalyticsSummaryQuery,
  read: SummaryRead,
): Promise<{ summary: AnalyticsSummary; rowsRead: number; early: "used" | "stale" | "none" }> {
  const { input, answer, early } = await summaryReader.answer(query, read);
  return {
    summary: {
      org: query.org,
      startDate: formatInstant(input.start),
      endDate: formatInstant(input.end),
      groupBy: query.groupBy,
      groups: arrangeGroups(query.groupBy, input, answer.groups),
      totals: answer.totals,
    },
    rowsRead: answer.rowsRead,
    early,
  };
}
