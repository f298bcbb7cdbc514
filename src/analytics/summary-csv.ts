import { z } from "zod";
import type { AnalyticsSummaryGroup } from "../schemas/analytics-summary";
import { csvField, neutralizeFormula } from "./csv";

/** Contract section 12's header: the group's key, then its figures in the order of the totals. */
const COLUMNS = [
  "key",
  "pullRequests",
  "linesAdded",
  "linesDeleted",
  "serviceIssuesFlagged",
  "serviceIssuesFixed",
  "aiLinesAuthored",
  "pullRequestsWithAiData",
  "medianMsToFirstReview",
  "medianMsToMerge",
] as const satisfies readonly (keyof AnalyticsSummaryGroup)[];

export const SUMMARY_CSV_HEADER = COLUMNS.join(",");

/**
 * One record per group (section 10's rules: CRLF, null as an empty field, quoting where needed).
 * The key is text a reviewer event chose (a repository or author name), so it is neutralised like
 * the export's text fields; the figures are numbers the service computed.
 */
export function toSummaryCsv(groups: readonly AnalyticsSummaryGroup[]): string {
  const lines: string[] = [SUMMARY_CSV_HEADER];
  for (const group of groups) {
    lines.push(
      COLUMNS.map((name) => {
        const value = group[name];
        if (value === null) return "";
        return csvField(name === "key" ? neutralizeFormula(String(value)) : String(value));
      }).join(","),
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}

export const AnalyticsSummaryCsv = z
  .string()
  .max(100_000_000)
  .regex(new RegExp(`^${SUMMARY_CSV_HEADER}\\r\\n(?:[\\s\\S]*\\r\\n)?$`))
  .meta({
    description:
      "RFC 4180 CSV with CRLF line ends: the header row, then one record per group in the order of groups (totals are not a record). " +
      "null is an empty field; a field holding a comma, a quote, CR or LF is quoted (quotes doubled); a key that a spreadsheet would run " +
      "as a formula gets a leading single quote, as the export's text fields do.",
  });
