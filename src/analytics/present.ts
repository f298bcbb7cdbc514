import { formatInstant } from "../lib/time";
import type { AnalyticsPrPage, AnalyticsPrRow } from "../schemas/analytics";
import type { MergedPullRequest } from "../storage/analytics";
import { encodeCursor } from "./cursor";

export const toRow = (org: string, pr: MergedPullRequest): AnalyticsPrRow => ({
  org,
  repo: pr.repo,
  prNumber: pr.prNumber,
  author: pr.author,
  createdAt: formatInstant(pr.createdAt),
  mergedAt: formatInstant(pr.mergedAt),
  linesAdded: pr.linesAdded,
  linesDeleted: pr.linesDeleted,
  numberOfServiceIssuesFlagged: pr.findingsFlagged,
  numberOfServiceIssuesFixed: pr.findingsFixed,
  serviceFirstReviewedAt: formatInstant(pr.firstReviewedAt),
  totalAiLinesAuthored: pr.aiLines,
});

/** `rows` holds up to perPage + 1 rows: the extra one only says another page exists. */
export function toPage(org: string, rows: MergedPullRequest[], perPage: number): AnalyticsPrPage {
  const page = rows.slice(0, perPage);
  const last = page[page.length - 1];
  return {
    data: page.map((pr) => toRow(org, pr)),
    nextCursor: rows.length > perPage && last ? encodeCursor({ mergedAt: last.mergedAt, id: last.id }) : null,
  };
}
