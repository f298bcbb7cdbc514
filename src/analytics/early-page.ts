import type { z } from "zod";
import { atOrganization } from "../directory/resolve";
import { firstShard, readShard, shardNamed } from "../directory/shards";
import type { DurableResult } from "../lib/durable-call";
import { inStore } from "../lib/errors";
import { repoKey } from "../lib/names";
import type { AnalyticsAccess, PlacedAccess } from "../rules/analytics-access";
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
  access: DurableResult<PlacedAccess>;
  /** The request's time: the window and the statement are computed for it. */
  now: number;
  /** A session on the organization's shard (the object's answer names it; `directory/shards.ts`). */
  db: D1DatabaseSession;
  /** That shard's name. */
  shard: string;
  /** The page read before the access was known, with the input and shard it was read for; null when none was started or it failed. */
  early: { input: MergedPullRequestQuery; shard: string; page: MergedPullRequestPage } | null;
}

/** The export's guesses (`access-guess.ts`; the summary keeps its own, of the same kind). */
const guesses = new AccessGuesses<PlacedAccess>();

/**
 * The access check and the page query in parallel instead of one after the other. The page needs
 * the access (home key, the caller's repositories, removed ones, the installation date), which only
 * the organization's object can give; but a caller asking again usually gets the same answer as
 * last time. So when this isolate has seen one, the page is read for that guess while the object
 * decides, and the handler uses it only if the decision yields exactly the same statement input
 * (`pageQuery`); otherwise it reads the page again (a wasted read, never a wrong page). Refusals
 * (401, 403, 404) never show what the early read found. First requests, and those whose access
 * changed, take the sequential path. The guess includes the organization's shard: the early read
 * goes there, and a page read on another shard than the object's answer names (a move switched it)
 * is never used.
 */
export async function readAccessAndPage(
  env: Env,
  query: Query,
  callerId: string,
  verdict: Promise<unknown>,
): Promise<AccessAndPage> {
  const now = Date.now();
  const key = AccessGuesses.key(query.org, callerId, query.repo);
  const guess = guesses.get(key);
  const guessed = guess?.shard ? shardNamed(env, guess.shard) : undefined;
  const guessedDb = guessed?.db.withSession("first-unconstrained");
  const early =
    guess && guessed && guessedDb ? readEarly(guessedDb, guessed.name, pageQuery(query, guess, now)) : Promise.resolve(null);
  const [access, page, allowed] = await Promise.all([
    atOrganization<PlacedAccess>(env, query.org, (stub) => stub.analyticsAccess(query.org, callerId, query.repo ?? null)),
    early,
    verdict.then(
      () => true,
      () => false,
    ),
  ]);
  guesses.record(key, access, allowed);
  const shard = access.ok
    ? await inStore("D1", () => readShard(env, access.value.homeKey, access.value.shard))
    : (guessed ?? firstShard(env)); // refused: nothing is read
  const db = guessed?.name === shard.name && guessedDb ? guessedDb : shard.db.withSession("first-unconstrained");
  return { access, now, db, shard: shard.name, early: page };
}

/** The page for a guessed input; a failure only means the handler reads it again (and reports a failure then). */
async function readEarly(db: D1DatabaseSession, shard: string, input: MergedPullRequestQuery): Promise<AccessAndPage["early"]> {
  try {
    return { input, shard, page: await listMergedPullRequests(db, input) };
  } catch {
    return null;
  }
}

/** Whether an early page was read for exactly this input, on the organization's shard. */
export const readFor = (
  read: AccessAndPage,
  input: MergedPullRequestQuery,
): read is AccessAndPage & { early: NonNullable<AccessAndPage["early"]> } =>
  read.early !== null && read.early.shard === read.shard && JSON.stringify(read.early.input) === JSON.stringify(input);
