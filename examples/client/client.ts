/**
 * A typed client of the public API, written only against docs/openapi/public.json: the types in
 * schema.d.ts are generated from it by `npm run client:check`, which then typechecks this file.
 * If the document changes in a way a client notices, this file stops compiling.
 *
 * Two workflows of the README: walking every page of the analytics export, and the members
 * guard workflow (read, then PATCH with what you read; a stale read answers 409). Only erasable
 * TypeScript syntax, so Node 22.18+ runs it as is, without a build step.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type AnalyticsRow = components["schemas"]["AnalyticsPrRow"];
export type AnalyticsSummary = components["schemas"]["AnalyticsSummary"];
export type Member = components["schemas"]["Member"];
export type MemberUpdateResult = components["schemas"]["MemberUpdateResult"];

type MemberPath = "/api/v1/organizations/{org}/members/{githubUserId}";
/** The body of a 409 from the member PATCH, exactly as the document describes it. */
export type MemberConflict = paths[MemberPath]["patch"]["responses"][409]["content"]["application/json"];

/** One client per key: analytics keys (cak_) and members keys (cbk_) are separate. */
export function connect(baseUrl: string, key: string) {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });
}
export type Client = ReturnType<typeof connect>;

/** A non-2XX answer, with the correlation id to quote to support. */
export class ApiError extends Error {
  readonly status: number;
  readonly correlationId: string | null;
  constructor(status: number, message: string, correlationId: string | null) {
    super(`${status}: ${message}`);
    this.status = status;
    this.correlationId = correlationId;
  }
}

export interface Window {
  startDate: string;
  endDate: string;
}

/**
 * (a) Every merged pull request of `org` in a fixed window, page after page: pass each page's
 * `nextCursor` back as `cursor` with the same parameters, stop when it is null. A fixed window
 * matters for long walks: the default one moves with the clock.
 */
export async function* allPullRequests(client: Client, org: string, window: Window, perPage = 100): AsyncGenerator<AnalyticsRow> {
  let cursor: string | undefined;
  do {
    const query = {
      org,
      startDate: window.startDate,
      endDate: window.endDate,
      perPage,
      format: "json" as const,
      ...(cursor ? { cursor } : {}),
    };
    const { data, error, response } = await client.GET("/api/analytics/v1/prs", { params: { query } });
    if (error !== undefined) throw new ApiError(response.status, error.error, response.headers.get("X-Correlation-Id"));
    // The document describes both representations of a page (JSON and text/csv); format=json asked for JSON.
    if (typeof data === "string") throw new ApiError(response.status, "expected JSON, got CSV", null);
    yield* data.data;
    cursor = data.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/**
 * (a') The same window's pull requests per week, with totals: one request instead of every page.
 * Every week the window touches is listed, empty ones with zeros and null medians.
 */
export async function weeklySummary(client: Client, org: string, window: Window): Promise<AnalyticsSummary> {
  const query = { org, startDate: window.startDate, endDate: window.endDate, groupBy: "week" as const, format: "json" as const };
  const { data, error, response } = await client.GET("/api/analytics/v1/summary", { params: { query } });
  if (error !== undefined) throw new ApiError(response.status, error.error, response.headers.get("X-Correlation-Id"));
  if (typeof data === "string") throw new ApiError(response.status, "expected JSON, got CSV", null);
  return data;
}

export type SeatChange =
  | { outcome: "done"; result: MemberUpdateResult }
  | { outcome: "refused"; status: number; code: string; message: string };

/**
 * (b) Turns a member's seat on or off with the guard workflow: read the member, PATCH with
 * `expectedSeat` set to the value read. If someone changed the seat in between, the answer is 409
 * `expected_value_mismatch` and nothing changed: read again and retry, a few times at most.
 * Other refusals (no seat available, not an admin, ...) are returned as they are.
 */
export async function setSeat(
  client: Client,
  org: string,
  githubUserId: string,
  seat: boolean,
  attempts = 3,
): Promise<SeatChange> {
  const path = { org, githubUserId };
  for (let attempt = 1; ; attempt++) {
    const read = await client.GET("/api/v1/organizations/{org}/members/{githubUserId}", { params: { path } });
    if (read.error !== undefined)
      throw new ApiError(read.response.status, read.error.error.message, read.error.error.correlationId);
    const member: Member = read.data;

    const { data, error, response } = await client.PATCH("/api/v1/organizations/{org}/members/{githubUserId}", {
      params: { path },
      body: { seat, expectedSeat: member.seat },
    });
    if (data !== undefined) return { outcome: "done", result: data };

    if (isConflict(response, error) && error.error.code === "expected_value_mismatch" && attempt < attempts) {
      // details name each stale guard with its current value, e.g. {path: "expectedSeat", ...}.
      continue;
    }
    if (response.status >= 500) throw new ApiError(response.status, error.error.message, error.error.correlationId);
    return { outcome: "refused", status: response.status, code: error.error.code, message: error.error.message };
  }
}

/** The PATCH answered 409: its body is the document's 409 body. */
function isConflict(response: Response, _body: unknown): _body is MemberConflict {
  return response.status === 409;
}
