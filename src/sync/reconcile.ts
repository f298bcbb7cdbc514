import { mainDatabase } from "../directory/shards";
import { installationHomesAfter } from "../directory/store";
import { githubSync } from "../github/config";
import { errorField, log } from "../lib/log";
import { startSyncAtHome } from "./start";

/**
 * The daily reconciliation (contract section 17): a Cron Trigger (`[triggers]` in wrangler.toml)
 * starts, for every organization with an installation, a sync with trigger `reconcile` (the same
 * Workflow: repositories, members, collaborators; no history), which corrects whatever drifted
 * from GitHub (a delivery lost, a change made through the control plane, an order a signal could
 * not see), each member correction audited with source `github`. One at a time per organization:
 * one still running (an installation sync) refuses it, and that one reads the same.
 */

/** Homes read from the directory per query. */
const HOMES_PER_PAGE = 200;

/**
 * Starts the reconciliation of every installed organization; `run`: the scheduled time, which keys
 * the triggers (a retried cron invocation finds the syncs it started). An organization that fails is
 * logged and the walk goes on: the next day's run tries it again. Answers how many started.
 */
export async function reconcileAll(env: Env, run: number): Promise<{ started: number; skipped: number; failed: number }> {
  const counts = { started: 0, skipped: 0, failed: 0 };
  const sync = githubSync(env);
  if (sync.kind === "misconfigured") log.error("GitHub sync is misconfigured; no reconciliation", { reason: sync.reason });
  if (sync.kind !== "on") return counts;
  const key = `reconcile-${new Date(run).toISOString()}`;
  for (let after = ""; ; ) {
    const homes = await installationHomesAfter(mainDatabase(env), after, HOMES_PER_PAGE);
    for (const home of homes) {
      try {
        const answer = await startSyncAtHome(env, home, { kind: "reconcile", key });
        if (answer.ok && answer.value.kind === "started") counts.started++;
        else counts.skipped++;
      } catch (error) {
        counts.failed++;
        log.error("reconciliation could not start", { home, error: errorField(error) });
      }
    }
    if (homes.length < HOMES_PER_PAGE) break;
    after = homes[homes.length - 1] as string;
  }
  log.info("reconciliation started", { key, ...counts });
  return counts;
}
