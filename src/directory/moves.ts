import { callDurable } from "../lib/durable-call";
import {
  type CopyPosition,
  carryRenamesFollowed,
  copyPage,
  deleteOrganizationRows,
  fenceOrganization,
  fencesOf,
  organizationRowCounts,
  unfenceOrganization,
} from "../storage/copy";
import { mainDatabase, placementOf, readPlacements, type Shard, shardNamed, shardOf } from "./shards";

/**
 * Moving an organization's analytics rows to another shard while they are read and written
 * (contract section 16). The steps, each idempotent (the Workflow that runs them, `moves/`, may
 * run a step again after a crash):
 *
 * 1. `beginMove` (state `copying`): the organization's old rows on the target, if a late write
 *    left any there after an earlier move away, are deleted; both shards are fenced against moves
 *    of rows between keys (renames, gathers: `storage/renames.ts`), which change no count the
 *    catch-up could see; then the placement names the target as `moving_to`. From then on every write of the organization goes to both shards
 *    (`events.ts`: the source first, the target with the source's pull request ids), and a write
 *    that read the placement before re-reads it after writing and writes the target too.
 * 2. `copySome` (repeated): pages of every table, in key order, written to the target as the
 *    events that hold their state. Records merge by version, so a copy racing a live write of the
 *    same record ends with the newer one, whatever lands first.
 * 3. `catchUp` (state `catching_up`): the row counts per table of both shards are compared; a write
 *    still on its way to the target (written to the source, not yet to the target) shows as a
 *    difference, and the copy runs again (nothing newer is overwritten).
 * 4. `switchOver` (state `switched`): the target's fence is lifted, the organization's object
 *    switches (reads go to the target from then on, which already has every acknowledged write),
 *    then the placement (writes to the target only). Both are compare-and-set on the source: a repeat changes nothing.
 * 5. `finishMove` (state `done`): the source rows are deleted. The source's fence stays: a rename
 *    that read the placement before the move must still find it there.
 *
 * A failure before the switch (`failMove`, also a cancel and the stall rule, `moves/heal.ts`): state
 * `failed` by compare-and-set, then the source's fence is lifted, the placement goes back to the
 * source alone and the target's partial copy is deleted (the target stays fenced); the source was
 * never changed. Only while the move is the organization's last: a newer move's are its own. The switch claims its state by the same
 * compare-and-set first, so a move is either failed or switched, never both. After the switch the
 * move only finishes: its steps are retried until the source rows are gone.
 *
 * Every step stamps `updated_at` (its progress time): a move silent for `MOVE_STALL_SECONDS` is
 * resumed or failed by `moves/heal.ts`.
 */

export type MoveState = "copying" | "catching_up" | "switched" | "done" | "failed";

/** A move as `GET /internal/v1/organizations/{org}/move` shows it, with what the Workflow needs. */
export interface Move {
  home: string;
  org: string;
  from: string;
  to: string;
  state: MoveState;
  rowsCopied: number;
  position: CopyPosition | null;
  startedAt: number;
  /** The progress time: stamped by every step (epoch ms). */
  updatedAt: number;
  error: string | null;
  /** A failed move's undo ended (epoch ms; `undoCopy`), else null. */
  undoneAt: number | null;
}

/** The running states: a second move is refused while one is in them. */
export const RUNNING: readonly MoveState[] = ["copying", "catching_up", "switched"];

/** The states before the switch: a move in them can still be failed (cancelled), its source untouched. */
export const BEFORE_SWITCH: readonly MoveState[] = ["copying", "catching_up"];

/** The error of a move cancelled by `DELETE .../move`. */
export const CANCELLED = "cancelled";

/** A move that is no longer running (failed or cancelled before its switch): its steps stop. */
export class MoveEnded extends Error {}

/** The Workflow instance of a move (ids allow letters, digits, `-` and `_`). */
export const moveInstanceId = (move: { home: string; startedAt: number }): string =>
  `move-${move.home.replace(/[^a-z0-9-]/g, "_")}-${move.startedAt}`;

/** The last (or running) move of an organization, or null when none ever ran. */
export async function readMove(env: Env, home: string): Promise<Move | null> {
  const row = await mainDatabase(env).prepare("SELECT * FROM analytics_moves WHERE home_key = ?1").bind(home).first<MoveRow>();
  return row ? toMove(row) : null;
}

/**
 * The homes whose move the daily reconciliation looks at (`moves/heal.ts`): every running move, and
 * every failed one not undone yet, or whose placement still names its target (a step of its
 * terminated instance that was still running). Few: moves are rare and one per organization.
 */
export async function movesToHeal(env: Env): Promise<string[]> {
  const { results } = await mainDatabase(env)
    .prepare(
      `SELECT home_key FROM analytics_moves m WHERE m.state IN ('copying', 'catching_up', 'switched')
         OR (m.state = 'failed' AND (m.undone_at IS NULL
           OR EXISTS (SELECT 1 FROM analytics_placements p WHERE p.home_key = m.home_key AND p.moving_to = m.to_shard)))
       ORDER BY home_key`,
    )
    .all<{ home_key: string }>();
  return results.map((r) => r.home_key);
}

/**
 * Records a new move of `home` from its shard to `to`, unless one runs or a failed one is not
 * undone yet (`undoCopy`: a new move recorded meanwhile would find its placement, fences and copy
 * half undone): answers the move recorded and whether it is this call's (`created`), or the one in
 * the way.
 */
export async function recordMove(
  env: Env,
  at: { home: string; login: string },
  from: string,
  to: string,
  now: number,
): Promise<{ created: boolean; move: Move }> {
  const db = mainDatabase(env);
  const written = await db
    .prepare(
      `INSERT INTO analytics_moves (home_key, login, from_shard, to_shard, state, rows_copied, copy_table, copy_after, error, started_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, 'copying', 0, 'pull_requests', NULL, NULL, ?5, ?5)
       ON CONFLICT (home_key) DO UPDATE SET login = excluded.login, from_shard = excluded.from_shard, to_shard = excluded.to_shard,
         state = 'copying', rows_copied = 0, copy_table = 'pull_requests', copy_after = NULL, error = NULL,
         started_at = excluded.started_at, updated_at = excluded.updated_at, undone_at = NULL
       WHERE analytics_moves.state = 'done' OR (analytics_moves.state = 'failed' AND analytics_moves.undone_at IS NOT NULL)`,
    )
    .bind(at.home, at.login, from, to, now)
    .run();
  const move = await readMove(env, at.home);
  if (!move) throw new Error(`the move of ${at.home} was not recorded`);
  return { created: (written.meta.changes ?? 0) > 0 && move.startedAt === now, move };
}

/** The shards of a move; throws when the configuration no longer lists one. */
const shardsOf = (env: Env, move: Move): { from: Shard; to: Shard } => ({
  from: shardOf(env, move.from),
  to: shardOf(env, move.to),
});

/**
 * Step 1: the target cleared of the organization's old rows, both shards fenced (no move of rows
 * between keys changes the organization there from then on: `storage/renames.ts`; the target's
 * fence is lifted by the switch), the last rename followed carried over, then the target named as
 * `moving_to`.
 */
export async function beginMove(env: Env, move: Move): Promise<void> {
  const { from, to } = shardsOf(env, move);
  const placement = await placementOf(env, move.home);
  if (placement.movingTo === move.to) return stamp(env, move); // a repeat: writes already reach the target
  if (placement.shard !== move.from || placement.movingTo !== null) throw new Error(`${move.home} is not on ${move.from} alone`);
  // The source's fence first: its one write to the source before the deletion after the switch.
  await fenceOrganization(from.db, move.home, move.startedAt);
  // A step of a cancelled move's instance still running (its instance is terminated, not the step)
  // stops here rather than delete a newer move's copy.
  if (!(await stillRunning(env, move))) throw new MoveEnded(`the move of ${move.home} ended during its begin`);
  await deleteOrganizationRows(to.db, move.home);
  // The target fenced too until the switch: its partial copy is no place for a rename either (one
  // that read the placement before an earlier move away from it may still arrive there).
  await fenceOrganization(to.db, move.home, move.startedAt);
  await carryRenamesFollowed(from.db, to.db, move.home);
  // Only while the move runs, checked in the same statement: a late step of a cancelled move would
  // otherwise name its target after the undo, for a placement nothing then undoes.
  const named = await mainDatabase(env)
    .prepare(
      `UPDATE analytics_placements SET moving_to = ?3 WHERE home_key = ?1 AND shard = ?2 AND moving_to IS NULL
         AND EXISTS (SELECT 1 FROM analytics_moves WHERE home_key = ?1 AND started_at = ?4 AND state IN ('copying', 'catching_up'))`,
    )
    .bind(move.home, move.from, move.to, move.startedAt)
    .run();
  if ((named.meta.changes ?? 0) === 0 && (await placementOf(env, move.home)).movingTo !== move.to)
    throw new MoveEnded(`the move of ${move.home} ended during its begin`);
  await stamp(env, move);
}

/** Whether `move` is the organization's last move and still before its switch. */
async function stillRunning(env: Env, move: Move): Promise<boolean> {
  const now = await readMove(env, move.home);
  return now?.startedAt === move.startedAt && BEFORE_SWITCH.includes(now.state);
}

/**
 * Lifts the fences of `keys` on `shard` that no move holds: the key is placed on that shard alone
 * and the move that set the fence is not running (a move failed while its begin stopped between
 * the fence and the placement, which the heal does not see: nothing else would lift it, and its
 * renames would wait for good). A fence whose organization has left the shard stays; so does a
 * running move's, also in its begin before the placement names the target; only the stale move's
 * own fence is deleted (a newer move's stays). Answers whether it lifted any.
 */
export async function liftStaleFences(env: Env, shard: Shard, keys: readonly string[]): Promise<boolean> {
  const fences = await fencesOf(shard.db, keys);
  if (fences.size === 0) return false;
  const placements = await readPlacements(env, [...fences.keys()]);
  let lifted = false;
  for (const [key, startedAt] of fences) {
    const placement = placements.get(key);
    if (placement?.shard !== shard.name || placement.movingTo !== null) continue;
    const move = await readMove(env, key);
    if (move !== null && move.startedAt === startedAt && RUNNING.includes(move.state)) continue;
    await unfenceOrganization(shard.db, key, startedAt);
    lifted = true;
  }
  return lifted;
}

/** Records progress (the stall rule's clock) without changing anything else. */
export async function stamp(env: Env, move: Move, note?: string, at = Date.now()): Promise<void> {
  await mainDatabase(env)
    .prepare("UPDATE analytics_moves SET updated_at = ?3, error = coalesce(?4, error) WHERE home_key = ?1 AND started_at = ?2")
    .bind(move.home, move.startedAt, at, note ?? null)
    .run();
}

/**
 * Step 2 (and 3's second pass): copies pages from the recorded position for about `budgetMs`,
 * recording the position and the rows after each page. Answers whether the copy reached the end.
 */
export async function copySome(env: Env, move: Move, budgetMs: number, pageSize = 500): Promise<boolean> {
  const { from, to } = shardsOf(env, move);
  const until = Date.now() + budgetMs;
  let position = move.position;
  let rows = move.rowsCopied;
  while (position !== null) {
    const page = await copyPage(
      { db: from.db, orgKey: move.home },
      { db: to.db, orgKey: move.home, shardIndex: to.index },
      position,
      pageSize,
    );
    position = page.next;
    rows += page.rows;
    const recorded = await mainDatabase(env)
      .prepare(
        `UPDATE analytics_moves SET copy_table = ?2, copy_after = ?3, rows_copied = ?4, updated_at = ?5
         WHERE home_key = ?1 AND started_at = ?6 AND state IN ('copying', 'catching_up')`,
      )
      .bind(move.home, position?.table ?? null, position?.after ?? null, rows, Date.now(), move.startedAt)
      .run();
    // Failed (cancelled) meanwhile: the copy stops; `undoCopy` deletes what it wrote.
    if ((recorded.meta.changes ?? 0) === 0) throw new MoveEnded(`the move of ${move.home} ended during its copy`);
    if (Date.now() >= until) break;
  }
  return position === null;
}

/**
 * Step 3: `catching_up`. Whether both shards hold as many rows of each table of the organization;
 * when they do not, the copy starts over from the first table (answer false: run `copySome` again).
 */
export async function catchUp(env: Env, move: Move): Promise<boolean> {
  const { from, to } = shardsOf(env, move);
  await setState(env, move, "catching_up");
  const [a, b] = await Promise.all([organizationRowCounts(from.db, move.home), organizationRowCounts(to.db, move.home)]);
  if (JSON.stringify(a) === JSON.stringify(b)) return true;
  await mainDatabase(env)
    .prepare("UPDATE analytics_moves SET copy_table = 'pull_requests', copy_after = NULL WHERE home_key = ?1 AND started_at = ?2")
    .bind(move.home, move.startedAt)
    .run();
  return false;
}

/** Step 4: the object, then the placement, switch to the target (both compare-and-set on the source). */
export async function switchOver(env: Env, move: Move): Promise<void> {
  // The claim first: a move failed (cancelled) meanwhile stays failed and never switches.
  const claim = await mainDatabase(env)
    .prepare(
      `UPDATE analytics_moves SET state = 'switched', updated_at = ?3
       WHERE home_key = ?1 AND started_at = ?2 AND state IN ('copying', 'catching_up', 'switched')`,
    )
    .bind(move.home, move.startedAt, Date.now())
    .run();
  if ((claim.meta.changes ?? 0) === 0) throw new MoveEnded(`the move of ${move.home} ended before its switch`);
  // Renames follow on the target from the placement's switch on.
  await unfenceOrganization(shardOf(env, move.to).db, move.home, move.startedAt);
  const held = await callDurable(() => env.ORGANIZATIONS.getByName(move.home).placeShard(move.to, move.from), {
    idempotent: true,
  });
  if (held !== move.to) throw new Error(`the object of ${move.home} is on ${held}, neither ${move.from} nor ${move.to}`);
  await mainDatabase(env)
    .prepare("UPDATE analytics_placements SET shard = ?3, moving_to = NULL WHERE home_key = ?1 AND shard = ?2 AND moving_to = ?3")
    .bind(move.home, move.from, move.to)
    .run();
}

/** Step 5: the source rows deleted (for about `budgetMs`; answers whether all are), then `done`. */
export async function finishMove(env: Env, move: Move, budgetMs = Number.POSITIVE_INFINITY): Promise<boolean> {
  const { from } = shardsOf(env, move);
  const { done } = await deleteOrganizationRows(from.db, move.home, { until: Date.now() + budgetMs });
  if (done) await setState(env, move, "done");
  else await stamp(env, move);
  return done;
}

/**
 * A move that cannot go on. Before the switch: state `failed` (compare-and-set: one that switched
 * meanwhile stays switched), then the copy is undone (`undoCopy`); answers true. After it: the
 * error is only recorded (the organization is on the target: the move must finish, `moves/heal.ts`
 * restarts its instance); answers false.
 */
export async function failMove(env: Env, move: Move, error: string): Promise<boolean> {
  const failed = await mainDatabase(env)
    .prepare(
      `UPDATE analytics_moves SET state = 'failed', error = ?3, updated_at = ?4
       WHERE home_key = ?1 AND started_at = ?2 AND state IN ('copying', 'catching_up')`,
    )
    .bind(move.home, move.startedAt, error.slice(0, 500), Date.now())
    .run();
  const now = await readMove(env, move.home);
  if (now?.startedAt !== move.startedAt) return false;
  if (now.state === "failed") {
    await undoCopy(env, move);
    return (failed.meta.changes ?? 0) > 0;
  }
  if (now.state === "switched") await stamp(env, move, error.slice(0, 500));
  return false;
}

/**
 * The copy of a failed move undone (idempotent; also run again by `moves/heal.ts` for a move failed
 * by a run that stopped before it ended): the source's fence lifted (this move's only; the target
 * keeps its fence, the organization is not there), the placement back to the source alone, the
 * target's rows of the organization deleted, then the move marked undone (`undone_at`), which a new
 * move of the organization waits for (`recordMove`). The source was never changed.
 */
export async function undoCopy(env: Env, move: Move): Promise<void> {
  // Only the organization's last move (a newer one cannot be recorded before this one is undone;
  // checked again all the same, also before the target's copy is deleted).
  const isLast = async () => (await readMove(env, move.home))?.startedAt === move.startedAt;
  if (!(await isLast())) return;
  if ((await placementOf(env, move.home)).shard === move.from) {
    await unfenceOrganization(shardOf(env, move.from).db, move.home, move.startedAt);
    await mainDatabase(env)
      .prepare(
        `UPDATE analytics_placements SET moving_to = NULL WHERE home_key = ?1 AND shard = ?2 AND moving_to = ?3
           AND EXISTS (SELECT 1 FROM analytics_moves WHERE home_key = ?1 AND started_at = ?4 AND state = 'failed')`,
      )
      .bind(move.home, move.from, move.to, move.startedAt)
      .run();
    // A target since removed from ANALYTICS_SHARDS holds nothing anyone reads: the undo ends without it.
    const target = shardNamed(env, move.to);
    if (target && (await isLast())) await deleteOrganizationRows(target.db, move.home);
  }
  await mainDatabase(env)
    .prepare("UPDATE analytics_moves SET undone_at = ?3 WHERE home_key = ?1 AND started_at = ?2 AND state = 'failed'")
    .bind(move.home, move.startedAt, Date.now())
    .run();
}

const stateStatement = (env: Env, move: Move, state: MoveState) =>
  mainDatabase(env)
    .prepare(
      "UPDATE analytics_moves SET state = ?3, updated_at = ?4 WHERE home_key = ?1 AND started_at = ?2 AND state <> 'failed'",
    )
    .bind(move.home, move.startedAt, state, Date.now());

const setState = (env: Env, move: Move, state: MoveState) => stateStatement(env, move, state).run();

interface MoveRow {
  home_key: string;
  login: string;
  from_shard: string;
  to_shard: string;
  state: MoveState;
  rows_copied: number;
  copy_table: CopyPosition["table"] | null;
  copy_after: string | null;
  error: string | null;
  started_at: number;
  updated_at: number;
  undone_at: number | null;
}

const toMove = (r: MoveRow): Move => ({
  home: r.home_key,
  org: r.login,
  from: r.from_shard,
  to: r.to_shard,
  state: r.state,
  rowsCopied: r.rows_copied,
  position: r.copy_table === null ? null : { table: r.copy_table, after: r.copy_after },
  startedAt: r.started_at,
  updatedAt: r.updated_at,
  error: r.error,
  undoneAt: r.undone_at,
});
