import { z } from "zod";
import { InstantOutput } from "./common";

/**
 * An installation sync with GitHub's API (contract section 17): what `GET`/`POST
 * /internal/v1/organizations/{org}/sync` show, and the shapes the organization's object stores.
 */

export const SYNC_STEPS = ["repositories", "members", "collaborators", "pullRequests"] as const;
export type SyncStepName = (typeof SYNC_STEPS)[number];

export const SYNC_TRIGGERS = ["installation", "unsuspend", "api", "reconcile"] as const;
export type SyncTrigger = (typeof SYNC_TRIGGERS)[number];
export type SyncState = "running" | "complete" | "failed";

/** One step's progress: `count` is what it read from GitHub and stored so far. */
export interface SyncStepProgress {
  state: "pending" | "running" | "done";
  count: number;
}
export type SyncSteps = Record<SyncStepName, SyncStepProgress>;

/** The last failure of the sync (a step retried since keeps it until the sync ends). */
export interface SyncFailure {
  step: string;
  message: string;
  /** Epoch ms. */
  at: number;
}

const Step = z
  .object({
    state: z.enum(["pending", "running", "done"]),
    count: z.number().int().min(0).meta({ description: "Records read from GitHub and stored by the step so far." }),
  })
  .meta({ id: "SyncStep" });

export const SyncRun = z
  .object({
    id: z.number().int().min(1).meta({ description: "The organization's sync number: 1, 2, ..." }),
    trigger: z.enum(SYNC_TRIGGERS).meta({
      description:
        "What started it: GitHub's `installation` created (or a reinstall), unsuspend, `POST .../sync`, or the daily reconciliation (`reconcile`: repositories, members and collaborators, no history).",
    }),
    state: z.enum(["running", "complete", "failed"]),
    startedAt: InstantOutput,
    finishedAt: InstantOutput.nullable(),
    steps: z
      .object({ repositories: Step, members: Step, collaborators: Step, pullRequests: Step })
      .meta({ description: "Counts per step; members and repositories are usable as soon as their step is done." }),
    lastError: z
      .object({ step: z.string().max(60), message: z.string().max(500), at: InstantOutput })
      .nullable()
      .meta({ description: "The last failure; a step that failed is retried with backoff, so a running sync may show one." }),
  })
  .meta({ id: "SyncRun" });
export type SyncRun = z.output<typeof SyncRun>;

export const SyncStatus = z
  .object({
    running: SyncRun.nullable().meta({ description: "The sync in progress, if any." }),
    last: SyncRun.nullable().meta({ description: "The last finished sync, if any." }),
  })
  .meta({ id: "SyncStatus" });
export type SyncStatus = z.output<typeof SyncStatus>;
