import {
  BEFORE_SWITCH,
  CANCELLED,
  failMove,
  type Move,
  moveInstanceId,
  movesToHeal,
  RUNNING,
  readMove,
  stamp,
  undoCopy,
} from "../directory/moves";
import { placementOf } from "../directory/shards";
import { errorField, log } from "../lib/log";
import { gatherStrayRowsAfterMove } from "./gather";

/**
 * "A move never stays stuck" (contract section 16). Run by every `GET`/`POST`/`DELETE .../move`
 * and by the daily reconciliation, on the organization's last move:
 *
 * - its Workflow instance is gone (never created: a failure between recording the move and
 *   creating it; or lost by the engine): created again, it resumes from the recorded position;
 * - its instance ended (errored: a step kept failing; terminated; complete without recording it):
 *   before the switch the move fails (source untouched, target's copy deleted); after it, the
 *   instance is restarted and finishes the move;
 * - it is silent for `MOVE_STALL_SECONDS` while its instance says it runs (a restart the engine
 *   did not wake: Miniflare's never does), or its instance is paused: paused and resumed, which
 *   replays its finished steps and goes on; silent again for as long after that nudge, the nudge
 *   did not help: before the switch the move fails, after it the instance is restarted.
 *
 * A move failed by a run that stopped before undoing its copy has it undone here.
 */

/** `MOVE_STALL_SECONDS` (default 1800): how long a running move may record no progress. */
export function moveStallMs(env: { MOVE_STALL_SECONDS?: string }): number {
  const text = env.MOVE_STALL_SECONDS?.trim() || "1800";
  if (!/^\d{1,6}$/.test(text)) throw new Error("MOVE_STALL_SECONDS must be a whole number of seconds (0 to 999999)");
  return Number(text) * 1000;
}

/** The note a nudge leaves as the move's last error (and how the next look knows it nudged). */
const NUDGED = "no progress: its Workflow instance was paused and resumed";

type InstanceState = "gone" | "ended" | "paused" | "alive";

async function instanceState(env: Env, move: Move): Promise<{ state: InstanceState; status: string }> {
  let status: string;
  try {
    status = (await (await env.MOVES.get(moveInstanceId(move))).status()).status;
  } catch {
    return { state: "gone", status: "unknown" };
  }
  if (status === "errored" || status === "terminated" || status === "complete") return { state: "ended", status };
  return { state: status === "paused" ? "paused" : "alive", status };
}

export const createMoveInstance = (env: Env, move: Move) =>
  env.MOVES.create({ id: moveInstanceId(move), params: { home: move.home, startedAt: move.startedAt } });

/**
 * Fails a move before its switch (compare-and-set; answers false when it switched meanwhile), then
 * ends its instance so that it writes nothing more, and undoes the copy again for a page that a
 * step still running wrote after the first undo.
 */
async function stop(env: Env, move: Move, error: string): Promise<boolean> {
  if (!(await failMove(env, move, error))) return false;
  try {
    await (await env.MOVES.get(moveInstanceId(move))).terminate();
  } catch {
    // Gone or ended already.
  }
  await undoCopy(env, move);
  // Its instance is terminated before its last step: the stray rows it would have gathered.
  await gatherStrayRowsAfterMove(env, move.home);
  return true;
}

/** After the switch: the instance runs again from its start, which only switches (a repeat) and deletes. */
async function restart(env: Env, move: Move): Promise<void> {
  try {
    await (await env.MOVES.get(moveInstanceId(move))).restart();
  } catch {
    await createMoveInstance(env, move);
  }
}

/** The stall rule and the instance checks above, on `home`'s last move; answers the move as it is then. */
export async function healMove(env: Env, home: string, now: number): Promise<Move | null> {
  const move = await readMove(env, home);
  if (!move) return null;
  if (move.state === "failed") {
    // Not undone yet, or a step of its terminated instance named the target again after the undo.
    if (move.undoneAt === null || (await placementOf(env, home)).movingTo === move.to) {
      await undoCopy(env, move);
      // Its instance may have ended before its last step: the stray rows it would have gathered.
      await gatherStrayRowsAfterMove(env, home);
    }
    return readMove(env, home);
  }
  if (!RUNNING.includes(move.state)) return move;
  const before = BEFORE_SWITCH.includes(move.state);
  const instance = await instanceState(env, move);
  if (instance.state === "gone") {
    await createMoveInstance(env, move);
  } else if (instance.state === "ended") {
    if (before) {
      if (await failMove(env, move, `its Workflow instance is ${instance.status}`)) await gatherStrayRowsAfterMove(env, home);
    } else await restart(env, move);
  } else if (instance.state === "paused") {
    await (await env.MOVES.get(moveInstanceId(move))).resume();
    await stamp(env, move, "its Workflow instance was paused: resumed");
  } else {
    const quiet = now - move.updatedAt;
    if (quiet < moveStallMs(env)) return move;
    if (move.error?.startsWith(NUDGED) && move.error.endsWith(`(${move.updatedAt})`)) {
      // Nudged, and no progress since for as long again: the nudge did not help.
      if (before) {
        await stop(env, move, `no progress for ${Math.round(quiet / 1000)} s after its Workflow instance was resumed`);
      } else {
        await restart(env, move);
        await stamp(env, move, `no progress for ${Math.round(quiet / 1000)} s: its Workflow instance was restarted`);
      }
    } else {
      await nudge(env, move);
      // The stamp's time closes the note: the next look sees whether anything progressed since.
      await stamp(env, move, `${NUDGED} after ${Math.round(quiet / 1000)} s (${now})`, now);
    }
  }
  return readMove(env, home);
}

/**
 * Pause and resume: the engine replays the finished steps from their stored results and runs the
 * one it stopped in again. Pausing waits for a step that still runs; an instance that stalled has
 * none. Not paused in 5 s: a live step; the resume is then a no-op.
 */
async function nudge(env: Env, move: Move): Promise<void> {
  const instance = await env.MOVES.get(moveInstanceId(move));
  await instance.pause();
  for (let i = 0; i < 50 && (await instance.status()).status !== "paused"; i += 1) await scheduler.wait(100);
  await instance.resume();
}

/**
 * `DELETE .../move`: a move before its switch fails with `cancelled` (the copy undone, its instance
 * terminated); after it, `switched`; none running, `none`.
 */
export async function cancelMove(
  env: Env,
  home: string,
): Promise<{ kind: "cancelled" | "switched" | "none"; move: Move | null }> {
  const move = await readMove(env, home);
  if (!move || !RUNNING.includes(move.state)) return { kind: "none", move };
  if (!BEFORE_SWITCH.includes(move.state)) return { kind: "switched", move };
  const failed = await stop(env, move, CANCELLED);
  const after = await readMove(env, home);
  return { kind: failed ? "cancelled" : after?.state === "switched" ? "switched" : "none", move: after };
}

/**
 * The daily reconciliation's part (the Cron Trigger, `index.ts`): every move that runs or was left
 * half undone is healed. One that fails is logged; the next day (or the next look) tries it again.
 */
export async function healMoves(env: Env, now: number): Promise<{ healed: number; failed: number }> {
  const counts = { healed: 0, failed: 0 };
  for (const home of await movesToHeal(env)) {
    try {
      await healMove(env, home, now);
      counts.healed++;
    } catch (error) {
      counts.failed++;
      log.error("a move could not be healed", { home, error: errorField(error) });
    }
  }
  return counts;
}
