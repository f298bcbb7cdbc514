/**
 * The one error taxonomy of the service. Every failure a client may see is an AppError with a
 * stable code; the status and `retriable` flag follow from the code (contract section 4 table).
 * The public message is all a client ever sees; anything internal stays in logs.
 */

export const ERROR_CODES = {
  invalid_request: { status: 400, retriable: false, when: "Invalid path, query or body" },
  unauthenticated: { status: 401, retriable: false, when: "Missing, malformed, unknown, revoked or expired credentials" },
  installation_blocked: { status: 403, retriable: false, when: "The organization's installation is blocked" },
  org_access_denied: { status: 403, retriable: false, when: "The caller is not a member of the organization" },
  repo_access_denied: { status: 403, retriable: false, when: "The caller cannot access the repository" },
  not_org_admin: { status: 403, retriable: false, when: "The caller is not an admin of the organization" },
  subscription_required: {
    status: 403,
    retriable: false,
    when: "No active Team or Pro subscription billed through the service",
  },
  csrf_failed: {
    status: 403,
    retriable: false,
    when: "A state-changing request of the web app without a same-origin Origin header or without the session's X-CSRF-Token",
  },
  origin_not_allowed: {
    status: 403,
    retriable: false,
    when: "A request to /mcp from a browser origin that is not this service's, a loopback one, or listed in MCP_ALLOWED_ORIGINS",
  },
  insufficient_scope: {
    status: 403,
    retriable: false,
    when: "The key lacks the scope the route needs (a read-only key on a write)",
  },
  ip_not_allowed: {
    status: 403,
    retriable: false,
    when: "The request comes from an address outside the key's allowed networks (not counted against any quota)",
  },
  plan_required: { status: 403, retriable: false, when: "The organization is not on the Pro plan" },
  org_not_found: {
    status: 404,
    retriable: false,
    when: "The organization has no installation (also: an old login of a renamed organization)",
  },
  member_not_found: { status: 404, retriable: false, when: "No such member in the organization" },
  not_found: { status: 404, retriable: false, when: "No such resource" },
  method_not_allowed: { status: 405, retriable: false, when: "The path exists under other methods (see Allow)" },
  expected_value_mismatch: { status: 409, retriable: false, when: "A guard differs from the current value" },
  no_seat_available: { status: 409, retriable: false, when: "Every purchased seat is taken" },
  last_admin: { status: 409, retriable: false, when: "The organization's last admin would lose the admin role" },
  key_limit_reached: {
    status: 409,
    retriable: false,
    when: "The owner already holds the most keys of this kind allowed (10 per person, 25 per organization)",
  },
  sync_in_progress: {
    status: 409,
    retriable: true,
    when: "A sync of the organization with GitHub is running; retry once it ended",
  },
  move_in_progress: {
    status: 409,
    retriable: true,
    when: "A move of the organization between analytics shards is running; retry once it ended",
  },
  move_switched: {
    status: 409,
    retriable: false,
    when: "The move of the organization has switched to its target shard: it can no longer be cancelled, it finishes",
  },
  sync_off: {
    status: 409,
    retriable: false,
    when: "Sync with GitHub's API is not configured (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY)",
  },
  payload_too_large: { status: 413, retriable: false, when: "The body is larger than the route allows" },
  unsupported_media_type: { status: 415, retriable: false, when: "The body is not application/json" },
  bot_cannot_be_admin: { status: 422, retriable: false, when: "A bot account cannot be an admin" },
  delivery_not_applicable: {
    status: 422,
    retriable: false,
    when: "A parked webhook payload still does not have the shape the service uses; it stays parked",
  },
  rate_limited: { status: 429, retriable: true, when: "Over the quota; retry after Retry-After seconds" },
  internal_error: { status: 500, retriable: true, when: "Unexpected failure (logged with the correlation id)" },
  unavailable: { status: 503, retriable: true, when: "A store is unreachable or overloaded; retry the same request" },
} as const satisfies Record<string, { status: number; retriable: boolean; when: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One per-field problem: `path` names the field (`events.3.prNumber`), `message` says what is wrong. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** Contract section 1: at most 20 entries; past that, the 20th says how many more were found. */
export const MAX_DETAILS = 20;

export function capDetails(details: readonly ErrorDetail[]): ErrorDetail[] {
  if (details.length <= MAX_DETAILS) return [...details];
  const kept = details.slice(0, MAX_DETAILS - 1);
  return [...kept, { path: "", message: `${details.length - kept.length} more problems not listed` }];
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  readonly headers: Record<string, string>;
  /** How the logs name this failure when it is a 5xx (default "answered <code>"). */
  readonly logAs: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: readonly ErrorDetail[]; headers?: Record<string, string>; cause?: unknown; logAs?: string } = {},
  ) {
    // `cause` is for the logs only (see http/pipeline.ts); clients see `message`.
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = capDetails(options.details ?? []);
    this.headers = options.headers ?? {};
    this.logAs = options.logAs;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retriable(): boolean {
    return ERROR_CODES[this.code].retriable;
  }
}

export const badRequest = (message: string, details: readonly ErrorDetail[] = []) =>
  new AppError("invalid_request", message, { details });

export const unauthenticated = (message = "A valid API key is required.") =>
  new AppError("unauthenticated", message, { headers: { "WWW-Authenticate": "Bearer" } });

export const internalError = () => new AppError("internal_error", "An unexpected error occurred.");

export const notFound = (message = "Not found.") => new AppError("not_found", message);

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;

/**
 * A store (D1, a Durable Object, KV) failed or could not be reached. One public message per
 * interface (the analytics envelope turns it into its 500); logged as a storage failure with the
 * store's own error, never shown to the client.
 */
export const storageFailure = (store: string, cause: unknown) =>
  new AppError("unavailable", "The service is temporarily unavailable. Retry with the same request.", {
    cause,
    logAs: `storage failure: ${store}`,
  });

/** Runs a storage call; whatever it throws that is not already a contract error is a storage failure. */
export async function inStore<T>(store: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw isAppError(error) ? error : storageFailure(store, error);
  }
}
