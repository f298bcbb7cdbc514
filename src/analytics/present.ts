import { formatInstant } from "../lib/time";
import type { AnalyticsPrPage, AnalyticsPrRow } from "../schemas/analytics";
import type { MergedPullRequest } from "../storage/analytics";
import { encodeCursor } from "./cursor";

/**
 * AI lines are capped at the pull request's changed lines (added + deleted, a missing side
 * counting 0); with both sides unknown there is nothing to cap at.
 */
export function cappedAiLines(aiLines: number | null, linesAdded: number | null, linesDeleted: number | null): number | null {
  if (aiLines === null) return null;
  if (linesAdded === null && linesDeleted === null) return aiLines;
  return Math.min(aiLines, (linesAdded ?? 0) + (linesDeleted ?? 0));
}

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
  totalAiLinesAuthored: cappedAiLines(pr.aiLines, pr.linesAdded, pr.linesDeleted),
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
