import { z } from "zod";
import { codedErrorEnvelope, json } from "../http/envelopes";
import { type ApiInterface, routesFor } from "../http/route";
import { logger } from "../lib/log";
import { receiveDelivery, WEBHOOK_MAX_BODY } from "./receive";

const signedRoute = routesFor("webhookSignature");

const Accepted = z
  .object({
    delivery: z
      .string()
      .max(128)
      .meta({ description: "The X-GitHub-Delivery of the request.", example: "72d3162e-cc78-11e3-81ab-4c9367dc0958" }),
    status: z.enum(["queued", "duplicate", "ignored"]).meta({
      description:
        "queued: verified and queued for processing. duplicate: this delivery id was seen in the last 7 days; no effect. ignored: an event or action the service does not use.",
    }),
  })
  .meta({ id: "WebhookAccepted" });

const Pong = z.object({ status: z.literal("pong") }).meta({ id: "WebhookPong" });

/** Documented only: the authentication stage reads the raw body (the signature covers the exact bytes). */
const GithubPayload = z
  .looseObject({ action: z.string().max(100).optional() })
  .meta({ id: "GithubWebhookPayload", description: "A GitHub webhook payload, as GitHub sends it." });

/** Documented only: `receive.ts` reads them (400 when either is missing). */
const DeliveryHeaders = z.object({
  "X-GitHub-Event": z
    .string()
    .max(100)
    .meta({ description: "The event name, e.g. pull_request; ping answers 200 pong.", example: "pull_request" }),
  "X-GitHub-Delivery": z.string().max(128).meta({
    description: "The delivery's id; one seen in the last 7 days is answered duplicate and has no effect.",
    example: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
  }),
});

const receiveGithubWebhook = signedRoute({
  method: "POST",
  path: "/webhooks/github",
  operationId: "receiveGithubWebhook",
  summary: "Receive a GitHub App webhook delivery",
  description:
    "Headers: X-Hub-Signature-256 (sha256=<hex HMAC-SHA256 of the raw body> with GITHUB_WEBHOOK_SECRET or, during a rotation, " +
    "GITHUB_WEBHOOK_SECRET_PREVIOUS), X-GitHub-Event, X-GitHub-Delivery. Answered before any processing: the work goes through a " +
    "queue and is applied idempotently. 404 while no secret is set. Bad signatures count as failed authentications of the " +
    "client address: past 100 a minute that address gets 429 before its body is read.",
  request: {
    headers: DeliveryHeaders,
    body: {
      schema: GithubPayload,
      maxBytes: WEBHOOK_MAX_BODY,
      raw: true,
      example: { action: "opened", number: 2, pull_request: {}, repository: {} },
    },
  },
  responses: {
    202: {
      description: "Verified; queued, a duplicate, or ignored.",
      body: Accepted,
      example: { delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", status: "queued" },
    },
    200: { description: "A ping: the webhook is set up.", body: Pong, example: { status: "pong" } },
  },
  errors: ["not_found"],
  handler: async ({ raw }, rc) => {
    const receipt = await receiveDelivery(rc.request, raw, rc.env, logger({ correlationId: rc.correlationId }), (work) =>
      rc.ctx.waitUntil(work),
    );
    if (receipt.kind === "pong") return json({ status: "pong" }, 200);
    return json({ delivery: receipt.delivery, status: receipt.status }, 202);
  },
});

/** `POST /webhooks/github` (contract section 9): a GitHub App's deliveries, authenticated by their signature. */
export const webhooksInterface: ApiInterface<"webhookSignature"> = {
  name: "webhooks",
  description: "GitHub App webhooks: signed deliveries, queued and applied idempotently.",
  basePath: "/webhooks",
  document: "internal",
  envelope: codedErrorEnvelope,
  auth: { kind: "webhookSignature" },
  errors: ["internal_error", "unavailable"],
  routes: [receiveGithubWebhook],
};
