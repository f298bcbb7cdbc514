import { type Move, moveInstanceId, RUNNING, recordMove } from "../directory/moves";

/**
 * Starts a move (`POST /internal/v1/organizations/{org}/move`): the move is recorded first (one
 * running per organization), then its Workflow instance is created. A running move whose instance
 * is missing (a failure between the two) gets it now: a repeated POST heals it.
 */
export async function startMove(
  env: Env,
  at: { home: string; login: string },
  from: string,
  to: string,
): Promise<{ kind: "started"; move: Move } | { kind: "in_progress"; move: Move }> {
  const { created, move } = await recordMove(env, at, from, to, Date.now());
  if (created) {
    await createInstance(env, move);
    return { kind: "started", move };
  }
  if (RUNNING.includes(move.state) && !(await instanceExists(env, move))) await createInstance(env, move);
  return { kind: "in_progress", move };
}

const createInstance = (env: Env, move: Move) =>
  env.MOVES.create({ id: moveInstanceId(move), params: { home: move.home, startedAt: move.startedAt } });

async function instanceExists(env: Env, move: Move): Promise<boolean> {
  try {
    await env.MOVES.get(moveInstanceId(move));
    return true;
  } catch {
    return false;
  }
}
