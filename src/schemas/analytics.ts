import { z } from "zod";
import { InstantOutput } from "./common";

export const AnalyticsPrRow = z
  .object({
    org: z.string().max(255).meta({ description: "The org value of the request, trimmed." }),
    repo: z.string().max(255),
    prNumber: z.number().int(),
    author: z.string().max(255),
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
    data: z.array(AnalyticsPrRow).max(100),
    nextCursor: z.string().max(255).nullable().meta({ description: "`<mergedAt>|<id>` of the last row; null on the last page." }),
  })
  .meta({ id: "AnalyticsPrPage" });
export type AnalyticsPrPage = z.infer<typeof AnalyticsPrPage>;
