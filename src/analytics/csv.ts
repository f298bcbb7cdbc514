import { z } from "zod";
import type { AnalyticsPrRow } from "../schemas/analytics";

/**
 * The CSV form of an analytics page (contract section 10): RFC 4180 with CRLF line ends, a header
 * row of the row fields in the specification's order, null as an empty field, and a field quoted
 * (quotes doubled) exactly when it holds a comma, a quote, CR or LF.
 */

export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8";

/**
 * Every row field in the order of the specification, with what kind of value it holds. A field
 * added to the row schema fails to compile here until someone decides how it is written.
 */
const COLUMNS = {
  org: "text",
  repo: "text",
  prNumber: "number",
  author: "text",
  createdAt: "instant",
  mergedAt: "instant",
  linesAdded: "number",
  linesDeleted: "number",
  numberOfServiceIssuesFlagged: "number",
  numberOfServiceIssuesFixed: "number",
  serviceFirstReviewedAt: "instant",
  totalAiLinesAuthored: "number",
} as const satisfies Record<keyof AnalyticsPrRow, "text" | "number" | "instant">;

export const CSV_COLUMNS = Object.keys(COLUMNS) as (keyof AnalyticsPrRow)[];

/** The header row, without its line end. */
export const CSV_HEADER = CSV_COLUMNS.join(",");

/**
 * Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` as a formula, and some also after
 * a leading tab or CR (OWASP, "CSV Injection"). They also skip leading blanks and invisible
 * characters (space, newline, NBSP, zero-width space, word joiner, BOM) before such a sign, and
 * some fold the full-width (`＝＋－＠`) and small (`﹦﹢﹣﹫`) forms to it: reviewer events can carry
 * such an author. A text field starting so gets a leading single quote, which spreadsheets show as
 * text and do not evaluate. Numbers and date-times are written by the service and never start so;
 * a negative number must stay a number.
 */
const FORMULA_START = /^(?:[\t\r]|[\s\u200B-\u200D\u2060\uFEFF]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20\uFE66\uFE62\uFE63\uFE6B])/;

/** The text as a spreadsheet-safe cell value: a leading single quote where a spreadsheet would see a formula. */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** RFC 4180: quote a field that holds a comma, a quote, CR or LF; double the quotes inside. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One field of section 10's CSV: null empty, text neutralised and quoted where needed (also the audit and member lists'). */
export function csvCell(kind: "text" | "number" | "instant", value: string | number | boolean | null): string {
  if (value === null) return "";
  if (kind === "text") return csvField(neutralizeFormula(String(value)));
  return csvField(String(value));
}

/** The page as CSV: the header row, then one record per row; every record ends with CRLF. */
export function toCsv(rows: readonly AnalyticsPrRow[]): string {
  const lines = [CSV_HEADER];
  for (const row of rows) lines.push(CSV_COLUMNS.map((name) => csvCell(COLUMNS[name], row[name])).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

/**
 * The documented body of a CSV answer: the header row, then records each ending with CRLF. At most
 * 100 records of at most about 1,750 characters (three text fields of 255 characters, every one a
 * quote, doubled and quoted, plus a leading quote; nine numbers and date-times).
 */
export const AnalyticsPrCsv = z
  .string()
  .max(200_000)
  .regex(new RegExp(`^${CSV_HEADER}\\r\\n(?:[\\s\\S]*\\r\\n)?$`))
  .meta({
    description:
      "RFC 4180 CSV with CRLF line ends: a header row of the row fields in the order of AnalyticsPrRow, then one record per row. " +
      "null is an empty field; a field holding a comma, a quote, CR or LF is quoted (quotes doubled). A text field (org, repo, author) " +
      "that starts with =, +, -, @, a tab or CR, also after leading blanks or invisible characters (space, newline, NBSP, zero-width space, BOM) " +
      "and in the full-width or small forms of those signs, gets a leading single quote so spreadsheets do not run it as a formula.",
  });
