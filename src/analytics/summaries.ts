import { z } from "zod";
import { json } from "../http/envelopes";
import { defineRoute } from "../http/route";
import { formatInstant } from "../lib/time";
import type { AnalyticsAccess } from "../rules/analytics-access";
import { arrangeGroups } from "../rules/analytics-summary";
import { AnalyticsSummary, SUMMARY_GROUP_BYS, type SummaryGroupBy } from "../schemas/analytics-summary";
import { type GroupingsQuery, SUMMARY_LIMITS, summarizeGroupings } from "../storage/analytics-summary";
import { deferTo } from "./early-page";
import { analyticsReader } from "./read";
import { refuseOverBound, statementInput, summaryOptions } from "./summary";
import { AnalyticsSummaryQuery, checkSummaryQuery, windowTooWideError } from "./summary-query";

/**
 * The dashboard's summaries (contract section 14 draws a week chart, a repository table and an
 * author table of one window): several groupings of the summary's rows in one request and one
 * statement (`storage/analytics-summary.ts` `summarizeGroupings`: the rows found, checked and
 * measured once, the totals' medians sorted once). Each grouping's answer is exactly what
 * `GET /api/analytics/v1/summary` answers for that `groupBy` (section 12), with the same read path
 * (`read.ts`), checks and refusals; counted once against the analytics quota.
 */

const GROUP_BY_LIST = `^(?:${SUMMARY_GROUP_BYS.join("|")})(?:,(?:${SUMMARY_GROUP_BYS.join("|")})){0,${SUMMARY_GROUP_BYS.length - 1}}$`;

/** `groupBy` as a list: comma-separated, each one of the summary's groupings, none twice. */
const GroupByList = z
  .string()
  .max(255, "must be at most 255 characters")
  .transform((value, ctx) => {
    const list = value.split(",").map((g) => g.trim());
    const unknown = list.find((g) => !(SUMMARY_GROUP_BYS as readonly string[]).includes(g));
    if (unknown !== undefined) {
      ctx.addIssue({ code: "custom", message: `each must be one of ${SUMMARY_GROUP_BYS.join(", ")}` });
      return z.NEVER;
    }
    if (new Set(list).size !== list.length) {
      ctx.addIssue({ code: "custom", message: "names a grouping twice" });
      return z.NEVER;
    }
    return list as SummaryGroupBy[];
  })
  .meta({
    override: {
      type: "string",
      maxLength: 255,
      pattern: GROUP_BY_LIST,
      description:
        "The groupings, comma-separated, each at most once: day, week, month, repo, author (as the summary's groupBy). " +
        "The answer lists one summary per grouping, in this order.",
      examples: ["week,repo,author"],
    },
  });

const SummariesQuery = AnalyticsSummaryQuery.omit({ groupBy: true, format: true }).extend({ groupBy: GroupByList });
type SummariesQuery = z.output<typeof SummariesQuery>;

const AnalyticsSummaries = z
  .object({
    summaries: z.array(AnalyticsSummary).min(1).max(SUMMARY_GROUP_BYS.length).meta({
      description: "One per grouping asked, in the order asked: each what GET /api/analytics/v1/summary answers for it.",
    }),
  })
  .meta({ id: "AnalyticsSummaries" });

/** The statement's input: the summary's for every grouping (null when one of them is refused, e.g. `day` over too long a window). */
function groupingsInput(query: SummariesQuery, access: AnalyticsAccess, now: number): GroupingsQuery | null {
  let scope: GroupingsQuery | null = null;
  for (const groupBy of query.groupBy) {
    const input = statementInput({ ...query, groupBy }, access, now);
    if (input === null) return null;
    const { groupBy: _, ...rest } = input;
    scope = { ...rest, groupBys: query.groupBy };
  }
  return scope;
}

/**
 * The groupings in the order their windows are checked: the finest time grouping first (a window too
 * wide for months is too wide for weeks and days too), so a refusal names the same grouping whether
 * the window is known from the parameters or only once the access gives the installation's date.
 */
const FINEST_FIRST: readonly SummaryGroupBy[] = ["day", "week", "month", "repo", "author"];
const finestFirst = (groupBys: readonly SummaryGroupBy[]) => FINEST_FIRST.filter((g) => groupBys.includes(g));

const summariesReader = analyticsReader({
  input: groupingsInput,
  refused: (query: SummariesQuery) => {
    const [finest = query.groupBy[0] ?? "day"] = finestFirst(query.groupBy);
    return windowTooWideError(finest);
  },
  statement: (db, input, defer) => summarizeGroupings(db, input, SUMMARY_LIMITS, summaryOptions(defer)),
  hasRows: (figures) => (figures.groupings[0]?.totals.pullRequests ?? 0) > 0,
});

export const getPullRequestAnalyticsSummaries = defineRoute({
  method: "GET",
  path: "/app/api/analytics/summaries",
  operationId: "appGetPullRequestAnalyticsSummaries",
  summary: "Several groupings of the analytics summary of one window, in one request",
  description:
    "What GET /api/analytics/v1/summary answers for each groupBy listed (same org, repo, author and window, the same checks and refusals), " +
    "computed in one pass over the window's rows. JSON only. Counted once against the analytics quota.",
  request: {
    query: SummariesQuery,
    check: ({ query }) => {
      for (const groupBy of finestFirst(query.groupBy)) checkSummaryQuery({ ...query, groupBy }, Date.now());
    },
  },
  alongside: ({ query }, callerId, { env, ctx }, verdict) =>
    summariesReader.alongside(env, query, callerId, verdict, deferTo(ctx)),
  quota: "analytics",
  responses: {
    200: {
      description: "One summary per grouping asked, in order.",
      body: AnalyticsSummaries,
      example: {
        summaries: [
          {
            org: "acme",
            startDate: "2026-11-16T00:00:00.000Z",
            endDate: "2026-11-22T23:59:59.999Z",
            groupBy: "repo",
            groups: [
              {
                key: "api",
                pullRequests: 2,
                linesAdded: 120,
                linesDeleted: 30,
                serviceIssuesFlagged: 3,
                serviceIssuesFixed: 1,
                aiLinesAuthored: 40,
                pullRequestsWithAiData: 1,
                medianMsToFirstReview: 3_600_000,
                medianMsToMerge: 86_400_000,
              },
            ],
            totals: {
              pullRequests: 2,
              linesAdded: 120,
              linesDeleted: 30,
              serviceIssuesFlagged: 3,
              serviceIssuesFixed: 1,
              aiLinesAuthored: 40,
              pullRequestsWithAiData: 1,
              medianMsToFirstReview: 3_600_000,
              medianMsToMerge: 86_400_000,
            },
          },
        ],
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
  handler: async ({ query, read }, { env }) => {
    const { input, answer, early } = await summariesReader.answer(query, read);
    refuseOverBound(answer.candidates, env);
    const summaries = query.groupBy.map((groupBy, i) => {
      const figures = answer.groupings[i];
      if (!figures) throw new Error(`no figures for grouping ${groupBy}`);
      return {
        org: query.org,
        startDate: formatInstant(input.start),
        endDate: formatInstant(input.end),
        groupBy,
        groups: arrangeGroups(groupBy, input, figures.groups),
        totals: figures.totals,
      };
    });
    const headers: Record<string, string> = {};
    // Benchmarks and tests only (`--var DEBUG_ROWS_READ:true`), as on the summary.
    if (env.DEBUG_ROWS_READ === "true") {
      headers["X-Debug-Rows-Read"] = String(answer.rowsRead);
      headers["X-Debug-Early-Page"] = early;
    }
    return json({ summaries }, 200, headers);
  },
});
