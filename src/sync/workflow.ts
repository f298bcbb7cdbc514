import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import { GithubError } from "../github/errors";
import { HISTORY_START, type HistoryCursor, type Repo, SyncJob, type Walk } from "./job";
import type { SyncParams } from "./start";

/**
 * An installation sync as a Cloudflare Workflow (docs/architecture.md, "Installation sync"): one
 * instance per sync (`<home key>-<n>`), one `step.do` per bounded piece of work. The engine keeps
 * each finished step's result, so an instance that stopped (a restart, a deploy, a step that failed
 * and is retried) resumes at the step it stopped in. A step that fails is retried with backoff; a
 * GitHub rate limit longer than the client waits in place becomes a `step.sleep` until GitHub says,
 * then the step again: a limit delays the sync, never fails it.
 */

const STEP: WorkflowStepConfig = {
  retries: { limit: 5, delay: "10 seconds", backoff: "exponential" },
  timeout: "10 minutes",
};

const DAY_MS = 86_400_000;

type Outcome<T> = { kind: "done"; value: T } | { kind: "wait"; seconds: number; message: string } | { kind: "ended" };

/** GitHub answered what no retry mends (the installation is gone, a permission is missing): the sync ends failed. */
class SyncEnded extends Error {}

/**
 * The engine stopping the instance (paused, restarted, terminated, or evicted while it sleeps):
 * not the sync's failure, and not the progress record's to close. Miniflare's engine aborts the
 * run with these messages; the instance goes on when resumed, and a later trigger closes a run
 * whose instance ended (`start.ts`).
 */
const engineStopped = (error: unknown): boolean => error instanceof Error && error.message.startsWith("Aborting engine:");

export class SyncWorkflow extends WorkflowEntrypoint<Env, SyncParams> {
  override async run(event: WorkflowEvent<SyncParams>, step: WorkflowStep): Promise<{ state: "complete" | "failed" }> {
    const job = new SyncJob(this.env, event.payload);
    // The window is fixed when the sync starts: a replayed run computes the same one.
    const since = event.timestamp.getTime() - job.backfillDays * DAY_MS;
    try {
      const account = await this.#step(step, job, "installation", () => job.installation());
      const { login, repositories } = await this.#step(step, job, "repositories", () => job.repositories());
      await this.#step(step, job, "members", () => job.members(account));

      const privates = repositories.filter((r) => r.private);
      await this.#walk<number>(step, job, "collaborators", 0, (from, before) =>
        job.collaborators(account.login, privates, from, before),
      );
      // The daily reconciliation corrects drift; the history is the webhooks' and the installation sync's.
      if (!event.payload.reconcile) {
        await this.#walk<HistoryCursor>(step, job, "pull requests", HISTORY_START, (from, before) =>
          job.pullRequests({ login }, repositories as Repo[], from, before, since),
        );
      }
      await step.do("finish", STEP, () => job.record({ kind: "finish", state: "complete" }));
      return { state: "complete" };
    } catch (error) {
      if (engineStopped(error)) throw error;
      // Retries spent, or a failure no retry mends: the progress record says so. Only the first
      // makes the instance err (an operator should look); the second is GitHub's answer.
      await step.do("record the failure", STEP, () => job.record({ kind: "finish", state: "failed" }));
      if (error instanceof SyncEnded) return { state: "failed" };
      throw error;
    }
  }

  /**
   * One step of the sync. GitHub's `rate_limited` (a wait longer than the client sits through)
   * is answered as a wait, not thrown: the instance sleeps until GitHub's time, then runs the step
   * again under a new name (step results are kept by name).
   */
  async #step<T extends Rpc.Serializable<T>>(step: WorkflowStep, job: SyncJob, name: string, work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const label = attempt === 1 ? name : `${name} (after rate limit ${attempt - 1})`;
      const outcome = await step.do(label, STEP, async (): Promise<Outcome<T>> => {
        try {
          return { kind: "done", value: await work() } as Outcome<T>;
        } catch (error) {
          if (error instanceof GithubError && error.kind === "rate_limited") {
            return { kind: "wait", seconds: error.details.retryAfterSeconds ?? 60, message: error.message };
          }
          await job.failed(label, error);
          return { kind: "ended" };
        }
      });
      if (outcome.kind === "done") return outcome.value;
      if (outcome.kind === "ended") throw new SyncEnded(label);
      await step.do(`${label}: rate limited`, STEP, () =>
        job.record({ kind: "error", step: label, message: `${outcome.message}; resuming then` }),
      );
      await step.sleep(`${label}: wait for GitHub`, Math.max(1, outcome.seconds) * 1000);
    }
  }

  /** A walk over many steps, each continuing from the cursor the previous one answered. */
  async #walk<C extends Rpc.Serializable<C>>(
    step: WorkflowStep,
    job: SyncJob,
    name: string,
    start: C,
    work: (from: C, before: number) => Promise<Walk<C>>,
  ): Promise<number> {
    let at: Walk<C> = { next: start, count: 0 };
    for (let n = 1; at.next !== null; n++) {
      const { next, count } = at;
      const from = next;
      at = (await this.#step(step, job, `${name} ${n}`, () => work(from, count))) as Walk<C>;
    }
    return at.count;
  }
}
