import { gatherCurrentLogin } from "../directory/learn";
import { errorField, log } from "../lib/log";

/**
 * The stray rows under the organization's current login gathered once its move between shards has
 * ended, done or failed (`directory/learn.ts` `gatherCurrentLogin`: the event write path's gathers
 * that met the running move left them). Never fails the move: an error is logged, and the next gather (any
 * later move's end, a rename's, a batch's that sees the directory change) takes the rows along.
 * Answers whether it gathered everything.
 */
export async function gatherStrayRowsAfterMove(env: Env, home: string): Promise<boolean> {
  try {
    await gatherCurrentLogin(env, home);
    return true;
  } catch (error) {
    log.warn("stray rows not gathered after a move between shards", { home, error: errorField(error) });
    return false;
  }
}
