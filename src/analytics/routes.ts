import { z } from "zod";
import { analyticsEnvelope, json } from "../http/envelopes";
import { type ApiInterface, routesFor } from "../http/route";
import { ANALYTICS_CURSOR_OUT, AnalyticsPrPage } from "../schemas/analytics";
import { AnalyticsSummary } from "../schemas/analytics-summary";
import { SUMMARY_LIMITS } from "../storage/analytics-summary";
import { AnalyticsPrCsv, CSV_CONTENT_TYPE, CSV_HEADER, toCsv } from "./csv";
import { csvDownload, DOWNLOAD_PAGE_ROWS } from "./download";
import { deferTo } from "./early-page";
import { chooseFormat } from "./format";
import { paginationHeaders } from "./links";
import { toPage } from "./present";
import { AnalyticsQuery, checkDateRange, invalidQueryMessage } from "./query";
import { pageReader } from "./read";
import { summarize, summaryReader } from "./summary";
import { AnalyticsSummaryCsv, toSummaryCsv } from "./summary-csv";
import { AnalyticsSummaryQuery, checkSummaryQuery } from "./summary-query";

const keyRoute = routesFor("apiKey");

/**
 * `GET /api/analytics/v1/prs` (contract sections 3 and 10). Answers in the contract's order: 401
 * key, 400 parameters, 404 organization, 403 access, then the page, as JSON or CSV, with `Link`
 * and `X-Next-Cursor` on every page but the last. The access check runs alongside the key verdict,
 * and so does the page when this isolate can guess the access (`early-page.ts`); the rows come from
 * D1 (a read replica through the Sessions API).
 */
export const listPullRequestAnalytics = keyRoute({
  method: "GET",
  scope: "analytics:read",
  path: "/api/analytics/v1/prs",
  operationId: "listPullRequestAnalytics",
  summary: "List merged pull request analytics",
  description:
    "Merged pull requests with at least one completed review in the window, newest merge first (ties: a stable internal id, descending), " +
    "with review metrics. Cursor-paginated: pass nextCursor back as cursor with the same org, repo, author and window; null on the last page. " +
    'Every page but the last carries Link: <next page URL>; rel="next" (the same parameters with the new cursor) and X-Next-Cursor. ' +
    "format=csv, or Accept naming text/csv above JSON, answers the same page as CSV; errors stay JSON. " +
    "Rows are read from a read replica and may lag recent events by a short time. " +
    "Parameters are trimmed before they are checked; blank optional values are ignored; a parameter given twice is 400; unknown parameters are ignored.",
  request: {
    query: AnalyticsQuery,
    check: ({ query }) => checkDateRange(query, Date.now()),
    invalidMessage: invalidQueryMessage,
  },
  alongside: ({ query }, callerId, { env }, verdict) => pageReader.alongside(env, query, callerId, verdict),
  responses: {
    200: {
      description: "A page of rows, newest merge first.",
      body: AnalyticsPrPage,
      example: {
        data: [
          {
            org: "acme",
            repo: "api",
            prNumber: 37,
            author: "ada-admin",
            createdAt: "2026-11-19T10:01:07.768Z",
            mergedAt: "2026-11-20T16:44:17.054Z",
            linesAdded: 679,
            linesDeleted: 164,
            numberOfServiceIssuesFlagged: 7,
            numberOfServiceIssuesFixed: 4,
            serviceFirstReviewedAt: "2026-11-19T17:43:20.752Z",
            totalAiLinesAuthored: 212,
          },
        ],
        nextCursor: "2026-11-20T16:44:17.054Z|137",
      },
      media: {
        "text/csv": {
          schema: AnalyticsPrCsv,
          example:
            "org,repo,prNumber,author,createdAt,mergedAt,linesAdded,linesDeleted,numberOfServiceIssuesFlagged," +
            "numberOfServiceIssuesFixed,serviceFirstReviewedAt,totalAiLinesAuthored\r\n" +
            "acme,api,37,ada-admin,2026-11-19T10:01:07.768Z,2026-11-20T16:44:17.054Z,679,164,7,4,2026-11-19T17:43:20.752Z,212\r\n",
        },
      },
      headers: {
        Link: {
          description:
            'RFC 8288: <absolute URL of the next page>; rel="next". The request\'s own parameters with cursor set to the new one. ' +
            "Absent on the last page.",
          schema: {
            type: "string",
            maxLength: 16_384,
            pattern: '^<[^>]+>; rel="next"$',
            example:
              '<https://api.example.com/api/analytics/v1/prs?org=acme&cursor=2026-11-20T16%3A44%3A17.054Z%7C137>; rel="next"',
          },
          required: false,
        },
        "X-Next-Cursor": {
          description: "The nextCursor of this page (the cursor of the next one). Absent on the last page.",
          schema: {
            type: "string",
            maxLength: 255,
            pattern: ANALYTICS_CURSOR_OUT.source,
            example: "2026-11-20T16:44:17.054Z|137",
          },
          required: false,
        },
        Vary: {
          description: "Accept: without format, the Accept header chooses between JSON and CSV.",
          schema: { type: "string", const: "Accept" },
          required: true,
        },
      },
    },
  },
  errors: ["org_not_found", "installation_blocked", "plan_required", "org_access_denied", "repo_access_denied"],
  handler: async ({ query, read }, { env, url, request }) => {
    // The rows live under the organization's home key; they are shown under the login asked for.
    const { input, answer, early } = await pageReader.answer(query, read);
    const { rows, rowsRead } = answer;
    const page = toPage(query.org, rows, input.limit - 1);
    const headers: Record<string, string> = { ...paginationHeaders(url, page.nextCursor), Vary: "Accept" };
    // Benchmarks and tests only (`--var DEBUG_ROWS_READ:true`): how many rows D1 read for the page,
    // and whether the page read alongside the access check was used (`early-page.ts`).
    if (env.DEBUG_ROWS_READ === "true") {
      headers["X-Debug-Rows-Read"] = String(rowsRead);
      headers["X-Debug-Early-Page"] = early;
    }
    if (chooseFormat(query.format, request.headers.get("Accept")) === "json") return json(page, 200, headers);
    return new Response(toCsv(page.data), { status: 200, headers: { ...headers, "Content-Type": CSV_CONTENT_TYPE } });
  },
});

const SUMMARY_CSV_EXAMPLE =
  "key,pullRequests,linesAdded,linesDeleted,serviceIssuesFlagged,serviceIssuesFixed,aiLinesAuthored,pullRequestsWithAiData," +
  "medianMsToFirstReview,medianMsToMerge\r\n" +
  "2026-11-09,12,3411,902,31,17,640,5,5400000,86400000\r\n" +
  "2026-11-16,0,0,0,0,0,0,0,,\r\n";

/**
 * `GET /api/analytics/v1/summary` (contract section 12): the export's rows for the same parameters
 * (every page), grouped. The same key, checks, envelope, quotas and access decision as the export;
 * the figures come from one D1 statement (`storage/analytics-summary.ts`), read alongside the
 * access check when this isolate can guess the access (`summary.ts`).
 */
export const getPullRequestAnalyticsSummary = keyRoute({
  method: "GET",
  scope: "analytics:read",
  path: "/api/analytics/v1/summary",
  operationId: "getPullRequestAnalyticsSummary",
  summary: "Summarise merged pull request analytics",
  description:
    "The rows GET /api/analytics/v1/prs lists for the same org, repo, author and window (every page), grouped by groupBy, with totals. " +
    "Sums skip nulls; medians are the value at position floor((n-1)/2) in ascending order, null for a group without rows. " +
    "Time groups (day, week, month of mergedAt, UTC, weeks from Monday) list every bucket the window touches, ascending, empty ones " +
    "included, and the bucket of any row merged outside the window (merged before it and reviewed in it); repo and author groups " +
    "are ordered by pullRequests descending, then key. A time grouping's window may touch at most 400 of its buckets (400 days, ISO weeks or months), else 400 naming groupBy. " +
    `A window holding more than ${SUMMARY_LIMITS.maxRows.toLocaleString("en-US")} candidate pull requests (more than one analytics database holds) is 400 naming startDate. ` +
    "format=csv, or Accept naming text/csv above JSON, answers one CSV record per group; errors stay JSON. " +
    "Read from a read replica: it may lag recent events by a short time (at most 60 seconds). " +
    "Parameters are trimmed before they are checked; blank optional values are ignored; a parameter given twice is 400; unknown parameters are ignored.",
  request: {
    query: AnalyticsSummaryQuery,
    check: ({ query }) => checkSummaryQuery(query, Date.now()),
  },
  alongside: ({ query }, callerId, { env, ctx }, verdict) => summaryReader.alongside(env, query, callerId, verdict, deferTo(ctx)),
  responses: {
    200: {
      description: "The grouped figures and the totals of the window used.",
      body: AnalyticsSummary,
      example: {
        org: "acme",
        startDate: "2026-11-09T00:00:00.000Z",
        endDate: "2026-11-22T23:59:59.999Z",
        groupBy: "week",
        groups: [
          {
            key: "2026-11-09",
            pullRequests: 12,
            linesAdded: 3411,
            linesDeleted: 902,
            serviceIssuesFlagged: 31,
            serviceIssuesFixed: 17,
            aiLinesAuthored: 640,
            pullRequestsWithAiData: 5,
            medianMsToFirstReview: 5_400_000,
            medianMsToMerge: 86_400_000,
          },
          {
            key: "2026-11-16",
            pullRequests: 0,
            linesAdded: 0,
            linesDeleted: 0,
            serviceIssuesFlagged: 0,
            serviceIssuesFixed: 0,
            aiLinesAuthored: 0,
            pullRequestsWithAiData: 0,
            medianMsToFirstReview: null,
            medianMsToMerge: null,
          },
        ],
        totals: {
          pullRequests: 12,
          linesAdded: 3411,
          linesDeleted: 902,
          serviceIssuesFlagged: 31,
          serviceIssuesFixed: 17,
          aiLinesAuthored: 640,
          pullRequestsWithAiData: 5,
          medianMsToFirstReview: 5_400_000,
          medianMsToMerge: 86_400_000,
        },
      },
      media: { "text/csv": { schema: AnalyticsSummaryCsv, example: SUMMARY_CSV_EXAMPLE } },
      headers: {
        Vary: {
          description: "Accept: without format, the Accept header chooses between JSON and CSV.",
          schema: { type: "string", const: "Accept" },
          required: true,
        },
      },
    },
  },
  errors: [
    "org_not_found",
    "installation_blocked",
    "plan_required",
    "org_access_denied",
    "repo_access_denied",
    "invalid_request",
  ],
  handler: async ({ query, read }, { env, request }) => {
    const { summary, rowsRead, early } = await summarize(query, read, env);
    const headers: Record<string, string> = { Vary: "Accept" };
    // Benchmarks and tests only (`--var DEBUG_ROWS_READ:true`): how many rows D1 read, and whether
    // the figures read alongside the access check were used.
    if (env.DEBUG_ROWS_READ === "true") {
      headers["X-Debug-Rows-Read"] = String(rowsRead);
      headers["X-Debug-Early-Page"] = early;
    }
    if (chooseFormat(query.format, request.headers.get("Accept")) === "json") return json(summary, 200, headers);
    return new Response(toSummaryCsv(summary.groups), { status: 200, headers: { ...headers, "Content-Type": CSV_CONTENT_TYPE } });
  },
});

/** The download's parameters: the export's window, repositories and authors (no page size, cursor or format: it is every page, as CSV). */
const DownloadQuery = AnalyticsQuery.pick({ org: true, repo: true, author: true, startDate: true, endDate: true });

/** The download's body: the export's CSV header once, then every row of the window. */
const AnalyticsDownloadCsv = z
  .string()
  .max(1_000_000_000)
  .regex(new RegExp(`^${CSV_HEADER}\\r\\n(?:[\\s\\S]*\\r\\n)?$`))
  .meta({
    description:
      "The export's CSV (section 10's rules, AnalyticsPrRow's fields in order) for every page of the window: the header row once, " +
      "then one record per row, in the export's order.",
  });

/**
 * The web app's "Download CSV" (contract section 14): every row of the export's window in one CSV
 * answer, for the session's user. The export's parameters, checks, access decision, statement and
 * cursor rule (`download.ts` walks its pages server-side, 1,000 rows per statement, streamed), so
 * the file equals walking the export; one request, so it counts once against the analytics quota
 * (walking a 100,000-row window from the browser would take 1,000 requests: the whole quota).
 */
export const downloadPullRequestAnalyticsCsv = routesFor("session")({
  method: "GET",
  path: "/app/api/analytics/prs.csv",
  operationId: "appDownloadPullRequestAnalyticsCsv",
  summary: "Every row of the analytics export's window as one CSV file",
  description:
    "The rows GET /api/analytics/v1/prs lists for the same org, repo, author and window, every page, as one text/csv attachment " +
    "(the export's CSV rules). Counted once against the analytics quota.",
  request: {
    query: DownloadQuery,
    check: ({ query }) => checkDateRange(query, Date.now()),
    invalidMessage: invalidQueryMessage,
  },
  alongside: ({ query }, callerId, { env }, verdict) =>
    pageReader.alongside(env, { ...query, perPage: DOWNLOAD_PAGE_ROWS }, callerId, verdict),
  quota: "analytics",
  responses: {
    200: {
      description: "The window's rows as CSV, newest merge first.",
      media: {
        "text/csv": {
          schema: AnalyticsDownloadCsv,
          example:
            "org,repo,prNumber,author,createdAt,mergedAt,linesAdded,linesDeleted,numberOfServiceIssuesFlagged," +
            "numberOfServiceIssuesFixed,serviceFirstReviewedAt,totalAiLinesAuthored\r\n" +
            "acme,api,37,ada-admin,2026-11-19T10:01:07.768Z,2026-11-20T16:44:17.054Z,679,164,7,4,2026-11-19T17:43:20.752Z,212\r\n",
        },
      },
      headers: {
        "Content-Disposition": {
          description:
            "attachment, with a file name of the organization, the repository when one is picked (their number when several are), " +
            "the author likewise, and the window's dates.",
          schema: {
            type: "string",
            maxLength: 300,
            example: 'attachment; filename="acme-pull-requests-2026-10-25-2026-11-24.csv"',
          },
          required: true,
        },
      },
    },
  },
  errors: ["org_not_found", "installation_blocked", "plan_required", "org_access_denied", "repo_access_denied"],
  handler: async ({ query, read }) => {
    const { input, answer: first } = await pageReader.answer({ ...query, perPage: DOWNLOAD_PAGE_ROWS }, read);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const safe = (part: string) => part.replace(/[^A-Za-z0-9._-]/g, "_");
    // The file names what it holds: the organization, the repository when one is picked (how many
    // when several are), the authors likewise, the window.
    const list = (names: readonly string[] | undefined, several: string, prefix = "") =>
      names === undefined ? "" : names.length === 1 ? `-${prefix}${safe(names[0] as string)}` : `-${names.length}-${several}`;
    const of = `${safe(query.org)}${list(query.repo, "repositories")}${list(query.author, "authors", "by-")}`;
    const name = `${of}-pull-requests-${day(input.start)}-${day(input.end)}.csv`;
    return new Response(csvDownload(read.db, query.org, input, first), {
      status: 200,
      headers: { "Content-Type": CSV_CONTENT_TYPE, "Content-Disposition": `attachment; filename="${name}"` },
    });
  },
});

export const analyticsInterface: ApiInterface<"apiKey"> = {
  name: "analytics",
  description: "Merged pull requests with review metrics, for organizations on the Pro plan (personal cak_ keys).",
  basePath: "/api/analytics",
  document: "public",
  envelope: analyticsEnvelope,
  auth: { kind: "apiKey", keyKind: "analytics" },
  errors: ["internal_error", "unavailable"],
  routes: [listPullRequestAnalytics, getPullRequestAnalyticsSummary],
};
