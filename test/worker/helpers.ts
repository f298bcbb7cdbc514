import { introspectWorkflow } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { AnalyticsScope } from "../../src/storage/analytics";
import { SummaryPlans } from "../../src/storage/analytics-summary";
import { checkAgainstDocuments } from "./contract";

export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
const BASE = "https://service.test";

let counter = 0;
/** A name no other test in this file uses: tests share storage within a file. */
export const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
let idCounter = 1_000_000 + Math.floor(Math.random() * 1_000_000);
export const uniqueUserId = (): string => String(idCounter++);
let installationCounter = 10_000_000 + Math.floor(Math.random() * 1_000_000_000);
/**
 * An installation id no other test uses: the control plane finds an organization by it, and
 * files share storage (isolate: false), so a small literal id could name another file's organization.
 */
export const uniqueInstallationId = (): number => (installationCounter += 1000);

/**
 * A client address of the running test's own: failed authentications are throttled per address
 * (100 a minute), and with files sharing one runtime (isolate: false) the 401s of every file would
 * otherwise add up under one address.
 */
function testAddress(): string {
  const { testPath, currentTestName } = expect.getState();
  let hash = 2_166_136_261;
  for (const c of `${testPath} ${currentTestName}`) hash = Math.imul(hash ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return `10.${(hash >>> 16) & 255}.${(hash >>> 8) & 255}.${hash & 255}`;
}

/**
 * Every integration test calls the Worker through here (or `fetchWithEnv`): each response is
 * checked against the generated OpenAPI documents before the test sees it (see contract.ts).
 */
export async function call(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  if (!headers.has("CF-Connecting-IP")) headers.set("CF-Connecting-IP", testAddress());
  const request = new Request(`${BASE}${path}`, { ...init, headers, body });
  const response = await exports.default.fetch(request);
  await checkAgainstDocuments(request, response);
  return response;
}

/** A control-plane call with the admin token. */
export function admin(method: string, path: string, json?: unknown, headers: Record<string, string> = {}) {
  return call(path, { method, json, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
}

export async function adminOk<T = unknown>(method: string, path: string, json?: unknown): Promise<T> {
  const res = await admin(method, path, json);
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export interface OrgOptions {
  plan?: "free" | "team" | "pro";
  blocked?: boolean;
  installedAt?: string;
  subscription?: { status: string; billedThroughService: boolean; purchasedSeats: number };
}

export async function createOrg(login = unique("org"), options: OrgOptions = {}) {
  await adminOk("PUT", `/internal/v1/organizations/${login}`, {
    installationId: uniqueInstallationId(),
    installedAt: options.installedAt ?? "2025-01-01T00:00:00.000Z",
    blocked: options.blocked ?? false,
    plan: options.plan ?? "pro",
    subscription: options.subscription ?? { status: "active", billedThroughService: true, purchasedSeats: 10 },
  });
  return login;
}

export async function createUser(options: { blocked?: boolean } = {}) {
  const id = uniqueUserId();
  await adminOk("PUT", `/internal/v1/users/${id}`, { githubLogin: `user${id}`, blocked: options.blocked ?? false });
  return id;
}

export interface CreatedKey {
  key: string;
  keyId: string;
  kind: string;
  createdAt: string;
  expiresAt: string | null;
}

export const createKey = (userId: string, kind: "analytics" | "members", expiresAt: string | null = null) =>
  adminOk<CreatedKey>("POST", `/internal/v1/users/${userId}/api-keys`, { kind, expiresAt });

export async function addMember(
  org: string,
  userId: string,
  role: "member" | "admin" | "viewer" = "member",
  extra: Partial<{ seat: boolean; isBot: boolean }> = {},
) {
  return adminOk("PUT", `/internal/v1/organizations/${org}/members/${userId}`, {
    githubLogin: `user${userId}`,
    workEmail: `user${userId}@example.com`,
    role,
    seat: extra.seat ?? true,
    isBot: extra.isBot ?? false,
  });
}

export const postEvents = (events: unknown[]) => admin("POST", "/internal/v1/events", { events });

export { env };

/** Calls the Worker's handler directly with some bindings replaced (an unset secret, a failing store). */
/**
 * `documented: false` skips the document check, only for a configuration the documents do not
 * describe (they describe the default one: quotas on, so quota headers are required).
 */
export async function fetchWithEnv(
  request: Request,
  overrides: Partial<Record<keyof Env, unknown>>,
  { documented = true }: { documented?: boolean } = {},
): Promise<Response> {
  const { createExecutionContext } = await import("cloudflare:test");
  const { default: worker } = await import("../../src/index");
  const patched = { ...env, ...overrides } as Env;
  const response = await worker.fetch(
    request.clone() as Request<unknown, IncomingRequestCfProperties>,
    patched,
    createExecutionContext(),
  );
  if (documented) await checkAgainstDocuments(request, response);
  return response;
}

/**
 * The version every built event carries unless a test gives one. A test that sends a change of a
 * record it stored before must give the change a greater `updatedAt` (equal versions change nothing).
 */
export const EVENT_VERSION = "2026-10-03T00:00:00.000Z";

/** Event builders with sensible defaults; override any field. */
export const ev = {
  pr: (org: string, prNumber: number, extra: Record<string, unknown> = {}) => ({
    type: "pull_request",
    org,
    repo: "api",
    prNumber,
    author: "alice",
    createdAt: "2026-10-01T10:00:00Z",
    mergedAt: "2026-10-02T10:00:00Z",
    linesAdded: 10,
    linesDeleted: 2,
    updatedAt: EVENT_VERSION,
    ...extra,
  }),
  review: (org: string, prNumber: number, reviewId: string, extra: Record<string, unknown> = {}) => ({
    type: "review",
    org,
    repo: "api",
    prNumber,
    reviewId,
    status: "completed",
    completedAt: "2026-10-01T12:00:00Z",
    updatedAt: EVENT_VERSION,
    ...extra,
  }),
  finding: (org: string, prNumber: number, findingId: string, extra: Record<string, unknown> = {}) => ({
    type: "finding",
    org,
    repo: "api",
    prNumber,
    findingId,
    createdAt: "2026-10-01T12:00:00Z",
    posted: true,
    aiAddressed: false,
    feedback: null,
    updatedAt: EVENT_VERSION,
    ...extra,
  }),
  ai: (org: string, prNumber: number, sourceId: string, lines: number, extra: Record<string, unknown> = {}) => ({
    type: "ai_authorship",
    org,
    repo: "api",
    prNumber,
    sourceId,
    lines,
    updatedAt: EVENT_VERSION,
    ...extra,
  }),
};

export async function postEventsOk(events: unknown[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const res = await postEvents(events.slice(i, i + 1000));
    if (res.status !== 200) throw new Error(`events → ${res.status}: ${await res.text()}`);
  }
}

/** The members (and control-plane) error envelope. */
export type MemberErrorBody = {
  error: {
    code: string;
    message: string;
    retriable: boolean;
    correlationId: string;
    details: { path: string; message: string }[];
  };
};

/**
 * A Durable Object namespace whose every call never answers, like an object stuck behind a slow
 * storage operation; `reached` resolves once a call was made (the read was really in flight).
 */
export function hangingNamespace(): { namespace: DurableObjectNamespace; reached: Promise<void> } {
  let reach = () => {};
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  const hang = () => {
    reach();
    return new Promise<never>(() => {});
  };
  const stub = new Proxy({}, { get: () => hang });
  const namespace = { getByName: () => stub, get: () => stub, idFromName: () => ({}) } as unknown as DurableObjectNamespace;
  return { namespace, reached };
}

/** A Durable Object namespace whose every call fails like an unreachable object would. */
export function failingNamespace(flags: Record<string, boolean> = {}): DurableObjectNamespace {
  const fail = async () => {
    throw Object.assign(new Error("Durable Object reset: internal detail [expected-fault]"), flags);
  };
  const stub = new Proxy({}, { get: () => fail });
  return { getByName: () => stub, get: () => stub, idFromName: () => ({}) } as unknown as DurableObjectNamespace;
}

/**
 * The D1 database holding the analytics rows of the organization with this home key (its folded
 * login unless renamed): its shard (contract section 16), as the directory in DB records it. DB
 * when it was never placed (nothing stored yet).
 */
export async function shardDb(home: string): Promise<D1Database> {
  const row = await env.DB.prepare("SELECT shard FROM analytics_placements WHERE home_key = ?1")
    .bind(home.toLowerCase())
    .first<{ shard: string }>();
  return (env as unknown as Record<string, D1Database>)[row?.shard ?? "DB"] as D1Database;
}

/**
 * The analytics statements' input for an organization over an inclusive window (default: October
 * 2026, whole UTC days), without repository or author lists, as an admin reads it (no access list).
 */
export function scopeOf(org: string, start = "2026-10-01T00:00:00.000Z", end = "2026-10-31T23:59:59.999Z"): AnalyticsScope {
  return {
    orgKey: org,
    repoKeys: null,
    authorKeys: null,
    accessibleRepoKeys: null,
    start: Date.parse(start),
    end: Date.parse(end),
  };
}

/** A deterministic generator of numbers in [0, 1) (mulberry32), so a failing test's data repeats. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Moves the organization to the other shard (DB and ANALYTICS_2) and waits until the move is done (contract section 16). */
export async function moveToOtherShard(org: string): Promise<void> {
  const from = (await (await admin("GET", `/internal/v1/organizations/${org}/move`)).json()) as { shard: string };
  const to = from.shard === "DB" ? "ANALYTICS_2" : "DB";
  await using moves = await introspectWorkflow(env.MOVES);
  const res = await admin("POST", `/internal/v1/organizations/${org}/move`, { shard: to });
  expect(res.status).toBe(202);
  const [instance] = await moves.get();
  await instance?.waitForStatus("complete");
  const after = (await (await admin("GET", `/internal/v1/organizations/${org}/move`)).json()) as {
    shard: string;
    move: { state: string };
  };
  expect(after).toMatchObject({ shard: to, move: { state: "done" } });
}

/** Plans (`SummaryPlans`) that walk `q`'s window: as if the isolate had seen it hold no pull request. */
export function walkingPlans(q: AnalyticsScope): SummaryPlans {
  const plans = new SummaryPlans(1);
  plans.record({ ...q, repoKeys: null, authorKeys: null, accessibleRepoKeys: null, excludedRepoKeys: [], groupBys: [] }, 0);
  return plans;
}
