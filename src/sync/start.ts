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
  | { kind: "in_progress"; run: { id: number; trigger: SyncTrigger; startedAt: string }; home: string; created: boolean }
  | { kind: "started"; run: { id: number; trigger: SyncTrigger }; home: string; installationId: number; created: boolean };

/** A run whose instance was never created is left alone this long (its trigger may be creating it now). */
const UNCREATED_GRACE_MS = 10 * 60_000;

/**
 * Whether the Workflow instance of a run still `running` is gone (never created, or no longer
 * known to the engine) or ended (errored, terminated, or complete without recording it): the row
 * would refuse every new sync for ever. Answers the reason, or null while the instance lives.
 */
async function endedInstance(
  env: Env,
  home: string,
  running: { run: { id: number; startedAt: string }; created: boolean },
  now: number,
): Promise<string | null> {
  const { run, created } = running;
  let status: InstanceStatus["status"];
  try {
    status = (await (await env.SYNC.get(syncInstanceId(home, run.id))).status()).status;
  } catch {
    // Created and now unknown (terminated under `wrangler dev`, or past the engine's retention): gone.
    const gone = created || now - Date.parse(run.startedAt) > UNCREATED_GRACE_MS;
    return gone ? "its Workflow instance does not exist" : null;
  }
  return status === "errored" || status === "terminated" || status === "complete" ? `its Workflow instance is ${status}` : null;
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
    // A row left running by an instance that is gone is closed as failed, then the trigger starts anew.
    const { home, run } = answer.value;
    const reason = await endedInstance(env, home, answer.value, Date.now());
    if (reason === null) return answer;
    const error = { step: "sync", message: `closed by a later trigger: ${reason}` };
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
