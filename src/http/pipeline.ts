import { type AppError, internalError, isAppError, notFound } from "../lib/errors";
import { type Envelope, json } from "./envelopes";
import type { Registry } from "./registry";
import { correlationIdFor, isCanonicalPath } from "./request";
import type { RequestContext } from "./route";

/**
 * Every request passes here: canonical-path guard, routing (the routes' stages, authentication
 * first; for an unrouted path 404, or 405 with `Allow`), the one error mapping, and the headers every response
 * carries (`X-Correlation-Id`, `Cache-Control`, and whatever a stage added).
 */
export async function dispatch(
  registry: Registry,
  fallback: Envelope,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): Promise<Response> {
  const started = Date.now();
  const correlationId = correlationIdFor(request);
  const url = new URL(request.url);
  const api = registry.interfaceFor(url.pathname);
  const rc: RequestContext = {
    env,
    ctx,
    correlationId,
    url,
    request,
    responseHeaders: new Headers(),
    interfaces: registry.interfaces,
  };
  let response: Response;
  try {
    if (!isCanonicalPath(url.pathname)) throw notFound();
    const routed: Response | undefined = await registry.router.fetch(request, rc);
    response = routed ?? (await registry.unrouted(api, rc));
  } catch (error) {
    response = errorResponse(error, api?.envelope ?? fallback, correlationId);
  }
  const headers = new Headers(response.headers);
  rc.responseHeaders.forEach((value, name) => {
    headers.set(name, value);
  });
  headers.set("X-Correlation-Id", correlationId);
  headers.set("Cache-Control", "no-store");
  console.log(
    JSON.stringify({
      level: "info",
      correlationId,
      method: request.method,
      path: url.pathname,
      status: response.status,
      ms: Date.now() - started,
    }),
  );
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * The one place errors become responses. An AppError keeps its public message; anything else is
 * logged with the correlation id and answered as a generic 500.
 */
export function errorResponse(error: unknown, envelope: Envelope, correlationId: string): Response {
  let appError: AppError;
  if (isAppError(error)) {
    appError = error;
    if (appError.status >= 500) logFailure(correlationId, appError.logAs ?? `answered ${appError.code}`, appError.cause);
  } else {
    logFailure(correlationId, "unhandled error", error);
    appError = internalError();
  }
  appError = envelope.translate(appError);
  return json(envelope.render(appError, correlationId), appError.status, appError.headers);
}

/** Every server-side failure is logged once, here, with the request's correlation id. */
function logFailure(correlationId: string, msg: string, cause: unknown): void {
  console.error(
    JSON.stringify({
      level: "error",
      msg,
      correlationId,
      error: cause instanceof Error ? `${cause.name}: ${cause.message}` : cause === undefined ? undefined : String(cause),
      stack: cause instanceof Error ? cause.stack : undefined,
    }),
  );
}
