import { badRequest } from "../lib/errors";
import { formatInstant } from "../lib/time";
import type { AnalyticsAccess } from "../rules/analytics-access";
import { arrangeGroups, windowTooWide } from "../rules/analytics-summary";
import type { AnalyticsSummary } from "../schemas/analytics-summary";
import {
  SUMMARY_LIMITS,
  type SummaryFigures,
  type SummaryOptions,
  SummaryPlans,
  type SummaryQuery,
  summarizeMergedPullRequests,
} from "../storage/analytics-summary";
import { EdgeCache } from "../storage/summary-edges";
import { SliceCache } from "../storage/summary-slice-cache";
import type { Defer, ReadAlongside } from "./early-page";
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
 * The isolate's record of each organization's summaries (`SummaryPlans`): a window seen to hold
 * few pull requests is walked by a short statement instead of the blocks' full one. Shared by the
 * summary and the dashboard's summaries.
 */
export const SUMMARY_PLANS = new SummaryPlans();

/**
 * The isolate's slices of blocks already read (`SliceCache`: a block's values under one version
 * never change), so a summary asked again reads no slice from D1. Shared as `SUMMARY_PLANS` is.
 */
export const SUMMARY_SLICES = new SliceCache();

/**
 * The isolate's edge days (`EdgeCache`: a day's reviews and findings outside it, kept under its
 * block's version and edge version), so a summary asked again counts its window's edges without
 * checking them pull request by pull request in SQL. Shared as `SUMMARY_PLANS` is.
 */
export const SUMMARY_EDGES = new EdgeCache();

/** How the summary and the dashboard's summaries read: the isolate's plans, slices and edge days, and the request's `defer`. */
export const summaryOptions = (defer: Defer | undefined): SummaryOptions => ({
  plans: SUMMARY_PLANS,
  sliceCache: SUMMARY_SLICES,
  edgeCache: SUMMARY_EDGES,
  ...(defer ? { defer } : {}),
});

/**
 * The summary's read: the export's read path (`read.ts`) with the summary's statement. Refusals
 * keep the export's order: the access (404, 403) first, then a time grouping over a window that
 * starts at the installation and is too wide, then a repository only an admin could name that no
 * event knows (403, as the export answers it).
 */
export const summaryReader = analyticsReader({
  input: statementInput,
  refused: (query) => windowTooWideError(query.groupBy),
  statement: (db, input, defer) => summarizeMergedPullRequests(db, input, SUMMARY_LIMITS, summaryOptions(defer)),
  hasRows: (figures) => figures.totals.pullRequests > 0,
});

/**
 * The most candidate pull requests one summary request may read (issue 31, item 3): the statement
 * stops its walk after `SUMMARY_LIMITS.maxRows` of them, and a request that found more is refused
 * (`refuseOverBound`) instead of answered with partial figures. `SUMMARY_MAX_ROWS` lowers it, for
 * tests only (a whole number; never above the statement's own limit).
 */
export function summaryMaxRows(env: { SUMMARY_MAX_ROWS?: string }): number {
  const text = env.SUMMARY_MAX_ROWS?.trim();
  if (!text) return SUMMARY_LIMITS.maxRows;
  if (!/^\d{1,9}$/.test(text)) throw new Error("SUMMARY_MAX_ROWS must be a whole number");
  return Math.min(Number(text), SUMMARY_LIMITS.maxRows);
}

/** A 400 naming the window when the statement found more candidates than one request may read. */
export function refuseOverBound(candidates: number, env: { SUMMARY_MAX_ROWS?: string }): void {
  const bound = summaryMaxRows(env);
  if (candidates <= bound) return;
  throw badRequest("The window holds more pull requests than one summary may read.", [
    {
      path: "startDate",
      message: `the window holds more than ${bound.toLocaleString("en")} pull requests to check; narrow it or name a repository`,
    },
  ]);
}

/** The summary for an allowed caller (contract section 12): the export's window and rows, grouped by one statement, arranged by the pure rules. */
export async function summarize(
  query: AnalyticsSummaryQuery,
  read: SummaryRead,
  env: { SUMMARY_MAX_ROWS?: string },
): Promise<{ summary: AnalyticsSummary; rowsRead: number; early: "used" | "stale" | "none" }> {
  const { input, answer, early } = await summaryReader.answer(query, read);
  refuseOverBound(answer.candidates, env);
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
