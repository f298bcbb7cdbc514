import { z } from "zod";
import { InstantOutput } from "./common";

const optionalText = (description: string) => z.string().max(255).optional().meta({ description });

/** Query parameters of `GET /api/analytics/v1/prs` as they appear on the wire. */
export const AnalyticsQuery = z
  .object({
    org: z
      .string()
      .min(1)
      .max(255)
      .meta({ description: "GitHub organization or owner. Trimmed; case-insensitive.", example: "acme" }),
    repo: optionalText("Only this repository. Trimmed; blank is ignored."),
    startDate: optionalText(
      "Start of the review window (inclusive): YYYY-MM-DD (00:00:00.000Z) or an ISO 8601 timestamp with Z or ±HH:MM.",
    ),
    endDate: optionalText(
      "End of the review window (inclusive): YYYY-MM-DD (through 23:59:59.999Z) or an ISO 8601 timestamp with Z or ±HH:MM.",
    ),
    perPage: z.string().regex(/^\d+$/).optional().meta({ description: "Page size, 1 to 100 (default 100).", example: "100" }),
    cursor: optionalText("nextCursor of the previous page, unchanged. Keep org, filters and window the same."),
  })
  .meta({ id: "AnalyticsQuery" });

export const AnalyticsPrRow = z
  .object({
    org: z.string().meta({ description: "The org value of the request, trimmed." }),
    repo: z.string(),
    prNumber: z.number().int(),
    author: z.string(),
    createdAt: InstantOutput,
    mergedAt: InstantOutput,
    linesAdded: z.number().int().nullable(),
    linesDeleted: z.number().int().nullable(),
    numberOfServiceIssuesFlagged: z.number().int().meta({ description: "Posted findings created inside the window." }),
    numberOfServiceIssuesFixed: z.number().int().meta({ description: "Of those, the ones with aiAddressed = true." }),
    serviceFirstReviewedAt: InstantOutput.meta({ description: "Earliest completed review, inside the window or not." }),
    totalAiLinesAuthored: z
      .number()
      .int()
      .nullable()
      .meta({ description: "Sum of AI-authorship records, capped at linesAdded + linesDeleted; null without records." }),
  })
  .meta({ id: "AnalyticsPrRow" });
export type AnalyticsPrRow = z.infer<typeof AnalyticsPrRow>;

export const AnalyticsPrPage = z
  .object({
    data: z.array(AnalyticsPrRow),
    nextCursor: z.string().nullable().meta({ description: "`<mergedAt>|<id>` of the last row; null on the last page." }),
  })
  .meta({ id: "AnalyticsPrPage" });
export type AnalyticsPrPage = z.infer<typeof AnalyticsPrPage>;
