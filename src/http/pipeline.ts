import { notFound } from "../lib/errors";
import { logger } from "../lib/log";
import type { Envelope } from "./envelopes";
import { errorResponse } from "./error-response";
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
  logger({ correlationId }).info("request", {
    method: request.method,
    path: url.pathname,
    status: response.status,
    ms: Date.now() - started,
  });
  // HEAD is answered without a body wherever it is answered (routed in the registry; here also a
  // 404 or 405 of a path no route matches).
  const body = request.method === "HEAD" ? null : response.body;
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
