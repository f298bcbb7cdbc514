import { reportActivity } from "../directory/activity";
import { storeEventsAtHome } from "../directory/events";
import type { DeliveryOwner, Hold, ReportedIdentity } from "../directory/identity";
import { gatherHeldLogins, holdLeftLogins, learnIdentity } from "../directory/learn";
import { type DeliveryLookup, deliveryHomes, organizationAt, type Place, resolveHome } from "../directory/resolve";
import { MoveRunning, renameRepositoryRows } from "../directory/rows";
import { mainDatabase } from "../directory/shards";
import { githubSync } from "../github/config";
import { callDurable } from "../lib/durable-call";
import { errorField, log } from "../lib/log";
import { messageKey, QueueMessage } from "../schemas/github-changes";
import { parkDelivery } from "../storage/parked";
import { applySignal, isSignal } from "../sync/signals";
import { startSyncAtHome } from "../sync/start";
import { DEAD_LETTER_QUEUE, WEBHOOK_MAX_RETRIES } from "./queues";

export { DEAD_LETTER_QUEUE, WEBHOOK_QUEUE } from "./queues";

/** Retry delay after the n-th failed attempt: 10 s, 20 s, 40 s, ... at most 10 minutes. */
export const backoffSeconds = (attempts: number): number => Math.min(600, 10 * 2 ** Math.max(0, attempts - 1));

/**
 * The Worker's `queue()` handler. Webhook messages are applied one by one and acknowledged each;
 * a failure retries that message alone with backoff (after `max_retries` the queue parks it in the
 * dead-letter queue). Messages of the dead-letter queue are copied to D1 for the control plane.
 */
export async function handleQueue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  if (batch.queue === DEAD_LETTER_QUEUE) return parkBatch(batch, env);
  for (const message of batch.messages) {
    const parsed = QueueMessage.safeParse(message.body);
    try {
      if (!parsed.success) {
        // Retrying cannot make it fit: park it at once.
        log.error("webhook message does not fit the schema; parked", {
          id: message.id,
          issues: parsed.error.issues.slice(0, 5),
        });
        await park(env, message);
      } else {
        await applyMessage(env, parsed.data);
      }
      message.ack();
    } catch (error) {
      if (error instanceof MoveRunning && (await waitForMove(env, message, error))) continue;
      const delaySeconds = backoffSeconds(message.attempts);
      log.error("webhook message failed; retried", {
        id: parsed.success ? messageKey(parsed.data) : message.id,
        attempts: message.attempts,
        delaySeconds,
        error: errorField(error),
      });
      message.retry({ delaySeconds });
    }
  }
}

/** How long a message that waits for an organization's move between shards sleeps before it is tried again. */
export const MOVE_WAIT_SECONDS = 60;

/**
 * A message that must wait while its organization moves between shards (a repository rename's rows,
 * `directory/rows.ts`): a move of a large organization takes longer than the retries' backoff in
 * all (about 5 minutes before the dead-letter queue), so the message is sent again as a new one,
 * with its attempts not spent, and this one acknowledged. Applying is idempotent (the object's
 * ledger), so a send whose acknowledgement is lost only applies it twice to the same effect.
 * Answers false when the send failed: the message is then retried as any failure.
 */
async function waitForMove(env: Env, message: Message<unknown>, error: MoveRunning): Promise<boolean> {
  try {
    await env.WEBHOOKS.send(message.body, { contentType: "json", delaySeconds: MOVE_WAIT_SECONDS });
  } catch {
    return false;
  }
  log.warn("webhook message waits for a move between shards", { id: message.id, reason: error.message });
  message.ack();
  return true;
}

/**
 * Applies one message, idempotently: organization changes through the organization's object (its
 * ledger makes a second application a no-op), pull requests through the versioned event upsert
 * (an older or equal `updated_at` writes nothing). Throws when a store failed: the message is retried.
 *
 * The organization is found by GitHub's account id first, else by login (`directory/resolve.ts`
 * `deliveryHomes`); a rename also tries its `from` login. An installation for a login whose object is another
 * organization's gets a home of its own. After a change of the organization's identity (created,
 * renamed, account id learned) the directory in D1 learns it, and the rows stored under the login's
 * folded key before it did (events that used a new login early) join the organization; a retry
 * that finds the change already applied does both again, so a failure between the object and D1
 * converges.
 */
export async function applyMessage(env: Env, m: QueueMessage): Promise<void> {
  const accountId = m.accountId ?? null;
  const owner: DeliveryOwner = { accountId, installationId: m.installationId ?? null };
  const change = m.change;
  if (change.kind === "pull_request") {
    const { place, answer: repo } = await resolveHome<RepositoryAnswer>(
      deliveryHomes(env, { accountId, login: m.org }),
      ({ home }) =>
        callDurable(() => organizationAt(env, home).repositoryName(m.org, owner, change.repositoryId), { idempotent: true }),
      (answer) => answer.here,
    );
    if (!repo.here) throw notYetKnown(m, place.home);
    const event = repo.name === null ? change.event : { ...change.event, repo: repo.name };
    const stored = await storeEventsAtHome(env, [event], { login: m.org, home: place.home });
    await reportActivity(env, stored.activity, { assign: true, correlationId: messageKey(m) });
    return;
  }
  const lookup: DeliveryLookup = { accountId, login: m.org };
  if (change.kind === "organization_renamed") lookup.from = change.from;
  if (change.kind === "installation_created") lookup.installationId = change.installationId;
  // A signal (sync on; contract section 17) records only its ledger entry here: GitHub's state follows.
  const signal = isSignal(env, m);
  const apply = ({ home }: Place) =>
    callDurable<ChangeAnswer>(
      () =>
        organizationAt(env, home).applyGithubChange(
          messageKey(m),
          { home, login: m.org },
          owner,
          change,
          signal,
          m.receivedAt ?? null,
        ),
      { idempotent: true },
    );
  const { place, answer: result } = await resolveHome(
    deliveryHomes<ChangeAnswer>(env, lookup),
    apply,
    (a) => a.kind === "applied",
  );
  const home = place.home;
  if (result.kind !== "applied") throw notYetKnown(m, home);
  // A rename sets apart the rows under the login it leaves before anything else (`held_logins`);
  // a failure there does not keep the directory from learning the new login: it is thrown after.
  const isRename = change.kind === "organization_renamed";
  const holdFailure = isRename
    ? await holdLeftLogins(env, home, result.holds, messageKey(m)).then(
        () => null,
        (error: unknown) => ({ error }),
      )
    : null;
  if (result.directory) await learnIdentity(env, result.directory);
  for (const rename of result.renames) {
    // "already followed" too: another consumer, replaying the log, moved the rows for this entry.
    await renameRepositoryRows(env, home, rename.fromKey, rename.toName, rename.seq);
    await callDurable(() => organizationAt(env, home).renameFollowed(rename.seq), { idempotent: true });
  }
  if (isRename) {
    if (holdFailure !== null) throw holdFailure.error;
    await gatherHeldLogins(env, home);
  }
  // Also on a retry that finds the ledger entry: the read of GitHub is what the message is for.
  if (signal && result.installation) await applySignal(env, home, result.installation, m);
  await syncAfter(env, home, m);
}

/**
 * An installation created (also a reinstall) or unsuspended starts an installation sync when sync
 * with GitHub's API is configured (contract section 17). Keyed by the message's ledger key, so a
 * retried message finds the sync it started instead of starting another; also after an earlier
 * attempt that applied the change and failed before the sync started.
 */
async function syncAfter(env: Env, home: string, m: QueueMessage): Promise<void> {
  const { change } = m;
  const trigger =
    change.kind === "installation_created"
      ? "installation"
      : change.kind === "installation_suspended" && !change.blocked
        ? "unsuspend"
        : null;
  if (trigger === null) return;
  const sync = githubSync(env);
  if (sync.kind === "misconfigured") log.error("GitHub sync is misconfigured; no installation sync", { reason: sync.reason });
  if (sync.kind !== "on") return;
  await startSyncAtHome(env, home, { kind: trigger, key: messageKey(m) });
}

/** `OrganizationObject.repositoryName`: whether the object is the delivery's organization, and the repository's current name. */
type RepositoryAnswer = { here: boolean; name: string | null };

/**
 * `OrganizationObject.applyGithubChange`, as far as the consumer reads it (checked against the
 * object's answer where it is called): applied, with the repository renames still to follow in D1
 * and the identity the directory must learn; or not this organization's object.
 */
type ChangeAnswer =
  | {
      kind: "applied";
      renames: { seq: number; fromKey: string; toName: string }[];
      holds: Hold[];
      installation: { id: number; login: string } | null;
      directory: ReportedIdentity | null;
    }
  | { kind: "taken" }
  | { kind: "elsewhere" };

/**
 * The object the delivery resolved to is another organization's, and neither the account id nor
 * the directory knows this one yet: usually its installation is still on its way. Retried with
 * backoff; parked if that never changes.
 */
const notYetKnown = (m: QueueMessage, home: string) =>
  new Error(`organization ${m.org} (account ${m.accountId ?? "unknown"}) is not the one at ${home} and has no home yet`);

async function parkBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      // The dead-letter queue counts its own attempts from 1: what gave up was the main queue.
      await park(env, message, WEBHOOK_MAX_RETRIES + 1);
      log.error("webhook message parked in the dead-letter queue", { id: message.id });
      message.ack();
    } catch (error) {
      log.error("parking a webhook message failed; retried", { id: message.id, error: errorField(error) });
      message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }
}

/** Keeps a copy for the control plane; `attempts`: how often applying it was tried. */
function park(env: Env, message: Message<unknown>, attempts = message.attempts): Promise<void> {
  const body = message.body as { delivery?: unknown; part?: unknown; event?: unknown };
  const known = typeof body?.delivery === "string" && typeof body.part === "number";
  return parkDelivery(mainDatabase(env), {
    id: known ? messageKey({ delivery: body.delivery as string, part: body.part as number }) : message.id,
    delivery: typeof body?.delivery === "string" ? body.delivery : message.id,
    event: typeof body?.event === "string" ? body.event : "unknown",
    message: message.body,
    attempts,
    parkedAt: Date.now(),
  });
}
