import { z } from "zod";
import { MAX_INSTANT_MS } from "../lib/time";
import { InstantOutput } from "./common";

/** How the summary groups the export's rows (contract section 12). */
export const SUMMARY_GROUP_BYS = ["day", "week", "month", "repo", "author"] as const;
export type SummaryGroupBy = (typeof SUMMARY_GROUP_BYS)[number];

/** A time grouping's window touches at most this many of its buckets: days, weeks or months (contract section 12). */
export const MAX_TIME_BUCKETS = 400;

const count = (description: string) => z.number().int().min(0).meta({ description });
/** A difference of two instants the service stores (1970 to 9999): negative when the later event came first. */
const medianMs = (description: string) =>
  z.number().int().min(-MAX_INSTANT_MS).max(MAX_INSTANT_MS).nullable().meta({ description });

/** The figures of a group and of the totals: sums skip nulls, medians are null for no rows. */
const figures = {
  pullRequests: count("Rows of the export in this group."),
  linesAdded: count("Sum of the non-null linesAdded."),
  linesDeleted: count("Sum of the non-null linesDeleted."),
  serviceIssuesFlagged: count("Sum of numberOfServiceIssuesFlagged."),
  serviceIssuesFixed: count("Sum of numberOfServiceIssuesFixed."),
  aiLinesAuthored: count("Sum of the non-null totalAiLinesAuthored."),
  pullRequestsWithAiData: count("Rows whose totalAiLinesAuthored is not null."),
  medianMsToFirstReview: medianMs(
    "Median of serviceFirstReviewedAt - createdAt in ms (the value at position floor((n-1)/2) ascending; may be negative); null without rows.",
  ),
  medianMsToMerge: medianMs("Median of mergedAt - createdAt in ms (position floor((n-1)/2) ascending); null without rows."),
};

export const AnalyticsSummaryTotals = z.object(figures).meta({ id: "AnalyticsSummaryTotals" });
export type AnalyticsSummaryTotals = z.infer<typeof AnalyticsSummaryTotals>;

export const AnalyticsSummaryGroup = z
  .object({
    key: z.string().max(255).meta({
      description:
        "day, week, month: the bucket's first day (YYYY-MM-DD, UTC; weeks start on Monday). repo, author: the name as the export's rows spell it.",
      example: "2026-11-16",
    }),
    ...figures,
  })
  .meta({ id: "AnalyticsSummaryGroup" });
export type AnalyticsSummaryGroup = z.infer<typeof AnalyticsSummaryGroup>;

export const AnalyticsSummary = z
  .object({
    org: z.string().max(255).meta({ description: "The org value of the request, trimmed." }),
    startDate: InstantOutput.meta({ description: "Start of the window used, inclusive." }),
    endDate: InstantOutput.meta({ description: "End of the window used, inclusive." }),
    groupBy: z.enum(SUMMARY_GROUP_BYS),
    groups: z
      .array(AnalyticsSummaryGroup)
      .max(1_000_000)
      .meta({
        description:
          "day, week, month: every bucket the window touches, ascending, empty ones included (zeros, null medians). " +
          "repo, author: every group with rows, by pullRequests descending, then key ascending (Unicode code point order).",
      }),
    totals: AnalyticsSummaryTotals,
  })
  .meta({ id: "AnalyticsSummary" });
export type AnalyticsSummary = z.infer<typeof AnalyticsSummary>;
