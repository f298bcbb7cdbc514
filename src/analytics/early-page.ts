import type { z } from "zod";
import { atOrganization } from "../directory/resolve";
import type { DurableResult } from "../lib/durable-call";
import { repoKey } from "../lib/names";
import type { AnalyticsAccess } from "../rules/analytics-access";
import { listMergedPullRequests, type MergedPullRequestPage, type MergedPullRequestQuery } from "../storage/analytics";
import { AccessGuesses } from "./access-guess";
import { type AnalyticsQuery, DEFAULT_PER_PAGE } from "./query";
import { resolveWindow } from "./window";

type Query = z.output<typeof AnalyticsQuery>;

/** The page statement's input for a request, once its access is known. One function, so an early and a late query compare equal. */
export function pageQuery(query: Query, access: AnalyticsAccess, now: number): MergedPullRequestQuery {
  const window = resolveWindow(query.startDate ?? null, query.endDate ?? null, access.installedAt, now);
  return {
    orgKey: access.homeKey,
    repoKey: query.repo === undefined ? null : repoKey(query.repo),
    accessibleRepoKeys: access.accessibleRepoKeys,
    excludedRepoKeys: access.excludedRepoKeys,
    start: window.start,
    end: window.end,
    after: query.cursor ?? null,
    limit: (query.perPage ?? DEFAULT_PER_PAGE) + 1,
    now,
  };
}

/** What the export reads alongside the key verdict: the access decision and, maybe, the page already. */
export interface AccessAndPage {
  access: DurableResult<AnalyticsAccess>;
  /** The request's time: the window and the statement are computed for it. */
  now: number;
  db: D1DatabaseSession;
  /** The page read before the access was known, with the input it was read for; null when none was started or it failed. */
  early: { input: MergedPullRequestQuery; page: MergedPullRequestPage } | null;
}

/** The export's guesses (`access-guess.ts`; the summary keeps its own, of the same kind). */
const guesses = new AccessGuesses();

/**
 * The access check and the page query in parallel instead of one after the other. The page needs
 * the access (home key, the caller's repositories, removed ones, the installation date), which only
 * the organization's object can give; but a caller asking again usually gets the same answer as
 * last time. So when this isolate has seen one, the page is read for that guess while the object
 * decides, and the handler uses it only if the decision yields exactly the same statement input
 * (`pageQuery`); otherwise it reads the page again (a wasted read, never a wrong page). Refusals
 * (401, 403, 404) never show what the early read found. First requests, and those whose access
 * changed, take the sequential path.
 */
export async function readAccessAndPage(
  env: Env,
  query: Query,
  callerId: string,
  verdict: Promise<unknown>,
): Promise<AccessAndPage> {
  const now = Date.now();
  const db = env.DB.withSession("first-unconstrained");
  const key = AccessGuesses.key(query.org, callerId, query.repo);
  const guess = guesses.get(key);
  const early = guess ? readEarly(db, pageQuery(query, guess, now)) : Promise.resolve(null);
  const [access, page, allowed] = await Promise.all([
    atOrganization<AnalyticsAccess>(env, query.org, (stub) => stub.analyticsAccess(query.org, callerId, query.repo ?? null)),
    early,
    verdict.then(
      () => true,
      () => false,
    ),
  ]);
  guesses.record(key, access, allowed);
  return { access, now, db, early: page };
}

/** The page for a guessed input; a failure only means the handler reads it again (and reports a failure then). */
async function readEarly(
  db: D1DatabaseSession,
  input: MergedPullRequestQuery,
): Promise<{ input: MergedPullRequestQuery; page: MergedPullRequestPage } | null> {
  try {
    return { input, page: await listMergedPullRequests(db, input) };
  } catch {
    return null;
  }
}

/** Whether an early page was read for exactly this input. */
export const readFor = (
  early: AccessAndPage["early"],
  input: MergedPullRequestQuery,
): early is NonNullable<AccessAndPage["early"]> => early !== null && JSON.stringify(early.input) === JSON.stringify(input);
