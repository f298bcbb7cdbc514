import { type AppError, internalError, isAppError } from "../lib/errors";
import { errorField, logger } from "../lib/log";
import { type Envelope, json } from "./envelopes";

/**
 * The one place errors become responses. An AppError keeps its public message; anything else is
 * logged with the correlation id and answered as a generic 500.
 */
export function errorResponse(error: unknown, envelope: Envelope, correlationId: string): Response {
  const appError = publicError(error, envelope, correlationId);
  return json(envelope.render(appError, correlationId), appError.status, appError.headers);
}

/**
 * The error a client sees, in the interface's terms (`Envelope.translate`); a server-side failure
 * is logged once, here. Also for answers that are not HTTP responses (MCP tool results).
 */
export function publicError(error: unknown, envelope: Envelope, correlationId: string): AppError {
  let appError: AppError;
  if (isAppError(error)) {
    appError = error;
    if (appError.status >= 500) logFailure(correlationId, appError.logAs ?? `answered ${appError.code}`, appError.cause);
  } else {
    logFailure(correlationId, "unhandled error", error);
    appError = internalError();
  }
  return envelope.translate(appError);
}

/** Every server-side failure is logged once, here, with the request's correlation id. */
function logFailure(correlationId: string, event: string, cause: unknown): void {
  logger({ correlationId }).error(event, {
    error: errorField(cause),
    stack: cause instanceof Error ? cause.stack : undefined,
  });
}
