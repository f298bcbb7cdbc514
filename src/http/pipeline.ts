import type { IRequest, RouterType } from "itty-router";
import { AppError, notFound } from "./errors";
import { correlationIdFor, isCanonicalPath, type RequestContext } from "./request";
import { envelopeFor, errorResponse } from "./respond";

/**
 * Every request passes here: canonical-path guard, routing (404, or 405 with `Allow`), the one
 * error mapping, and the headers every response carries (`X-Correlation-Id`, `Cache-Control`).
 */
export async function dispatch(
  router: RouterType<IRequest, [RequestContext]>,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): Promise<Response> {
  const started = Date.now();
  const correlationId = correlationIdFor(request);
  const url = new URL(request.url);
  let response: Response;
  try {
    if (!isCanonicalPath(url.pathname)) throw notFound();
    const routed: Response | undefined = await router.fetch(request, { env, ctx, correlationId, url });
    response = routed ?? unrouted(router, request.method, url.pathname);
  } catch (error) {
    response = errorResponse(error, envelopeFor(url.pathname), correlationId);
  }
  const headers = new Headers(response.headers);
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

/** No route answered: 405 with `Allow` when the path exists under another method, else 404. */
function unrouted(router: RouterType<IRequest, [RequestContext]>, method: string, pathname: string): never {
  const allowed = new Set<string>();
  for (const [routeMethod, pattern] of router.routes) {
    if (routeMethod !== "ALL" && pattern.test(pathname)) allowed.add(routeMethod);
  }
  if (allowed.size === 0 || allowed.has(method)) throw notFound(`No resource at ${pathname}.`);
  const allow = [...allowed].sort().join(", ");
  throw new AppError("method_not_allowed", `Method ${method} is not allowed here. Allowed: ${allow}.`, {
    headers: { Allow: allow },
  });
}
