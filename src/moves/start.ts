import { type Move, recordMove } from "../directory/moves";
import { createMoveInstance } from "./heal";

/**
 * Starts a move (`POST /internal/v1/organizations/{org}/move`): the organization's last move is
 * healed first (`heal.ts`: one stuck is resumed or failed, so that a POST then starts a fresh
 * move), then the move is recorded (one running per organization) and its Workflow instance
 * created. A failure between the two leaves an instance missing, which the next look creates.
 */
export async function startMove(
  env: Env,
  at: { home: string; login: string },
  from: string,
  to: string,
  now: number,
): Promise<{ kind: "started"; move: Move } | { kind: "in_progress"; move: Move }> {
  const { created, move } = await recordMove(env, at, from, to, now);
  if (!created) return { kind: "in_progress", move };
  await createMoveInstance(env, move);
  return { kind: "started", move };
}
