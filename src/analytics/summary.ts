import { atOrganization } from "../directory/resolve";
import { type DurableResult, unwrap } from "../lib/durable-call";
import { AppError, inStore } from "../lib/errors";
import { foldName } from "../lib/names";
import { formatInstant } from "../lib/time";
import { type AnalyticsAccess, REPO_DENIED } from "../rules/analytics-access";
import { arrangeGroups, dayWindowTooLong } from "../rules/analytics-summary";
import type { AnalyticsSummary } from "../schemas/analytics-summary";
import { summarizeMergedPullRequests } from "../storage/analytics-summary";
import { repositoryHasEvents } from "../storage/repositories";
import { type AnalyticsSummaryQuery, dayWindowTooLongError } from "./summary-query";
import { resolveWindow } from "./window";

/** What the summary reads alongside the key verdict: the export's access decision. */
export interface SummaryRead {
  access: DurableResult<AnalyticsAccess>;
  /** The request's time: the default window ends then. */
  now: number;
  db: D1DatabaseSession;
}

/** The same question the export asks the organization's object, by the same login and repository. */
export async function readSummaryAccess(env: Env, query: AnalyticsSummaryQuery, callerId: string): Promise<SummaryRead> {
  const now = Date.now();
  const access = await atOrganization<AnalyticsAccess>(env, query.org, (stub) =>
    stub.analyticsAccess(query.org, callerId, query.repo ?? null),
  );
  return { access, now, db: env.DB.withSession("first-unconstrained") };
}

/**
 * The summary for an allowed caller (contract section 12): the export's window and rows, grouped by
 * one statement, arranged by the pure rules. Refusals keep the export's order: the access (404,
 * 403) first, then a day grouping over a window that starts at the installation and is too long,
 * then a repository only an admin could name that no event knows (403, as the export answers it).
 */
export async function summarize(
  query: AnalyticsSummaryQuery,
  read: SummaryRead,
): Promise<{ summary: AnalyticsSummary; rowsRead: number }> {
  const access = unwrap(read.access);
  const window = resolveWindow(query.startDate ?? null, query.endDate ?? null, access.installedAt, read.now);
  if (dayWindowTooLong(query.groupBy, window)) throw dayWindowTooLongError();
  const repoKey = query.repo === undefined ? null : foldName(query.repo);
  const { groups, totals, rowsRead } = await inStore("D1", () =>
    summarizeMergedPullRequests(read.db, {
      orgKey: access.homeKey,
      repoKey,
      accessibleRepoKeys: access.accessibleRepoKeys,
      excludedRepoKeys: access.excludedRepoKeys,
      start: window.start,
      end: window.end,
      groupBy: query.groupBy,
    }),
  );
  if (totals.pullRequests === 0 && access.repoMustHaveEvents && repoKey !== null) {
    if (!(await inStore("D1", () => repositoryHasEvents(read.db, access.homeKey, repoKey)))) {
      throw new AppError("repo_access_denied", REPO_DENIED);
    }
  }
  return {
    summary: {
      org: query.org,
      startDate: formatInstant(window.start),
      endDate: formatInstant(window.end),
      groupBy: query.groupBy,
      groups: arrangeGroups(query.groupBy, window, groups),
      totals,
    },
    rowsRead,
  };
}
