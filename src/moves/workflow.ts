import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import { beginMove, catchUp, copySome, failMove, finishMove, type Move, readMove, switchOver } from "../directory/moves";

/**
 * A move of an organization between analytics shards as a Cloudflare Workflow (docs/architecture.md,
 * "Shards"): the engine keeps each finished step's result and resumes a stopped instance (a crash,
 * a deploy) at the step it stopped in; every step is idempotent (`directory/moves.ts`) and reads the
 * move's recorded position, so a step run twice copies nothing twice. Chosen over the
 * organization object's alarm (which already paces the members' index updates) and a queue (which
 * would need its own progress record and ordering): the sync already runs this way.
 */

const STEP: WorkflowStepConfig = {
  retries: { limit: 5, delay: "5 seconds", backoff: "exponential" },
  timeout: "5 minutes",
};

/**
 * How long one copy (or delete) step runs before it records its position and hands over to the
 * next: about 250 steps for the largest organization a shard can hold (Workflows allow 10,000 by
 * default), and a crash loses at most this much work. Under `wrangler dev` the Worker's other
 * requests (even /healthz) wait while a step of the local Workflow runs (bench:shards; shorter
 * steps with a sleep between only doubled the move's time there); deployed, an instance runs apart
 * from the Worker's requests.
 */
const COPY_STEP_MS = 20_000;

/** The copy passes of the catching up at most (a second one only when a write was still on its way). */
const CATCH_UP_PASSES = 2;

export interface MoveParams {
  home: string;
  startedAt: number;
}

export class MoveWorkflow extends WorkflowEntrypoint<Env, MoveParams> {
  override async run(event: WorkflowEvent<MoveParams>, step: WorkflowStep): Promise<{ state: "done" | "failed" }> {
    const { home, startedAt } = event.payload;
    const current = async (): Promise<Move> => {
      const move = await readMove(this.env, home);
      if (!move || move.startedAt !== startedAt) throw new Error(`the move of ${home} started at ${startedAt} is not recorded`);
      return move;
    };
    let switched = false;
    try {
      await step.do("begin", STEP, async () => beginMove(this.env, await current()));
      await this.#copy(step, "copy", current);
      for (let pass = 1; pass <= CATCH_UP_PASSES; pass++) {
        const caughtUp = await step.do(`catch up ${pass}`, STEP, async () => catchUp(this.env, await current()));
        if (caughtUp) break;
        await this.#copy(step, `copy again ${pass}`, current);
      }
      await step.do("switch", STEP, async () => switchOver(this.env, await current()));
      switched = true;
      for (let n = 1; ; n++) {
        const done = await step.do(`delete the source rows ${n}`, STEP, async () =>
          finishMove(this.env, await current(), COPY_STEP_MS),
        );
        if (done) break;
      }
      return { state: "done" };
    } catch (error) {
      const message = switched ? `switched; deleting the source rows failed: ${String(error)}` : String(error);
      await step.do("record the failure", STEP, async () => failMove(this.env, await current(), message));
      return { state: "failed" };
    }
  }

  /** Copy steps until the copy reached the end, each about COPY_STEP_MS. */
  async #copy(step: WorkflowStep, name: string, current: () => Promise<Move>): Promise<void> {
    for (let n = 1; ; n++) {
      const done = await step.do(`${name} ${n}`, STEP, async () => copySome(this.env, await current(), COPY_STEP_MS));
      if (done) return;
    }
  }
}
