import { organizationAt } from "../directory/resolve";
import type { ClientOptions } from "../github/client";
import { callDurable, type DurableResult } from "../lib/durable-call";
import type { SyncTrigger } from "../schemas/sync";

/** What a sync's Workflow instance is given: where, which sync, which installation; `options` only in tests. */
export interface SyncParams {
  home: string;
  syncId: number;
  installationId: number;
  /** The daily reconciliation: repositories, members and collaborators, no history. */
  reconcile?: boolean;
  options?: ClientOptions;
}

/**
 * One Workflow instance per sync, named after the organization's home and the sync's number. An
 * allocated home's `~` (`identity.ts`) is not allowed in an instance id (letters, digits, `-`, `_`);
 * `_` never occurs in a GitHub login, so the name stays unique.
 */
export const syncInstanceId = (home: string, syncId: number): string => `${home.replace("~", "_")}-${syncId}`;

/** `OrganizationObject.beginSync`'s answer, as far as the callers read it (checked where it is called). */
export type SyncBegin =
  | { kind: "not_installed" }
  | {
      kind: "in_progress";
      run: { id: number; trigger: SyncTrigger; startedAt: string };
      home: string;
      created: boolean;
      progressAt: number;
    }
  | { kind: "started"; run: { id: number; trigger: SyncTrigger }; home: string; installationId: number; created: boolean };

/** A run whose instance was never created is left alone this long (its trigger may be creating it now). */
const UNCREATED_GRACE_MS = 10 * 60_000;

/** `SYNC_STALL_SECONDS` (default 1800): how long a running sync may report nothing before a trigger nudges it. */
export function stallMs(env: { SYNC_STALL_SECONDS?: string }): number {
  const text = env.SYNC_STALL_SECONDS?.trim() || "1800";
  if (!/^\d{1,6}$/.test(text)) throw new Error("SYNC_STALL_SECONDS must be a whole number of seconds (0 to 999999)");
  return Number(text) * 1000;
}

/**
 * What the Workflow instance of a run still `running` is: gone (never created, or no longer known
 * to the engine) or ended (errored, terminated, or complete without recording it), with the reason:
 * the row would refuse every new sync for ever; or alive, with its status.
 */
async function instanceOf(
  env: Env,
  home: string,
  running: { run: { id: number; startedAt: string }; created: boolean },
  now: number,
): Promise<{ kind: "ended"; reason: string } | { kind: "alive"; status: InstanceStatus["status"] } | null> {
  const { run, created } = running;
  let status: InstanceStatus["status"];
  try {
    status = (await (await env.SYNC.get(syncInstanceId(home, run.id))).status()).status;
  } catch {
    // Created and now unknown (terminated under `wrangler dev`, or past the engine's retention): gone.
    const gone = created || now - Date.parse(run.startedAt) > UNCREATED_GRACE_MS;
    return gone ? { kind: "ended", reason: "its Workflow instance does not exist" } : null;
  }
  const ended = status === "errored" || status === "terminated" || status === "complete";
  return ended ? { kind: "ended", reason: `its Workflow instance is ${status}` } : { kind: "alive", status };
}

/**
 * An instance that says it runs but has reported nothing for the stall time (one interrupted by a
 * restart that the engine did not wake again: Miniflare's never does), or one left paused, is paused
 * and resumed: the engine then replays its finished steps from their stored results and goes on
 * from the step it stopped in. A live instance nudged by mistake only waits for its current step.
 * The nudge is recorded as the run's last error, which also restarts its stall time.
 */
async function nudgeStalled(
  env: Env,
  home: string,
  running: { run: { id: number }; progressAt: number },
  status: string,
  now: number,
) {
  const quiet = now - running.progressAt;
  const stalled = (status === "running" || status === "queued") && quiet >= stallMs(env);
  if (!stalled && status !== "paused") return;
  const instance = await env.SYNC.get(syncInstanceId(home, running.run.id));
  if (status !== "paused") {
    await instance.pause();
    // Pausing waits for a step that still runs; an instance that stalled has none. Not paused in
    // 5 s: a live step; the resume below is then a no-op and the next trigger resumes it.
    for (let i = 0; i < 50 && (await instance.status()).status !== "paused"; i += 1) await scheduler.wait(100);
  }
  await instance.resume();
  const message =
    status === "paused"
      ? "its Workflow instance was paused: resumed"
      : `no progress for ${Math.round(quiet / 1000)} s: its Workflow instance was paused and resumed, going on from its last finished step`;
  await callDurable(() => organizationAt(env, home).recordSync(running.run.id, { kind: "error", step: "sync", message }), {
    idempotent: true,
  });
}

/**
 * Starts an installation sync at the object `begin` reaches: the object's compare-and-set decides
 * (one at a time; the trigger's own run again for a retried trigger), then the Workflow instance is
 * created unless the object says it exists, and the object learns it does. A failure in between is
 * finished by the trigger's retry (the webhook message, the request): the object answers the same
 * run, not yet created.
 */
export async function startSync<T extends SyncBegin>(
  env: Env,
  begin: () => Promise<DurableResult<T>>,
  options?: ClientOptions,
): Promise<DurableResult<T>> {
  let answer = await begin();
  if (answer.ok && answer.value.kind === "in_progress") {
    // A row left running by an instance that is gone is closed as failed, then the trigger starts
    // anew; an instance that lives but stalled is nudged (and the trigger answers the running sync).
    const { home, run } = answer.value;
    const now = Date.now();
    const instance = await instanceOf(env, home, answer.value, now);
    if (instance?.kind !== "ended") {
      if (instance) await nudgeStalled(env, home, answer.value, instance.status, now);
      return answer;
    }
    const error = { step: "sync", message: `closed by a later trigger: ${instance.reason}` };
    await callDurable(() => organizationAt(env, home).recordSync(run.id, { kind: "finish", state: "failed", error }), {
      idempotent: true,
    });
    answer = await begin();
  }
  if (!answer.ok || answer.value.kind !== "started" || answer.value.created) return answer;
  const { home, run, installationId } = answer.value;
  const params: SyncParams = {
    home,
    syncId: run.id,
    installationId,
    ...(run.trigger === "reconcile" ? { reconcile: true } : {}),
    ...(options ? { options } : {}),
  };
  await env.SYNC.create({ id: syncInstanceId(home, run.id), params });
  await callDurable(() => organizationAt(env, home).recordSync(run.id, { kind: "created" }), { idempotent: true });
  return answer;
}

/** The webhook consumer's start, at the home it resolved the delivery to; `key`: the message's ledger key. */
export const startSyncAtHome = (env: Env, home: string, trigger: { kind: SyncTrigger; key: string }, options?: ClientOptions) =>
  startSync(
    env,
    () => callDurable<DurableResult<SyncBegin>>(() => organizationAt(env, home).beginSync(null, trigger), { idempotent: true }),
    options,
  );
