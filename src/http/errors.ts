/**
 * The one error taxonomy of the service. Every failure a client may see is an AppError with a
 * stable code; the status and `retriable` flag follow from the code (contract section 4 table).
 * The public message is all a client ever sees; anything internal stays in logs.
 */

export const ERROR_CODES = {
  invalid_request: { status: 400, retriable: false },
  unauthenticated: { status: 401, retriable: false },
  installation_blocked: { status: 403, retriable: false },
  org_access_denied: { status: 403, retriable: false },
  repo_access_denied: { status: 403, retriable: false },
  not_org_admin: { status: 403, retriable: false },
  subscription_required: { status: 403, retriable: false },
  plan_required: { status: 403, retriable: false },
  org_not_found: { status: 404, retriable: false },
  member_not_found: { status: 404, retriable: false },
  not_found: { status: 404, retriable: false },
  method_not_allowed: { status: 405, retriable: false },
  expected_value_mismatch: { status: 409, retriable: false },
  no_seat_available: { status: 409, retriable: false },
  last_admin: { status: 409, retriable: false },
  payload_too_large: { status: 413, retriable: false },
  unsupported_media_type: { status: 415, retriable: false },
  bot_cannot_be_admin: { status: 422, retriable: false },
  rate_limited: { status: 429, retriable: true },
  internal_error: { status: 500, retriable: true },
  unavailable: { status: 503, retriable: true },
} as const satisfies Record<string, { status: number; retriable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One per-field problem: `path` names the field (`events.3.prNumber`), `message` says what is wrong. */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    // `cause` is for the logs only (see errorResponse); clients see `message`.
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details ?? [];
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retriable(): boolean {
    return ERROR_CODES[this.code].retriable;
  }
}

export const badRequest = (message: string, details: ErrorDetail[] = []) => new AppError("invalid_request", message, { details });

export const unauthenticated = (message = "A valid API key is required.") =>
  new AppError("unauthenticated", message, { headers: { "WWW-Authenticate": "Bearer" } });

export const internalError = () => new AppError("internal_error", "An unexpected error occurred.");

export const notFound = (message = "Not found.") => new AppError("not_found", message);

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;
