import { z } from "zod";
import { badRequest } from "../lib/errors";
import { dayWindowTooLong } from "../rules/analytics-summary";
import { MAX_DAY_GROUP_WINDOW_DAYS, SUMMARY_GROUP_BYS } from "../schemas/analytics-summary";
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
          `day needs a window of at most ${MAX_DAY_GROUP_WINDOW_DAYS} days.`,
        examples: ["week"],
      },
    }),
});
export type AnalyticsSummaryQuery = z.output<typeof AnalyticsSummaryQuery>;

export const dayWindowTooLongError = () =>
  badRequest("Invalid query parameters.", [
    { path: "groupBy", message: `day needs a window of at most ${MAX_DAY_GROUP_WINDOW_DAYS} days` },
  ]);

/**
 * The export's date rules, and `groupBy=day` over a window of more than 400 days, among the
 * parameter errors (before the organization is looked at) whenever the window is known without it:
 * a window that starts at the installation (only `endDate`) is checked once the access is read.
 */
export function checkSummaryQuery(q: AnalyticsSummaryQuery, now: number): void {
  checkDateRange({ ...q, perPage: undefined, cursor: undefined }, now);
  if (q.startDate === undefined) return;
  const window: ReviewWindow = { start: q.startDate, end: q.endDate ?? now };
  if (dayWindowTooLong(q.groupBy, window)) throw dayWindowTooLongError();
}
