/**
 * Pagination headers of the analytics export (contract section 10): on every page but the last,
 * `Link: <absolute URL of the next page>; rel="next"` (RFC 8288) and `X-Next-Cursor`.
 */

/** The request's own URL with every parameter kept (unknown ones too) and `cursor` replaced. */
export function nextPageUrl(requestUrl: URL, cursor: string): string {
  const next = new URL(requestUrl);
  next.hash = "";
  next.searchParams.set("cursor", cursor);
  return next.toString();
}

/** The headers for a page whose `nextCursor` is given; none on the last page. */
export function paginationHeaders(requestUrl: URL, nextCursor: string | null): Record<string, string> {
  if (nextCursor === null) return {};
  return { Link: `<${nextPageUrl(requestUrl, nextCursor)}>; rel="next"`, "X-Next-Cursor": nextCursor };
}
