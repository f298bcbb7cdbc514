import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import { NonRetryableError } from "cloudflare:workflows";
import {
  BEFORE_SWITCH,
  beginMove,
  catchUp,
  copySome,
  failMove,
  finishMove,
  type Move,
  MoveEnded,
  readMove,
  switchOver,
} from "../directory/moves";
import { gatherStrayRowsAfterMove } from "./gather";

/**
 * A move of an organization between analytics shards as a Cloudflare Workflow (docs/architecture.md,
 * "Shards"): the engine keeps each finished step's result and resumes a stopped instance (a crash,
 * a deploy) at the step it stopped in; every step is idempotent (`directory/moves.ts`) and reads the
 * move's recorded position, so a step run twice copies nothing twice. Chosen over the
 * organization object's alarm (which already paces the members' index updates) and a queue (which
 * would need its own progress record and ordering): the sync already runs this way. An instance
 * the engine does not wake, loses or ends early is resumed, restarted or failed by `heal.ts`.
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

/**
 * The engine stopping the instance (paused, restarted, terminated): not the move's failure. Miniflare's
 * engine aborts the run with these messages; the instance goes on when resumed (`heal.ts`).
 */
const engineStopped = (error: unknown): boolean => error instanceof Error && error.message.startsWith("Aborting engine:");

export interface MoveParams {
  home: string;
  startedAt: number;
}

export class MoveWorkflow extends WorkflowEntrypoint<Env, MoveParams> {
  override async run(event: WorkflowEvent<MoveParams>, step: WorkflowStep): Promise<{ state: "done" | "failed" }> {
    const { home, startedAt } = event.payload;
    const current = async (): Promise<Move> => {
      const move = await readMove(this.env, home);
      if (!move || move.startedAt !== startedAt)
        throw new NonRetryableError(`the move of ${home} started at ${startedAt} is not recorded`);
      return move;
    };
    /** A step before the switch: a move failed (cancelled) meanwhile stops at once. */
    const running = async (): Promise<Move> => {
      const move = await current();
      if (!BEFORE_SWITCH.includes(move.state)) throw new NonRetryableError(`the move of ${home} is ${move.state}`);
      return move;
    };
    // A move that ended meanwhile (cancelled) is not retried: the step stops the run at once.
    const guarded =
      <T>(work: () => Promise<T>) =>
      async (): Promise<T> => {
        try {
          return await work();
        } catch (error) {
          throw error instanceof MoveEnded ? new NonRetryableError(error.message) : error;
        }
      };
    // A restarted instance (`heal.ts`) of a move that switched already only finishes it.
    const at = await step.do(
      "read",
      STEP,
      guarded(async () => (await current()).state),
    );
    if (at === "done" || at === "failed") return { state: at };
    try {
      if (BEFORE_SWITCH.includes(at)) {
        await step.do(
          "begin",
          STEP,
          guarded(async () => beginMove(this.env, await running())),
        );
        await this.#copy(step, guarded, "copy", running);
        for (let pass = 1; pass <= CATCH_UP_PASSES; pass++) {
          const caughtUp = await step.do(
            `catch up ${pass}`,
            STEP,
            guarded(async () => catchUp(this.env, await running())),
          );
          if (caughtUp) break;
          await this.#copy(step, guarded, `copy again ${pass}`, running);
        }
      }
      await step.do(
        "switch",
        STEP,
        guarded(async () => switchOver(this.env, await current())),
      );
    } catch (error) {
      if (engineStopped(error)) throw error;
      // Before the switch: failed, the copy undone (a cancel already did both; this repeats the
      // undo). A switch that claimed its state and then failed must be completed, never undone:
      // the instance errors, and `heal.ts` restarts it (which switches again, then deletes).
      const failed = await step.do(
        "record the failure",
        STEP,
        guarded(async () => failMove(this.env, await current(), String(error))),
      );
      const state = failed
        ? "failed"
        : await step.do(
            "read again",
            STEP,
            guarded(async () => (await current()).state),
          );
      if (state === "failed") {
        await step.do("gather stray rows", STEP, () => gatherStrayRowsAfterMove(this.env, home));
        return { state: "failed" };
      }
      throw error;
    }
    // After the switch the move only finishes: a step that keeps failing errors the instance,
    // which `heal.ts` restarts.
    for (let n = 1; ; n++) {
      const done = await step.do(
        `delete the source rows ${n}`,
        STEP,
        guarded(async () => finishMove(this.env, await current(), COPY_STEP_MS)),
      );
      if (done) break;
    }
    await step.do("gather stray rows", STEP, () => gatherStrayRowsAfterMove(this.env, home));
    return { state: "done" };
  }

  /** Copy steps until the copy reached the end, each about COPY_STEP_MS. */
  async #copy(
    step: WorkflowStep,
    guarded: (work: () => Promise<boolean>) => () => Promise<boolean>,
    name: string,
    current: () => Promise<Move>,
  ): Promise<void> {
    for (let n = 1; ; n++) {
      const done = await step.do(
        `${name} ${n}`,
        STEP,
        guarded(async () => copySome(this.env, await current(), COPY_STEP_MS)),
      );
      if (done) return;
    }
  }
}
