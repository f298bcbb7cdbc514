import { atOrganization } from "../directory/resolve";
import { firstShard, readShard, shardNamed } from "../directory/shards";
import { type DurableResult, unwrap } from "../lib/durable-call";
import { AppError, inStore } from "../lib/errors";
import { foldName } from "../lib/names";
import { formatInstant } from "../lib/time";
import { type AnalyticsAccess, type PlacedAccess, REPO_DENIED } from "../rules/analytics-access";
import { arrangeGroups, dayWindowTooLong } from "../rules/analytics-summary";
import type { AnalyticsSummary } from "../schemas/analytics-summary";
import { type SummaryFigures, type SummaryQuery, summarizeMergedPullRequests } from "../storage/analytics-summary";
import { repositoryHasEvents } from "../storage/repositories";
import { AccessGuesses } from "./access-guess";
import { type AnalyticsSummaryQuery, dayWindowTooLongError } from "./summary-query";
import { resolveWindow } from "./window";

/** What the summary reads alongside the key verdict: the export's access decision and, maybe, the figures already. */
export interface SummaryRead {
  access: DurableResult<PlacedAccess>;
  /** The request's time: the default window ends then. */
  now: number;
  /** A session on the organization's shard (`directory/shards.ts`), and its name. */
  db: D1DatabaseSession;
  shard: string;
  /** The figures read for a guessed access, with the input and shard they were read for; null when none was read or it failed. */
  early: { input: SummaryQuery; shard: string; figures: SummaryFigures } | null;
}

const guesses = new AccessGuesses<PlacedAccess>();

/**
 * The statement's input for a request once its access is known (one function, so an early and a
 * late input compare equal); null when the window is too long for `day` (a 400, nothing to read).
 */
function statementInput(query: AnalyticsSummaryQuery, access: AnalyticsAccess, now: number): SummaryQuery | null {
  const window = resolveWindow(query.startDate ?? null, query.endDate ?? null, access.installedAt, now);
  if (dayWindowTooLong(query.groupBy, window)) return null;
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
 * alongside it the figures for the access this isolate saw last time (`access-guess.ts`): the
 * object's round trip then overlaps D1's instead of preceding it. The handler uses those figures
 * only for exactly the input the decision yields; refusals never show them.
 */
export async function readSummaryAccess(
  env: Env,
  query: AnalyticsSummaryQuery,
  callerId: string,
  verdict: Promise<unknown>,
): Promise<SummaryRead> {
  const now = Date.now();
  const key = AccessGuesses.key(query.org, callerId, query.repo);
  const guess = guesses.get(key);
  const guessed = guess ? statementInput(query, guess, now) : null;
  const guessedShard = guess?.shard ? shardNamed(env, guess.shard) : undefined;
  const guessedDb = guessedShard?.db.withSession("first-unconstrained");
  const [access, early, allowed] = await Promise.all([
    atOrganization<PlacedAccess>(env, query.org, (stub) => stub.analyticsAccess(query.org, callerId, query.repo ?? null)),
    guessed && guessedShard && guessedDb ? readEarly(guessedDb, guessedShard.name, guessed) : null,
    verdict.then(
      () => true,
      () => false,
    ),
  ]);
  guesses.record(key, access, allowed);
  const shard = access.ok
    ? await inStore("D1", () => readShard(env, access.value.homeKey, access.value.shard))
    : (guessedShard ?? firstShard(env)); // refused: nothing is read
  const db = guessedShard?.name === shard.name && guessedDb ? guessedDb : shard.db.withSession("first-unconstrained");
  return { access, now, db, shard: shard.name, early };
}

/** Figures for a guessed input; a failure only means the handler reads them again (and reports a failure then). */
async function readEarly(db: D1DatabaseSession, shard: string, input: SummaryQuery): Promise<SummaryRead["early"]> {
  try {
    return { input, shard, figures: await summarizeMergedPullRequests(db, input) };
  } catch {
    return null;
  }
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
): Promise<{ summary: AnalyticsSummary; rowsRead: number; early: "used" | "stale" | "none" }> {
  const access = unwrap(read.access);
  const input = statementInput(query, access, read.now);
  if (input === null) throw dayWindowTooLongError();
  const reusable =
    read.early !== null && read.early.shard === read.shard && JSON.stringify(read.early.input) === JSON.stringify(input)
      ? read.early
      : null;
  const { groups, totals, rowsRead } = reusable
    ? reusable.figures
    : await inStore("D1", () => summarizeMergedPullRequests(read.db, input));
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
    early: reusable ? "used" : read.early === null ? "none" : "stale",
  };
}
