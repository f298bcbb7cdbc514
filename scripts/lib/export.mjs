/**
 * The logic of `npm run export` (scripts/export.mjs): walks every page of the analytics export by
 * following `Link: <...>; rel="next"` (contract section 10) and writes one file. No Node-only
 * imports: the same code runs on Node (the command) and inside workerd (the integration test).
 */

/** Exit codes of the command. */
export const EXIT = {
  ok: 0,
  /** The service or the network failed (5xx after retries, unreachable, rate limited too long, an answer it should not give). */
  failed: 1,
  usage: 2,
  /** The service refused the request (400 parameters, 401 key, 403 access, 404 organization): fix the command. */
  refused: 3,
};

export class ExportError extends Error {
  /** @param {string} message @param {number} exitCode */
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

const PATH = "/api/analytics/v1/prs";
const TYPES = { json: "application/json", csv: "text/csv" };

/**
 * The first page's URL: the options as query parameters (blank ones left out).
 * @param {{ url: string, org: string, repo?: string, author?: string, start?: string, end?: string, format?: string, perPage?: number }} options
 */
export function firstPageUrl({ url, org, repo, author, start, end, format, perPage }) {
  const first = new URL(PATH, url);
  const params = { org, repo, author, startDate: start, endDate: end, perPage, format };
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && String(value) !== "") first.searchParams.set(name, String(value));
  }
  return first.toString();
}

/** The target of `rel="next"` in a Link header (RFC 8288), resolved against the page's URL; null without one. */
export function nextLink(header, base) {
  if (!header) return null;
  for (const match of header.matchAll(/<([^>]*)>\s*((?:;\s*[^;,]+)*)/g)) {
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? "");
    const rel = (rels?.[1] ?? rels?.[2] ?? "").toLowerCase().split(/\s+/);
    if (rel.includes("next")) return new URL(match[1] ?? "", base).toString();
  }
  return null;
}

/** Seconds to wait from a Retry-After header (delay-seconds or an HTTP date), at least 1. */
export function retryAfterSeconds(header, now = Date.now()) {
  if (header && /^\d+$/.test(header.trim())) return Math.max(1, Number(header.trim()));
  const date = header ? Date.parse(header) : Number.NaN;
  return Number.isNaN(date) ? 1 : Math.max(1, Math.ceil((date - now) / 1000));
}

/** Records in a CSV text (RFC 4180: a CRLF inside quotes is part of a field), the header row included. */
export function countCsvRecords(text) {
  let records = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === "\r" && text[i + 1] === "\n") records++;
  }
  return records;
}

/** The text of an error answer, as one line: the sentence, the offending parameters, the correlation id. */
async function describeFailure(response) {
  const text = await response.text().catch(() => "");
  let sentence = text.slice(0, 300);
  try {
    const body = JSON.parse(text);
    const details = Array.isArray(body.details) ? body.details.map((d) => `${d.path}: ${d.message}`).join("; ") : "";
    sentence = `${body.error}${details ? ` (${details})` : ""}`;
  } catch {
    // not JSON: keep the start of the text
  }
  const id = response.headers.get("X-Correlation-Id");
  return `${response.status} ${sentence}${id ? ` [correlation id ${id}]` : ""}`;
}

/**
 * One page, with the retries a GET may take: 429 waits Retry-After (up to `maxRateLimitWaits`
 * times in a row), a 5xx or a network failure is retried up to 3 times with 1, 2, 4 s pauses.
 * Any other non-200 is final.
 */
async function fetchPage(pageUrl, o) {
  let rateLimited = 0;
  let failures = 0;
  for (;;) {
    let response;
    try {
      response = await o.fetch(pageUrl, {
        headers: { Authorization: `Bearer ${o.key}`, Accept: TYPES[o.format], "User-Agent": "pr-review-export" },
        signal: AbortSignal.timeout(o.timeoutMs),
      });
    } catch (error) {
      if (++failures > 3) {
        throw new ExportError(`Cannot reach ${new URL(pageUrl).origin}: ${error?.message ?? error}`, EXIT.failed);
      }
      await o.sleep(1000 * 2 ** (failures - 1));
      continue;
    }
    if (response.status === 200) return response;
    if (response.status === 429) {
      const seconds = retryAfterSeconds(response.headers.get("Retry-After"));
      await response.body?.cancel();
      if (++rateLimited > o.maxRateLimitWaits) {
        throw new ExportError(`Rate limited ${rateLimited} times in a row; giving up (Retry-After ${seconds} s).`, EXIT.failed);
      }
      o.progress({ kind: "rate-limited", seconds });
      await o.sleep(seconds * 1000);
      continue;
    }
    if (response.status >= 500 && ++failures <= 3) {
      await response.body?.cancel();
      await o.sleep(1000 * 2 ** (failures - 1));
      continue;
    }
    const failure = await describeFailure(response);
    throw new ExportError(`The service answered ${failure}`, response.status >= 500 ? EXIT.failed : EXIT.refused);
  }
}

/**
 * Walks every page and writes one file through `write` (awaited, in order): for CSV the first
 * page's header row once and every record; for JSON one JSON array of every row.
 * @returns {Promise<{ pages: number, rows: number }>}
 */
export async function exportAnalytics(options) {
  const o = {
    format: "csv",
    perPage: 100,
    fetch: globalThis.fetch,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    progress: () => {},
    maxRateLimitWaits: 5,
    timeoutMs: 60_000,
    ...options,
  };
  const origin = new URL(o.url).origin;
  const visited = new Set();
  let pageUrl = firstPageUrl(o);
  let pages = 0;
  let rows = 0;
  let header = null;
  if (o.format === "json") await o.write("[");

  while (pageUrl !== null) {
    if (new URL(pageUrl).origin !== origin) {
      throw new ExportError(
        `The next page lies on another origin (${new URL(pageUrl).origin}); not sending the key there.`,
        EXIT.failed,
      );
    }
    if (visited.has(pageUrl)) throw new ExportError(`The service linked back to a page already read: ${pageUrl}`, EXIT.failed);
    visited.add(pageUrl);

    const response = await fetchPage(pageUrl, o);
    const type = (response.headers.get("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
    if (type !== TYPES[o.format]) {
      throw new ExportError(`Expected ${TYPES[o.format]}, got ${type || "no Content-Type"} from ${pageUrl}`, EXIT.failed);
    }
    const text = await response.text();
    if (o.format === "csv") {
      const end = text.indexOf("\r\n");
      if (end < 0) throw new ExportError(`A CSV page without a header row: ${pageUrl}`, EXIT.failed);
      const pageHeader = text.slice(0, end);
      if (header === null) {
        header = pageHeader;
        await o.write(text);
      } else {
        if (pageHeader !== header) throw new ExportError(`The header row changed between pages: ${pageUrl}`, EXIT.failed);
        if (text.length > end + 2) await o.write(text.slice(end + 2));
      }
      rows += countCsvRecords(text) - 1;
    } else {
      const page = JSON.parse(text);
      if (!Array.isArray(page?.data)) throw new ExportError(`Not an analytics page: ${pageUrl}`, EXIT.failed);
      for (const row of page.data) {
        await o.write(`${rows === 0 ? "\n" : ",\n"}${JSON.stringify(row)}`);
        rows++;
      }
    }
    pages++;
    o.progress({ kind: "page", pages, rows });
    pageUrl = nextLink(response.headers.get("Link"), pageUrl);
  }

  if (o.format === "json") await o.write(rows === 0 ? "]\n" : "\n]\n");
  return { pages, rows };
}
