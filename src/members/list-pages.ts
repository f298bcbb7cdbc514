import { CSV_CONTENT_TYPE } from "../analytics/csv";
import { chooseFormat, type ExportFormat } from "../analytics/format";
import { paginationHeaders } from "../analytics/links";
import { json } from "../http/envelopes";
import type { RequestContext } from "../http/route";

/**
 * The pages of section 8's lists that also answer CSV (contract section 21: the audit log and the
 * member list): JSON or CSV as the export chooses (section 10, `analytics/format.ts`), with `Link`
 * and `X-Next-Cursor` on every page but the last, in both formats, so a CSV walk follows `Link`.
 */

/** Headers of a page of a section 8 list (contract section 10's, also on JSON): the next page's URL and cursor. */
export const PAGE_HEADERS = {
  Link: {
    description:
      'RFC 8288: <absolute URL of the next page>; rel="next". The request\'s own parameters with cursor set to the new one. ' +
      "Absent on the last page.",
    schema: { type: "string", maxLength: 16_384, pattern: '^<[^>]+>; rel="next"$' },
    required: false,
  },
  "X-Next-Cursor": {
    description: "The nextCursor of this page (the cursor of the next one). Absent on the last page.",
    schema: { type: "string", maxLength: 2048, pattern: "^[A-Za-z0-9_-]+$" },
    required: false,
  },
  Vary: {
    description: "Accept: without format, the Accept header chooses between JSON and CSV.",
    schema: { type: "string", const: "Accept" },
    required: true,
  },
} as const;

/** The page as JSON (`body`) or as CSV (`csv()`), with the pagination headers. */
export function listPage<B extends { nextCursor: string | null }>(
  body: B,
  format: ExportFormat | undefined,
  csv: () => string,
  { url, request }: Pick<RequestContext, "url" | "request">,
): Response {
  const headers = { ...paginationHeaders(url, body.nextCursor), Vary: "Accept" };
  if (chooseFormat(format, request.headers.get("Accept")) === "json") return json(body, 200, headers);
  return new Response(csv(), { status: 200, headers: { ...headers, "Content-Type": CSV_CONTENT_TYPE } });
}
