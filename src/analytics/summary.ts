import { unwrap } from "../lib/durable-call";
import { AppError, inStore } from "../lib/errors";
import { foldName } from "../lib/names";
import { formatInstant } from "../lib/time";
import { type AnalyticsAccess, type PlacedAccess, REPO_DENIED } from "../rules/analytics-access";
import { arrangeGroups, windowTooWide } from "../rules/analytics-summary";
import type { AnalyticsSummary } from "../schemas/analytics-summary";
import { type SummaryFigures, type SummaryQuery, summarizeMergedPullRequests } from "../storage/analytics-summary";
import { repositoryHasEvents } from "../storage/repositories";
import { AccessGuesses } from "./access-guess";
import { earlyAnswer, earlyUse, type ReadAlongside, readAlongsideAccess } from "./early-page";
import { type AnalyticsSummaryQuery, windowTooWideError } from "./summary-query";
import { resolveWindow } from "./window";

/** What the summary reads alongside the key verdict: the export's access decision and, maybe, the figures already. */
export type SummaryRead = ReadAlongside<SummaryQuery, SummaryFigures>;

const guesses = new AccessGuesses<PlacedAccess>();

/**
 * The statement's input for a request once its access is known (one function, so an early and a
 * late input compare equal); null when the window is too wide for a time grouping (a 400, nothing to read).
 */
function statementInput(query: AnalyticsSummaryQuery, access: AnalyticsAccess, now: number): SummaryQuery | null {
  const window = resolveWindow(query.startDate ?? null, query.endDate ?? null, access.installedAt, now);
  if (windowTooWide(query.groupBy, window)) return null;
  return {
    orgKey: access.homeKey,
    repoKey: query.repo === undefined ? null : foldName(query.repo),
    accessibleRepoKeys: access.accessibleRepoKeys,
    excludedRepoKeys: access.excludedRepoKeys,
    start: window.start,
    end: window.end,
    groupBy: query.groupBy,
  };
}

/**
 * The export's access question to the organization's object, by the same login and repository, and
 * alongside it the figures for the access this isolate saw last time (`early-page.ts`
 * `readAlongsideAccess`): the object's round trip then overlaps D1's instead of preceding it.
 */
export const readSummaryAccess = (
  env: Env,
  query: AnalyticsSummaryQuery,
  callerId: string,
  verdict: Promise<unknown>,
): Promise<SummaryRead> =>
  readAlongsideAccess(
    env,
    guesses,
    { org: query.org, repo: query.repo, callerId, verdict },
    (access, now) => statementInput(query, access, now),
    summarizeMergedPullRequests,
  );

/**
 * The summary for an allowed caller (contract section 12): the export's window and rows, grouped by
 * one statement, arranged by the pure rules. Refusals keep the export's order: the access (404,
 * 403) first, then a time grouping over a window that starts at the installation and is too wide,
 * then a repository only an admin could name that no event knows (403, as the export answers it).
 */
export async function summarize(
  query: AnalyticsSummaryQuery,
  read: SummaryRead,
): Promise<{ summary: AnalyticsSummary; rowsRead: number; early: "used" | "stale" | "none" }> {
  const access = unwrap(read.access);
  const input = statementInput(query, access, read.now);
  if (input === null) throw windowTooWideError(query.groupBy);
  const reusable = earlyAnswer(read, input);
  const { groups, totals, rowsRead } = reusable ?? (await inStore("D1", () => summarizeMergedPullRequests(read.db, input)));
  const repoKey = input.repoKey;
  if (totals.pullRequests === 0 && access.repoMustHaveEvents && repoKey !== null) {
    if (!(await inStore("D1", () => repositoryHasEvents(read.db, input.orgKey, repoKey)))) {
      throw new AppError("repo_access_denied", REPO_DENIED);
    }
  }
  return {
    summary: {
      org: query.org,
      startDate: formatInstant(input.start),
      endDate: formatInstant(input.end),
      groupBy: query.groupBy,
      groups: arrangeGroups(query.groupBy, input, groups),
      totals,
    },
    rowsRead,
    early: earlyUse(read, reusable !== null),
  };
}
