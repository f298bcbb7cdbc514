import { z } from "zod";
import { InstantOutput } from "./common";

/** The cursors the export issues: `<mergedAt>|<id>`, mergedAt in the response format (contract section 3). */
export const ANALYTICS_CURSOR_OUT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[1-9]\d{0,15}$/;

export const AnalyticsPrRow = z
  .object({
    org: z.string().max(255).meta({ description: "The org value of the request, trimmed." }),
    repo: z.string().max(255),
    prNumber: z.number().int().min(1),
    author: z.string().max(255),
    createdAt: InstantOutput,
    mergedAt: InstantOutput,
    linesAdded: z.number().int().min(0).nullable(),
    linesDeleted: z.number().int().min(0).nullable(),
    numberOfServiceIssuesFlagged: z.number().int().min(0).meta({ description: "Posted findings created inside the window." }),
    numberOfServiceIssuesFixed: z.number().int().min(0).meta({ description: "Of those, the ones with aiAddressed = true." }),
    serviceFirstReviewedAt: InstantOutput.meta({ description: "Earliest completed review, inside the window or not." }),
    totalAiLinesAuthored: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: "Sum of AI-authorship records, capped at linesAdded + linesDeleted; null without records." }),
  })
  .meta({ id: "AnalyticsPrRow" });
export type AnalyticsPrRow = z.infer<typeof AnalyticsPrRow>;

export const AnalyticsPrPage = z
  .object({
    data: z.array(AnalyticsPrRow).max(100),
    nextCursor: z
      .string()
      .max(255)
      .regex(ANALYTICS_CURSOR_OUT)
      .nullable()
      .meta({ description: "`<mergedAt>|<id>` of the last row; null on the last page." }),
  })
  .meta({ id: "AnalyticsPrPage" });
export type AnalyticsPrPage = z.infer<typeof AnalyticsPrPage>;
