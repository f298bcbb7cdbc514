import { listMergedPullRequests, type MergedPullRequestPage, type MergedPullRequestQuery } from "../storage/analytics";
import { CSV_HEADER, toCsv } from "./csv";
import { toPage } from "./present";

/** Rows per D1 statement while a download walks the window: 100 statements for 100,000 rows. */
export const DOWNLOAD_PAGE_ROWS = 1000;

/**
 * The whole window of the export as one CSV body (the web app's "Download CSV"): the header once,
 * then every page's records, walked by the export's own statement and cursor rule
 * (`listMergedPullRequests`, `toPage`), so the file holds exactly the rows that walking the export
 * page by page would. Pulled page by page as the client reads (a `ReadableStream` with a pull
 * source), so memory holds one page however large the window; the first page may be one already
 * read. A statement that fails mid-way errors the stream (the client sees a cut file, never a
 * silently short one that ends cleanly).
 */
export function csvDownload(
  db: D1Database | D1DatabaseSession,
  org: string,
  input: MergedPullRequestQuery,
  first: MergedPullRequestPage,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const perPage = input.limit - 1;
  let after: MergedPullRequestQuery["after"] = input.after;
  let pending: MergedPullRequestPage | null = first;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`${CSV_HEADER}\r\n`));
        return;
      }
      const page = pending ?? (await listMergedPullRequests(db, { ...input, after }));
      pending = null;
      const { data, nextCursor } = toPage(org, page.rows, perPage);
      // toCsv writes the header first: drop it, it went out once above.
      if (data.length > 0) controller.enqueue(encoder.encode(toCsv(data).slice(CSV_HEADER.length + 2)));
      const last = page.rows[Math.min(perPage, page.rows.length) - 1];
      if (nextCursor === null || last === undefined) controller.close();
      else after = { mergedAt: last.mergedAt, id: last.id };
    },
  });
}
