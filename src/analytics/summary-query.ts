import { z } from "zod";
import { badRequest } from "../lib/errors";
import { windowTooWide } from "../rules/analytics-summary";
import { MAX_TIME_BUCKETS, SUMMARY_GROUP_BYS, type SummaryGroupBy } from "../schemas/analytics-summary";
import { AnalyticsQuery, checkDateRange } from "./query";
import type { ReviewWindow } from "./window";

/**
 * Query parameters of `GET /api/analytics/v1/summary` (contract section 12): the export's, minus
 * `perPage` and `cursor`, plus the required `groupBy`. The same field definitions, so the two
 * routes cannot drift apart on dates, trimming or `format`.
 */
export const AnalyticsSummaryQuery = AnalyticsQuery.omit({ perPage: true, cursor: true }).extend({
  groupBy: z
    .enum(SUMMARY_GROUP_BYS, {
      error: (issue) => (issue.input === undefined ? "is required" : `must be one of ${SUMMARY_GROUP_BYS.join(", ")}`),
    })
    .meta({
      override: {
        type: "string",
        enum: [...SUMMARY_GROUP_BYS],
        description:
          "How the rows are grouped: by the UTC day, ISO week (Monday) or month of mergedAt, by repository, or by author. " +
          `day, week and month need a window that touches at most ${MAX_TIME_BUCKETS} of their buckets (${MAX_TIME_BUCKETS} days, ISO weeks or months).`,
        examples: ["week"],
      },
    }),
});
export type AnalyticsSummaryQuery = z.output<typeof AnalyticsSummaryQuery>;

export const windowTooWideError = (groupBy: SummaryGroupBy) =>
  badRequest("Invalid query parameters.", [
    { path: "groupBy", message: `${groupBy} needs a window of at most ${MAX_TIME_BUCKETS} ${groupBy}s` },
  ]);

/**
 * The export's date rules, and a time grouping over more than 400 of its buckets, among the
 * parameter errors (before the organization is looked at) whenever the window is known without it:
 * a window that starts at the installation (only `endDate`) is checked once the access is read.
 */
export function checkSummaryQuery(q: AnalyticsSummaryQuery, now: number): void {
  checkDateRange({ ...q, perPage: undefined, cursor: undefined }, now);
  if (q.startDate === undefined) return;
  const window: ReviewWindow = { start: q.startDate, end: q.endDate ?? now };
  if (windowTooWide(q.groupBy, window)) throw windowTooWideError(q.groupBy);
}
