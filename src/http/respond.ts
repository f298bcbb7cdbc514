import { AppError, type ErrorDetail, internalError, isAppError } from "./errors";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": JSON_CONTENT_TYPE, ...headers } });

export const noContent = (): Response => new Response(null, { status: 204 });

/** Which error body a path gets: `/api/analytics/...` the analytics one, everything else the members one. */
export type Envelope = "analytics" | "members";
export const envelopeFor = (pathname: string): Envelope =>
  pathname === "/api/analytics" || pathname.startsWith("/api/analytics/") ? "analytics" : "members";

/**
 * The one place errors become responses. An AppError keeps its public message; anything else is
 * logged with the correlation id and answered as a generic 500.
 */
export function errorResponse(error: unknown, envelope: Envelope, correlationId: string): Response {
  let appError: AppError;
  if (isAppError(error)) {
    appError = error;
    if (appError.status >= 500) logFailure(correlationId, appError.code, appError.cause);
  } else {
    logFailure(correlationId, "unhandled", error);
    appError = internalError();
  }
  // The analytics interface has no 503 in its error table: storage or access-check outages are its 500.
  if (envelope === "analytics" && appError.code === "unavailable") {
    appError = new AppError(
      "internal_error",
      "API key verification, access checks or analytics processing failed. Retry the request.",
    );
  }
  const body = envelope === "analytics" ? analyticsBody(appError) : membersBody(appError, correlationId);
  return json(body, appError.status, appError.headers);
}

/** Every server-side failure is logged once, here, with the request's correlation id. */
function logFailure(correlationId: string, code: string, cause: unknown): void {
  console.error(
    JSON.stringify({
      level: "error",
      msg: code === "unhandled" ? "unhandled error" : `answered ${code}`,
      correlationId,
      error: cause instanceof Error ? `${cause.name}: ${cause.message}` : cause === undefined ? undefined : String(cause),
      stack: cause instanceof Error ? cause.stack : undefined,
    }),
  );
}

const analyticsBody = (e: AppError): { error: string; details?: ErrorDetail[] } =>
  e.details.length > 0 ? { error: e.message, details: e.details } : { error: e.message };

const membersBody = (e: AppError, correlationId: string) => ({
  error: { code: e.code, message: e.message, retriable: e.retriable, correlationId, details: e.details },
});
