import examples from "@octokit/webhooks-examples";
import { signatureHeader } from "../../src/webhooks/signature";
import { call } from "./helpers";

export const WEBHOOK_SECRET = "test-webhook-secret";
export const PREVIOUS_SECRET = "test-webhook-secret-previous";

type Payload = Record<string, unknown> & { action?: string };

/**
 * A payload of GitHub's documented examples (@octokit/webhooks-examples) for `event.action`,
 * deep-copied, with every owner, account and organization login set to `org` so that each test
 * has its own organization.
 */
export function example(event: string, action: string | null, org: string, index = 0): Payload {
  const entry = (examples as unknown as { name: string; examples: Payload[] }[]).find((e) => e.name === event);
  const found = (entry?.examples ?? []).filter((p) => action === null || p.action === action)[index];
  if (!found) throw new Error(`no example for ${event}.${action}`);
  const copy = structuredClone(found);
  setLogins(copy, org);
  return copy;
}

/** Rewrites `login` of every account-like object that names the owner (owner, account, organization). */
function setLogins(node: unknown, org: string): void {
  if (Array.isArray(node)) {
    for (const item of node) setLogins(item, org);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const object = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(object)) {
    if ((key === "owner" || key === "account" || key === "organization") && value && typeof value === "object") {
      const account = value as Record<string, unknown>;
      if (typeof account.login === "string") account.login = org;
    }
    setLogins(value, org);
  }
}

let deliveries = 0;
export const newDelivery = (): string => `${crypto.randomUUID().slice(0, 24)}-${(deliveries++).toString(16)}`;

export interface DeliverOptions {
  delivery?: string;
  secret?: string | null;
  headers?: Record<string, string | null>;
  body?: string;
}

/** POSTs a signed delivery to the Worker (through `call`, so the response is checked against the documents). */
export async function deliver(event: string, payload: unknown, options: DeliverOptions = {}): Promise<Response> {
  const body = options.body ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": options.delivery ?? newDelivery(),
    "User-Agent": "GitHub-Hookshot/test",
  };
  const secret = options.secret === undefined ? WEBHOOK_SECRET : options.secret;
  if (secret !== null) headers["X-Hub-Signature-256"] = await signatureHeader(secret, body);
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return call("/webhooks/github", { method: "POST", headers, body });
}

/** Delivers and expects `202 queued`. */
export async function deliverQueued(event: string, payload: unknown, options: DeliverOptions = {}): Promise<string> {
  const res = await deliver(event, payload, options);
  const body = (await res.json()) as { delivery: string; status: string };
  if (res.status !== 202 || body.status !== "queued") throw new Error(`${event} → ${res.status} ${JSON.stringify(body)}`);
  return body.delivery;
}

/** Retries `check` until it passes: deliveries are applied by the queue consumer, a moment later. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
