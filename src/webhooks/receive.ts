import { z } from "zod";
import { mainDatabase } from "../directory/shards";
import { parseJsonObject } from "../http/body";
import { AppError, badRequest, inStore, storageFailure } from "../lib/errors";
import { errorField, type Logger } from "../lib/log";
import type { QueueMessageInput } from "../schemas/github-changes";
import { parkDelivery } from "../storage/parked";
import { eventName, reduceDelivery } from "./reduce";

/** GitHub sends payloads up to 25 MB; the route takes up to 25 MiB. */
export const WEBHOOK_MAX_BODY = 25 * 1024 * 1024;

/** A delivery id is remembered for 7 days and an hour (contract: at least 7 days). */
export const DEDUPE_TTL_SECONDS = 7 * 24 * 3600 + 3600;

const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** GitHub's event names: lower-case letters, digits (`projects_v2_item`) and underscores. */
const EVENT_NAME = /^[a-z0-9_]{1,64}$/;

export type Receipt = { kind: "pong" } | { kind: "accepted"; delivery: string; status: "queued" | "duplicate" | "ignored" };

/** KV key of a delivery's dedupe marker. */
export const deliveryMarker = (delivery: string): string => `delivery:${delivery}`;

/**
 * `POST /webhooks/github` (contract section 9), once the authentication stage verified the body's
 * signature (`http/authentication.ts`: 404 without a secret, 429, 401, 415, 413): 400 headers or
 * not a JSON object; then `ping` → pong, or the delivery is reduced and queued.
 *
 * Nothing accepted is lost: the dedupe marker is written only after the queue took every message
 * (a failed enqueue is a 503 that GitHub shows as failed, and a redelivery is not mistaken for a
 * duplicate). Two identical deliveries racing past the marker both enqueue; the consumer's ledger
 * (one per organization, written with the change) applies the second as nothing.
 */
export async function receiveDelivery(
  request: Request,
  body: Uint8Array,
  env: Env,
  log: Logger,
  afterAnswer: (work: Promise<unknown>) => void,
): Promise<Receipt> {
  const event = request.headers.get("X-GitHub-Event");
  const delivery = request.headers.get("X-GitHub-Delivery");
  const missing = [
    ...(event === null || !EVENT_NAME.test(event)
      ? [{ path: "X-GitHub-Event", message: "is required: a GitHub event name" }]
      : []),
    ...(delivery === null || !DELIVERY_ID.test(delivery)
      ? [{ path: "X-GitHub-Delivery", message: "is required: the delivery's GUID" }]
      : []),
  ];
  if (event === null || delivery === null || missing.length > 0) throw badRequest("Invalid webhook headers.", missing);
  const payload = parseJsonObject(body);
  if (event === "ping") return { kind: "pong" };

  const reduced = reduceDelivery(event, delivery, payload);
  if (reduced.status === "ignored") {
    log[reduced.warn ? "warn" : "info"]("webhook ignored", { delivery, githubEvent: event, reason: reduced.reason });
    // Contract section 17: a used event whose payload the service cannot read is kept for the
    // operator (listed and replayed with the parked deliveries), never silently dropped.
    if (reduced.warn) await keepUnreadable(env, event, delivery, payload, body.byteLength);
    return { kind: "accepted", delivery, status: "ignored" };
  }
  const seen = await env.WEBHOOK_DELIVERIES.get(deliveryMarker(delivery)).catch(() => null);
  if (seen !== null) return { kind: "accepted", delivery, status: "duplicate" };

  await enqueue(env, reduced.messages, Date.now());
  // After the answer (the delivery is already safe in the queue), and best effort: a lost marker
  // only lets a redelivery through to the consumer's ledger.
  afterAnswer(
    env.WEBHOOK_DELIVERIES.put(deliveryMarker(delivery), "1", { expirationTtl: DEDUPE_TTL_SECONDS }).catch((error) =>
      log.warn("webhook dedupe marker not written", { delivery, error: errorField(error) }),
    ),
  );
  return { kind: "accepted", delivery, status: "queued" };
}

/**
 * A parked copy of a payload the reducer refused, under `<delivery>:payload`, so that a replay
 * (after the service learnt the shape) reduces it again: `replayParked`. Payloads over a megabyte
 * keep their size only (a D1 row holds 2 MB); GitHub's "Redeliver" sends them again.
 */
async function keepUnreadable(env: Env, event: string, delivery: string, payload: object, bytes: number): Promise<void> {
  await inStore("D1", () =>
    parkDelivery(mainDatabase(env), {
      id: `${delivery}:payload`,
      delivery,
      event: eventName(event, payload),
      message: { kind: "payload", event, ...(bytes <= MAX_KEPT_PAYLOAD ? { payload } : { bytes }) },
      attempts: 0,
      parkedAt: Date.now(),
    }),
  );
}

const MAX_KEPT_PAYLOAD = 1024 * 1024;

/**
 * The control plane's replay of a parked entry: a queue message goes back to the queue; a kept
 * payload is reduced again and its messages queued, or refused as still not applicable.
 */
export async function replayParked(env: Env, parked: { delivery: string; message: unknown; parkedAt: number }): Promise<void> {
  const kept = KeptPayload.safeParse(parked.message);
  if (!kept.success) {
    // A queue message keeps its `receivedAt`; one queued before messages carried it is given the
    // time it was parked (received no later), so that its age is known (`held_logins`).
    const message =
      typeof parked.message === "object" && parked.message !== null && !("receivedAt" in parked.message)
        ? { ...parked.message, receivedAt: parked.parkedAt }
        : parked.message;
    await env.WEBHOOKS.send(message, { contentType: "json" }).catch((error) => {
      throw storageFailure("Queue", error);
    });
    return;
  }
  const reduced = kept.data.payload === undefined ? null : reduceDelivery(kept.data.event, parked.delivery, kept.data.payload);
  if (reduced?.status !== "queued") {
    throw new AppError(
      "delivery_not_applicable",
      reduced === null
        ? "The payload was too large to keep: redeliver it from the GitHub App's Advanced tab."
        : `The payload still cannot be applied: ${reduced.reason}.`,
    );
  }
  // Received no later than it was parked: how old its changes are (a queue message keeps its own).
  await enqueue(env, reduced.messages, parked.parkedAt);
}

const KeptPayload = z.object({
  kind: z.literal("payload"),
  event: z.string(),
  payload: z.record(z.string(), z.unknown()).optional(),
});

/** `sendBatch` takes up to 100 messages and 256 KB in all (a margin kept for the envelope). */
const BATCH_MESSAGES = 100;
const BATCH_BYTES = 240 * 1024;
const encoder = new TextEncoder();

/**
 * A delivery's messages in as few batches as the limits allow, sent together: the 202 waits for
 * one round of sends, whatever the number of repositories (20,000 of them are 41 messages). If
 * one batch fails the answer is 503 and GitHub's redelivery is queued again; batches that did go
 * through are applied twice at worst, which the consumer's ledger makes harmless. Each message
 * carries `receivedAt`.
 */
async function enqueue(env: Env, reduced: QueueMessageInput[], receivedAt: number): Promise<void> {
  const batches: QueueMessageInput[][] = [];
  let batch: QueueMessageInput[] = [];
  let bytes = 0;
  for (const message of reduced.map((m) => ({ ...m, receivedAt }))) {
    const size = encoder.encode(JSON.stringify(message)).byteLength;
    if (batch.length === BATCH_MESSAGES || (batch.length > 0 && bytes + size > BATCH_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(message);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  try {
    await Promise.all(
      batches.map((group) => env.WEBHOOKS.sendBatch(group.map((body) => ({ body, contentType: "json" as const })))),
    );
  } catch (error) {
    throw storageFailure("Queue", error);
  }
}
