/** What a GitHub call can end in besides its data; the sync decides per kind (retry later, give up, log). */
export type GithubErrorKind =
  /** A rate limit whose wait is longer than the caller allows: resume at `retryAfterSeconds`. */
  | "rate_limited"
  /** 401: the App's key or id is wrong, or the installation token was refused. */
  | "unauthorized"
  /** 403 not about a limit: the App lacks a permission. */
  | "forbidden"
  /** 404 or 410: the installation, organization, repository or user is gone (or not visible to the App). */
  | "not_found"
  /** 5xx or a network failure, still failing after the bounded retries. */
  | "unavailable"
  /** GitHub answered 2xx with a body that does not have the fields the service keeps. */
  | "unexpected_shape"
  /** Any other status. */
  | "failed";

export class GithubError extends Error {
  override readonly name = "GithubError";
  constructor(
    readonly kind: GithubErrorKind,
    message: string,
    readonly details: { status?: number; retryAfterSeconds?: number; calls: number; points: number },
  ) {
    super(message);
  }
}
