import { unwrap } from "../lib/durable-call";
import { AppError, inStore } from "../lib/errors";
import { nameKeyList, repoKeyList } from "../lib/names";
import { type AnalyticsAccess, type PlacedAccess, REPO_DENIED } from "../rules/analytics-access";
import {
  type AnalyticsScope,
  listMergedPullRequests,
  type MergedPullRequestQuery,
  PagePlans,
  PLAN_LIMITS,
} from "../storage/analytics";
import { repositoriesHaveEvents } from "../storage/repositories";
import { AccessGuesses } from "./access-guess";
import { type Defer, earlyAnswer, earlyUse, type ReadAlongside, readAlongsideAccess } from "./early-page";
import { type AnalyticsQuery, DEFAULT_PER_PAGE } from "./query";
import { resolveWindow } from "./window";

/**
 * The analytics read path, one for every read of the analytics rows: the export's page (contract
 * sections 3 and 10), the web app's CSV download (section 14) and the summary (section 12). Each
 * reads the same way:
 *
 * 1. alongside the key verdict, the organization's object decides the access, and the statement
 *    runs for the access this isolate saw last time (`early-page.ts`);
 * 2. once the access is known, the request's filters resolve to one `AnalyticsScope`
 *    (`analyticsScope`: the window, the repositories and authors named (section 21's lists), the
 *    caller's repositories); the early answer is used when it was read for exactly that input,
 *    else the statement runs;
 * 3. a repository only an admin could name (not registered) exists only if reviewer events know
 *    it: one probe of D1 for all such names unless the rows prove the only one (403 otherwise,
 *    for every read alike).
 *
 * The filters are resolved in `analyticsScope` alone, and the existence check is
 * `requireNamedRepositories` alone: a filter added to every read is added there, and to the
 * storage statements' `AnalyticsScope`.
 */

/** The request's filters every analytics read takes (the rest of its query is the read's own). */
export type AnalyticsFilters = Pick<AnalyticsQuery, "org" | "repo" | "author" | "startDate" | "endDate">;

/** The rows a request is about, once its access is known: one function, so an early and a late input compare equal. */
export function analyticsScope(filters: AnalyticsFilters, access: AnalyticsAccess, now: number): AnalyticsScope {
  const window = resolveWindow(filters.startDate ?? null, filters.endDate ?? null, access.installedAt, now);
  return {
    orgKey: access.homeKey,
    repoKeys: filters.repo === undefined ? null : repoKeyList(filters.repo),
    authorKeys: filters.author === undefined ? null : nameKeyList(filters.author),
    accessibleRepoKeys: access.accessibleRepoKeys,
    excludedRepoKeys: access.excludedRepoKeys,
    start: window.start,
    end: window.end,
  };
}

/**
 * Each repository named by an admin that the organization has not registered must be known from
 * reviewer events (contract sections 3 and 21): when it is the only repository named, an answer
 * with rows proves it; else one probe of D1 for all of them.
 */
async function requireNamedRepositories(
  db: D1DatabaseSession,
  access: AnalyticsAccess,
  scope: AnalyticsScope,
  hasRows: boolean,
): Promise<void> {
  const unregistered = access.reposMustHaveEvents;
  if (unregistered.length === 0) return;
  if (hasRows && scope.repoKeys?.length === 1) return;
  if (!(await inStore("D1", () => repositoriesHaveEvents(db, scope.orgKey, unregistered)))) {
    throw new AppError("repo_access_denied", REPO_DENIED);
  }
}

/** One kind of analytics read: its statement input for a request, the statement, and whether an answer has rows. */
export interface AnalyticsReadSpec<Q extends AnalyticsFilters, I extends AnalyticsScope, R> {
  /** The statement's input once the access is known; null when the request is refused after all (`refused`). */
  input: (query: Q, access: AnalyticsAccess, now: number) => I | null;
  /** The error for a request whose input is null. */
  refused?: (query: Q) => Error;
  /** The read; `defer` takes work that need not delay the answer (the request's `ctx.waitUntil`). */
  statement: (db: D1DatabaseSession, input: I, defer?: Defer) => Promise<R>;
  hasRows: (answer: R) => boolean;
}

/** What a read answers a handler: the statement's input and answer, and how the early read was used. */
export interface AnalyticsAnswer<I, R> {
  input: I;
  answer: R;
  /** The early answer used, one read for another input, or none read early (benchmarks: `X-Debug-Early-Page`). */
  early: "used" | "stale" | "none";
}

/**
 * A read of the analytics rows: `alongside` for the route's `alongside` (the access decision and
 * the early statement), `answer` for its handler (the access's refusals, the statement, the
 * existence check). Each reader keeps its own access guesses.
 */
export function analyticsReader<Q extends AnalyticsFilters, I extends AnalyticsScope, R>(spec: AnalyticsReadSpec<Q, I, R>) {
  const guesses = new AccessGuesses<PlacedAccess>();
  return {
    alongside: (env: Env, query: Q, callerId: string, verdict: Promise<unknown>, defer?: Defer): Promise<ReadAlongside<I, R>> =>
      readAlongsideAccess(
        env,
        guesses,
        { org: query.org, repo: query.repo, callerId, verdict },
        (access, now) => spec.input(query, access, now),
        spec.statement,
        defer,
      ),
    answer: async (query: Q, read: ReadAlongside<I, R>): Promise<AnalyticsAnswer<I, R>> => {
      const access = unwrap(read.access);
      const input = spec.input(query, access, read.now);
      if (input === null) throw spec.refused?.(query) ?? new RangeError("analytics read without an input");
      const reusable = earlyAnswer(read, input);
      const answer = reusable ?? (await inStore("D1", () => spec.statement(read.db, input, read.defer)));
      await requireNamedRepositories(read.db, access, input, spec.hasRows(answer));
      return { input, answer, early: earlyUse(read, reusable !== null) };
    },
  };
}

/** The export's page input: the scope, the cursor and one row more than the page (to know whether another follows). */
export function pageQuery(
  query: AnalyticsFilters & Pick<AnalyticsQuery, "perPage" | "cursor">,
  access: AnalyticsAccess,
  now: number,
): MergedPullRequestQuery {
  return {
    ...analyticsScope(query, access, now),
    after: query.cursor ?? null,
    limit: (query.perPage ?? DEFAULT_PER_PAGE) + 1,
    now,
  };
}

/**
 * What this isolate saw of the export's first pages: whether a scope's window fills a page, which
 * chooses one statement or two (`PagePlans`). One per isolate, for every key and organization.
 */
export const PAGE_PLANS = new PagePlans();

/** The export's pages: `GET /api/analytics/v1/prs` and the CSV download (which reads 1,000-row pages). */
export const pageReader = analyticsReader({
  input: pageQuery,
  statement: (db, input) => listMergedPullRequests(db, input, PLAN_LIMITS, PAGE_PLANS),
  hasRows: (page) => page.rows.length > 0,
});
