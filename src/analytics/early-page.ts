import { atOrganization } from "../directory/resolve";
import { firstShard, readShard, shardNamed } from "../directory/shards";
import type { DurableResult } from "../lib/durable-call";
import { inStore } from "../lib/errors";
import type { AnalyticsAccess, PlacedAccess } from "../rules/analytics-access";
import { AccessGuesses } from "./access-guess";

/**
 * What a read of the analytics (the export's page, the summary's figures) gets alongside the key
 * verdict: the access decision and, maybe, its answer already.
 */
export interface ReadAlongside<I, R> {
  access: DurableResult<PlacedAccess>;
  /** The request's time: the window and the statement are computed for it. */
  now: number;
  /** A session on the organization's shard (the object's answer names it; `directory/shards.ts`). */
  db: D1DatabaseSession;
  /** That shard's name. */
  shard: string;
  /** The answer read before the access was known, with the input and shard it was read for; null when none was started or it failed. */
  early: { input: I; shard: string; answer: R } | null;
  /** Work a statement leaves for after the response (the request's `ctx.waitUntil`); none: the statement awaits it. */
  defer?: Defer;
}

/** Hands work that need not delay the response to the request's `ctx.waitUntil` (started there). */
export type Defer = (start: () => Promise<unknown>) => void;

/** `ctx.waitUntil` as a `Defer`. */
export const deferTo =
  (ctx: ExecutionContext): Defer =>
  (start) =>
    ctx.waitUntil(start());

/**
 * The access check and the statement in parallel instead of one after the other. The statement needs
 * the access (home key, the caller's repositories, removed ones, the installation date), which only
 * the organization's object can give; but a caller asking again usually gets the same answer as
 * last time. So when this isolate has seen one (`guesses`), the statement is run for that guess
 * while the object decides, and the handler uses its answer only if the decision yields exactly the
 * same input (`earlyAnswer`); otherwise it runs it again (a wasted read, never a wrong answer).
 * Refusals (401, 403, 404) never show what the early read found. First requests, and those whose
 * access changed, take the sequential path. The guess includes the organization's shard: the early
 * read goes there, and an answer read on another shard than the object's answer names (a move
 * switched it) is never used. `inputOf` answers null when the request cannot be read (a 400 to come).
 */
export async function readAlongsideAccess<I, R>(
  env: Env,
  guesses: AccessGuesses<PlacedAccess>,
  ask: { org: string; repo?: readonly string[] | undefined; callerId: string; verdict: Promise<unknown> },
  inputOf: (access: AnalyticsAccess, now: number) => I | null,
  read: (db: D1DatabaseSession, input: I, defer?: Defer) => Promise<R>,
  defer?: Defer,
): Promise<ReadAlongside<I, R>> {
  const now = Date.now();
  const { org, repo, callerId } = ask;
  const key = AccessGuesses.key(org, callerId, repo);
  const guess = guesses.get(key);
  const input = guess ? inputOf(guess, now) : null;
  const guessed = guess?.shard ? shardNamed(env, guess.shard) : undefined;
  const guessedDb = guessed?.db.withSession("first-unconstrained");
  const readEarly = async (db: D1DatabaseSession, shard: string, input: I) => {
    try {
      // Work the early read leaves for later starts only once the key is allowed: a refused caller's
      // request leaves none behind.
      const afterVerdict: Defer | undefined = defer && ((start) => defer(() => ask.verdict.then(start, () => undefined)));
      return { input, shard, answer: await read(db, input, afterVerdict) };
    } catch {
      // A failure only means the handler reads it again (and reports a failure then).
      return null;
    }
  };
  const [access, early, allowed] = await Promise.all([
    atOrganization<PlacedAccess>(env, org, (stub) => stub.analyticsAccess(org, callerId, repo ?? null)),
    input !== null && guessed && guessedDb ? readEarly(guessedDb, guessed.name, input) : null,
    ask.verdict.then(
      () => true,
      () => false,
    ),
  ]);
  guesses.record(key, access, allowed);
  const shard = access.ok
    ? await inStore("D1", () => readShard(env, access.value.homeKey, access.value.shard))
    : (guessed ?? firstShard(env)); // refused: nothing is read
  const db = guessed?.name === shard.name && guessedDb ? guessedDb : shard.db.withSession("first-unconstrained");
  return { access, now, db, shard: shard.name, early, ...(defer ? { defer } : {}) };
}

/** The early answer when it was read for exactly this input, on the organization's shard; else null. */
export function earlyAnswer<I, R>(read: ReadAlongside<I, R>, input: I): R | null {
  const { early } = read;
  return early !== null && early.shard === read.shard && JSON.stringify(early.input) === JSON.stringify(input)
    ? early.answer
    : null;
}

/** How the handler's statement came: the early answer used, one read for another input, or none read early. */
export const earlyUse = (read: ReadAlongside<unknown, unknown>, used: boolean): "used" | "stale" | "none" =>
  used ? "used" : read.early === null ? "none" : "stale";
