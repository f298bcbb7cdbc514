import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import examples from "@octokit/webhooks-examples";
import { expect } from "vitest";
import { signatureHeader } from "../../src/auth/webhook-signature";
import worker from "../../src/index";
import type { QueueMessageInput } from "../../src/schemas/github-changes";
import { WEBHOOK_QUEUE } from "../../src/webhooks/consumer";
import { reduceDelivery } from "../../src/webhooks/reduce";
import { checkAgainstDocuments } from "./contract";
import { adminOk, call, createKey, createUser, env, type MemberErrorBody, postEventsOk, unique } from "./helpers";

export const WEBHOOK_SECRET = "test-webhook-secret";
export const PREVIOUS_SECRET = "test-webhook-secret-previous";

type Payload = Record<string, unknown> & { action?: string };

/**
 * A payload of GitHub's documented examples (@octokit/webhooks-examples) for `event.action`,
 * deep-copied, with every owner, account and organization login set to `org` and its id to
 * `accountId` (by default one id per login, `accountOf`) so that each test has its own organization,
 * and sent by `installationId` (the top-level `installation.id` GitHub sets on every App delivery;
 * by default the account's installation, `installationOf` for the default account).
 */
export function example(
  event: string,
  action: string | null,
  org: string,
  index = 0,
  accountId = accountOf(org),
  installationId = accountId,
): Payload {
  const entry = (examples as unknown as { name: string; examples: Payload[] }[]).find((e) => e.name === event);
  const found = (entry?.examples ?? []).filter((p) => action === null || p.action === action)[index];
  if (!found) throw new Error(`no example for ${event}.${action}`);
  const copy = structuredClone(found);
  setOwner(copy, org, accountId);
  // Some examples omit it or carry a placeholder shared by every example.
  copy.installation = { node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u", ...(copy.installation as object), id: installationId };
  return copy;
}

/**
 * GitHub's account id for a test organization: the same for every payload naming that login (the
 * examples share a handful of ids, which would make every test's organization one account).
 */
export function accountOf(org: string): number {
  let hash = 2_166_136_261;
  for (const c of org.toLowerCase()) hash = Math.imul(hash ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return 1_000_000 + (hash % 2_000_000_000);
}

/**
 * GitHub's installation id of a test organization's app installation: one per login (installation
 * ids are GitHub's, unique across organizations; the control plane finds an organization by it).
 */
export const installationOf = (org: string): number => accountOf(org);

/** Rewrites `login` and `id` of every account-like object that names the owner (owner, account, organization). */
function setOwner(node: unknown, org: string, accountId: number): void {
  if (Array.isArray(node)) {
    for (const item of node) setOwner(item, org, accountId);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const object = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(object)) {
    if ((key === "owner" || key === "account" || key === "organization") && value && typeof value === "object") {
      const account = value as Record<string, unknown>;
      if (typeof account.login === "string") {
        account.login = org;
        account.id = accountId;
        // GitHub's installation examples are of a personal account; the tests' owners are
        // organizations (a personal account's owner becomes its member: contract section 17).
        if (key === "account") account.type = "Organization";
      }
    }
    setOwner(value, org, accountId);
  }
}

let deliveries = 0;
export const newDelivery = (): string => `${crypto.randomUUID().slice(0, 24)}-${(deliveries++).toString(16)}`;

export interface DeliverOptions {
  delivery?: string;
  secret?: string | null;
  headers?: Record<string, string | null>;
  body?: string;
  /**
   * Through the real queue (the one end-to-end test): the consumer applies the messages a moment
   * later, so the test waits with `eventually`. Otherwise the messages the receiver enqueues are
   * handed to the consumer at once, and applied when `deliver` returns.
   */
  throughQueue?: boolean;
  /**
   * With sync on (the App's id bound, as the worker project binds the fake GitHub's): signals read
   * GitHub, installations start a sync. Off by default: these tests are about what the payload
   * alone does (contract section 9) and their organizations exist at no GitHub.
   */
  sync?: boolean;
}

/** The bindings with sync with GitHub's API switched off (no App id: `githubSync` says `off`). */
export const SYNC_OFF = { GITHUB_APP_ID: "" } as const;

/**
 * POSTs a signed delivery to the Worker; the response is checked against the documents. By
 * default the receiver's queue is a recorder and the recorded messages go straight to the Worker's
 * `queue()` handler, in order, every one of which must be acknowledged: the test then reads the
 * applied state without polling (`throughQueue` keeps the real queue).
 */
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
  if (options.throughQueue) return call("/webhooks/github", { method: "POST", headers, body });
  const request = new Request("https://service.test/webhooks/github", { method: "POST", headers, body });
  const sent: unknown[] = [];
  const recorder = {
    send: async (message: unknown) => void sent.push(message),
    sendBatch: async (messages: { body: unknown }[]) => void sent.push(...messages.map((m) => m.body)),
  };
  const ctx = createExecutionContext();
  const github = options.sync ? {} : SYNC_OFF;
  const response = await worker.fetch(
    request.clone() as Request<unknown, IncomingRequestCfProperties>,
    { ...env, ...github, WEBHOOKS: recorder } as unknown as Env,
    ctx,
  );
  // The dedupe marker is written after the answer: wait for it, as a later redelivery would.
  await waitOnExecutionContext(ctx);
  await checkAgainstDocuments(request, response);
  if (sent.length > 0) {
    const { ids, result } = await consume(WEBHOOK_QUEUE, sent, options.sync ? { GITHUB_APP_ID: env.GITHUB_APP_ID } : {});
    if (result.explicitAcks.length !== ids.length)
      throw new Error(`${event}: not every message was acknowledged: ${JSON.stringify(result)}`);
  }
  return response;
}

/** Delivers and expects `202 queued`. */
export async function deliverQueued(event: string, payload: unknown, options: DeliverOptions = {}): Promise<string> {
  const res = await deliver(event, payload, options);
  const body = (await res.json()) as { delivery: string; status: string };
  if (res.status !== 202 || body.status !== "queued") throw new Error(`${event} → ${res.status} ${JSON.stringify(body)}`);
  return body.delivery;
}

/**
 * Retries `check` until it passes: for deliveries through the real queue (`throughQueue`), which
 * its consumer applies a moment later. Deliveries handed to the consumer directly need no wait.
 */
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

let repoIds = 700_000_000 + Math.floor(Math.random() * 100_000_000);
export const repoId = () => repoIds++;

export interface Person {
  id: string;
  membersKey: string;
  analyticsKey: string;
}

export async function person(): Promise<Person> {
  const id = await createUser();
  const [m, a] = await Promise.all([createKey(id, "members"), createKey(id, "analytics")]);
  return { id, membersKey: m.key, analyticsKey: a.key };
}

export const readMember = (org: string, who: Person, githubUserId: string) =>
  call(`/api/v1/organizations/${org}/members/${githubUserId}`, { headers: { Authorization: `Bearer ${who.membersKey}` } });

export const exportPage = (org: string, who: Person, extra = "") =>
  call(`/api/analytics/v1/prs?org=${org}&startDate=2026-09-01${extra}`, {
    headers: { Authorization: `Bearer ${who.analyticsKey}` },
  });

/** The export's row, as far as the webhook tests look at it. */
type ExportedRow = { repo: string; prNumber: number; linesAdded: number | null };

export async function exported(org: string, who: Person, extra = ""): Promise<ExportedRow[]> {
  const res = await exportPage(org, who, extra);
  if (res.status !== 200) throw new Error(`export → ${res.status}`);
  return ((await res.json()) as { data: ExportedRow[] }).data;
}

export const errorCode = async (res: Response) => ((await res.json()) as MemberErrorBody | { error: string }).error;

/** An installation with these repositories, from the `installation.created` example. */
export async function install(
  org: string,
  repositories: { id: number; name: string; private: boolean }[] = [],
  installationId = installationOf(org),
) {
  const payload = example("installation", "created", org);
  (payload.installation as Record<string, unknown>).id = installationId;
  payload.repositories = repositories.map((r) => ({ ...r, node_id: "x", full_name: `${org}/${r.name}` }));
  await deliverQueued("installation", payload);
}

/** `organization.member_added` for a person, with GitHub's membership role and account type. */
export async function joins(org: string, who: { id: string }, role: "admin" | "member" = "member", type = "User") {
  const payload = example("organization", "member_added", org);
  const membership = payload.membership as { role: string; user: Record<string, unknown> };
  membership.role = role;
  membership.user = { ...membership.user, id: Number(who.id), login: `gh${who.id}`, type };
  await deliverQueued("organization", payload);
}

export async function billing(org: string, plan: "free" | "team" | "pro" = "pro", installationId = installationOf(org)) {
  await adminOk("PUT", `/internal/v1/organizations/${org}`, {
    installationId,
    installedAt: "2025-01-01T00:00:00Z",
    plan,
    subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
  });
}

/** A merged pull request built from the `pull_request.closed` example (every example is unmerged). */
export function mergedPr(
  org: string,
  repo: { id: number; name: string; private?: boolean },
  prNumber: number,
  extra: Record<string, unknown> = {},
  accountId = accountOf(org),
) {
  const payload = example("pull_request", "closed", org, 0, accountId);
  Object.assign(payload.repository as object, { id: repo.id, name: repo.name, private: repo.private ?? false });
  Object.assign(payload.pull_request as object, {
    number: prNumber,
    merged: true,
    created_at: "2026-10-01T10:00:00Z",
    merged_at: "2026-10-02T10:00:00Z",
    updated_at: "2026-10-02T10:00:01Z",
    additions: 12,
    deletions: 3,
    ...extra,
  });
  payload.number = prNumber;
  return payload;
}

export const review = (org: string, repo: string, prNumber: number) => ({
  type: "review",
  org,
  repo,
  prNumber,
  reviewId: `r-${org}-${repo}-${prNumber}`,
  status: "completed",
  completedAt: "2026-10-01T12:00:00Z",
  updatedAt: "2026-10-01T12:00:00Z",
});

/** An installed Pro organization with an admin and a plain member, both announced by GitHub. */
export async function world(repositories: { id: number; name: string; private: boolean }[]) {
  const org = unique("gh");
  const admin = await person();
  const member = await person();
  await billing(org);
  await install(org, repositories);
  await joins(org, admin, "admin");
  await joins(org, member, "member");
  expect((await readMember(org, admin, member.id)).status).toBe(200);
  return { org, admin, member };
}

/** Merged pull requests in these repositories, each with a completed review, all visible to the admin. */
export async function prs(org: string, admin: Person, list: [{ id: number; name: string; private?: boolean }, number][]) {
  for (const [repo, n] of list) await deliverQueued("pull_request", mergedPr(org, repo, n));
  await postEventsOk(list.map(([repo, n]) => review(org, repo.name, n)));
  expect(await exported(org, admin)).toHaveLength(list.length);
}

let messageIds = 0;
/**
 * Hands messages to the Worker's queue consumer directly (in this order, with these bindings),
 * rather than through the real queue: for tests of the consumer's decisions (ack, retry) and of
 * deliveries applied in a chosen order. A store failure is a failing binding in `overrides`.
 * Sync with GitHub is off unless `overrides` binds the App id again (`{ GITHUB_APP_ID: env.GITHUB_APP_ID }`).
 */
export async function consume(
  queue: string,
  bodies: unknown[],
  overrides: Partial<Record<keyof Env, unknown>> = {},
  attempts = 1,
) {
  const messages = bodies.map((body) => ({ id: `msg-${messageIds++}`, timestamp: new Date(), attempts, body }));
  const batch = createMessageBatch(queue, messages);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...SYNC_OFF, ...overrides } as Env);
  return { ids: messages.map((m) => m.id), result: await getQueueResult(batch, ctx) };
}

/** The one message a delivery reduces to. */
export function messageOf(event: string, payload: unknown, delivery = newDelivery()): QueueMessageInput {
  const reduced = reduceDelivery(event, delivery, payload);
  if (reduced.status !== "queued" || reduced.messages.length !== 1) throw new Error(`${event}: ${JSON.stringify(reduced)}`);
  // Stamped as the receiver stamps it (`receive.ts` `enqueue`).
  return { ...(reduced.messages[0] as QueueMessageInput), receivedAt: Date.now() };
}

/**
 * The `organization.renamed` delivery: `organization.login` is the new login, `changes.login.from`
 * the old one; sent by the organization's installation (by default its account's, `installationOf` its first login).
 */
export function renamed(from: string, to: string, accountId: number, installationId = accountId) {
  const payload = example("organization", "renamed", to, 0, accountId, installationId);
  payload.changes = { login: { from } };
  return payload;
}

/** The `repository.renamed` delivery: the repository (GitHub id, visibility) is now called `to`, `changes` names `from`. */
export function repositoryRenamed(org: string, repo: { id: number; private?: boolean }, from: string, to: string) {
  const payload = example("repository", "renamed", org);
  Object.assign(payload.repository as object, { id: repo.id, name: to, private: repo.private ?? false });
  payload.changes = { repository: { name: { from } } };
  return payload;
}

/**
 * Marks the organization as moving between shards (its placement names a target), as `beginMove`
 * does, without copying anything: what waits for a move waits. `endMove` clears it.
 */
export async function markMoving(home: string): Promise<void> {
  const { shard } = (await env.DB.prepare("SELECT shard FROM analytics_placements WHERE home_key = ?1").bind(home).first<{
    shard: string;
  }>()) ?? { shard: "DB" };
  await env.DB.prepare("UPDATE analytics_placements SET moving_to = ?2 WHERE home_key = ?1")
    .bind(home, shard === "DB" ? "ANALYTICS_2" : "DB")
    .run();
}

/** Clears what `markMoving` set. */
export const endMove = (home: string) =>
  env.DB.prepare("UPDATE analytics_placements SET moving_to = NULL WHERE home_key = ?1").bind(home).run();

/** D1 (`db`, the main database by default) whose reads work and whose write batches fail, as a store failing between two writes would. */
export const d1WritesFail = (db: D1Database = env.DB) => ({
  prepare: (query: string) => db.prepare(query),
  batch: async () => {
    throw new Error("D1_ERROR: injected storage fault [expected-fault]");
  },
});
