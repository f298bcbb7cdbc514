import { type IRequest, Router, type RouterType } from "itty-router";
import type { z } from "zod";
import { attempt } from "../lib/attempt";
import { AppError, type ErrorDetail, notFound } from "../lib/errors";
import { type Authenticated, authDocumentation, authenticate } from "./authentication";
import { readJsonObject } from "./body";
import { json } from "./envelopes";
import { errorResponse } from "./error-response";
import { readPathParams, readQuery } from "./request";
import type { ApiInterface, AuthArgs, AuthKind, HandlerResult, RequestContext, Route } from "./route";
import { parseOrThrow } from "./validation";

/** `/a/{b}/c` → `/a/:b/c` for itty, and a RegExp for `Allow`. */
const ittyPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");
const pathPattern = (path: string) => new RegExp(`^${path.replace(/\{\w+\}/g, "[^/]+")}$`);

/** RFC 9110: a HEAD answer is the GET's status and headers without the body. */
const withoutBody = (response: Response): Response =>
  new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });

/**
 * Turns interface definitions into the router. Each route runs the same stages in the contract's
 * order: its interface's authentication (`http/authentication.ts`: 404/429/401), parameters (400),
 * body (415/413/400), then its handler; a read declared `alongside` runs in parallel with the key
 * verdict and is judged after it.
 */
export class Registry {
  readonly router: RouterType<IRequest, [RequestContext]>;
  readonly #patterns: { method: string; pattern: RegExp; route: Route }[] = [];

  constructor(readonly interfaces: readonly ApiInterface[]) {
    this.router = Router<IRequest, [RequestContext]>();
    for (const api of interfaces) {
      for (const route of api.routes) {
        if (route.auth !== api.auth.kind && route.auth !== "none")
          throw new Error(`${route.operationId}: a route for ${route.auth} in an interface of ${api.auth.kind}`);
        if (route.auth === "apiKey" && !route.scope) throw new Error(`${route.operationId}: an API-key route declares its scope`);
        this.#patterns.push({ method: route.method, pattern: pathPattern(route.path), route });
        // A route that does not exist here answers nothing, so routing goes on as for an unknown path.
        this.router[route.method.toLowerCase() as "get"](ittyPath(route.path), (request: IRequest, rc: RequestContext) =>
          present(route, rc) ? runRoute(api, route, request, rc) : undefined,
        );
        // HEAD wherever GET is (contract section 1): the same stages, quota included, and its
        // error answers too lose their body, so they are rendered here rather than in dispatch.
        if (route.method === "GET") {
          this.#patterns.push({ method: "HEAD", pattern: pathPattern(route.path), route });
          this.router.head(ittyPath(route.path), (request: IRequest, rc: RequestContext) =>
            present(route, rc)
              ? runRoute(api, route, request, rc).then(withoutBody, (error) =>
                  withoutBody(errorResponse(error, api.envelope, rc.correlationId)),
                )
              : undefined,
          );
        }
      }
    }
  }

  /** The interface a path belongs to: the one with the longest base path that contains it. */
  interfaceFor(pathname: string): ApiInterface | undefined {
    let best: ApiInterface | undefined;
    for (const api of this.interfaces) {
      const inside = pathname === api.basePath || pathname.startsWith(api.basePath === "/" ? "/" : `${api.basePath}/`);
      if (inside && (!best || api.basePath.length > best.basePath.length)) best = api;
    }
    return best;
  }

  /**
   * No route answered: 405 with `Allow` when the path exists under another method, else 404; first
   * the interface's authentication where it covers every path (the admin token), so that an
   * unauthenticated caller learns nothing about the routes. An interface with an `unknownPage`
   * answers a GET of an unknown path with it (the app's pages).
   */
  async unrouted(api: ApiInterface | undefined, rc: RequestContext): Promise<Response> {
    if (api && authDocumentation(api.auth).everyPath) await authenticate(api.auth, null, rc, Date.now());
    const method = rc.request.method;
    const pathname = rc.url.pathname;
    const allowed = new Set(this.#patterns.filter((p) => p.pattern.test(pathname) && present(p.route, rc)).map((p) => p.method));
    if (api?.unknownPage && allowed.size === 0 && (method === "GET" || method === "HEAD")) return api.unknownPage(rc);
    if (allowed.size === 0 || allowed.has(method)) throw notFound(`No resource at ${pathname}.`);
    const allow = [...allowed].sort().join(", ");
    throw new AppError("method_not_allowed", `Method ${method} is not allowed here. Allowed: ${allow}.`, {
      headers: { Allow: allow },
    });
  }
}

/** Whether a route exists in this deployment (`Route.exists`). */
const present = (route: Route, rc: RequestContext): boolean => route.exists?.(rc.env) ?? true;

interface Parsed {
  params: unknown;
  query: unknown;
}

/** One call of a route, as its stages after authentication see it: from HTTP, or in-process (MCP tools). */
export interface RouteCall {
  /** Path parameters as they appear in a path (percent-encoded). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON body (routes that declare one): read and checked against the route's limits (415/413/400). */
  body: (maxBytes: number) => Promise<unknown>;
  /** The key owner's id from the key record, once the key is known to exist (for `alongside` reads), else null. */
  callerId: string | null;
  /**
   * The authentication's verdict as the handler sees it (`AuthArgs` of the route's kind), or a
   * rejection (401/429/403).
   */
  verdict: Promise<AuthArgs<AuthKind>>;
}

async function runRoute(api: ApiInterface, route: Route, request: IRequest, rc: RequestContext): Promise<Response> {
  const authenticated = await authenticate(api.auth, route, rc, Date.now());
  const call: RouteCall = {
    params: request.params,
    query: rc.url.searchParams,
    body: (maxBytes) => readJsonObject(request, maxBytes),
    ...authArgs(authenticated),
  };
  if (authenticated.kind === "anyApiKey") call.body = async () => authenticated.body;
  const result = await executeRoute(route, call, rc);
  if (result instanceof Response) return result;
  const status = Number(Object.keys(route.responses)[0]);
  return result === null ? new Response(null, { status }) : json(result, status);
}

/** What the authentication stage hands to the route's stages and its handler. */
function authArgs(authenticated: Authenticated): Pick<RouteCall, "callerId" | "verdict"> {
  switch (authenticated.kind) {
    case "apiKey":
      return {
        callerId: authenticated.callerId,
        verdict: authenticated.verdict.then(({ user, key }) => ({ caller: user, key })),
      };
    case "session":
      return {
        callerId: authenticated.callerId,
        verdict: authenticated.verdict.then(({ user, csrfToken }) => ({ caller: user, csrfToken, key: null })),
      };
    case "anyApiKey":
      return {
        callerId: authenticated.key.userId,
        verdict: Promise.resolve({ caller: authenticated.user, key: authenticated.key }),
      };
    case "webhookSignature":
      return { callerId: null, verdict: Promise.resolve({ raw: authenticated.body }) };
    case "none":
    case "adminToken":
      return { callerId: null, verdict: Promise.resolve({}) };
  }
}

/**
 * The stages of a route after authentication, in the contract's order: parameters (400), the
 * `alongside` read started in parallel with the key verdict, the verdict (401/429), the body
 * (415/413/400), the read's answer, then the handler. Returns what the handler returned.
 */
export async function executeRoute(route: Route, call: RouteCall, rc: RequestContext): Promise<HandlerResult> {
  const parsed = attempt((): Parsed => {
    const params = route.request?.params ? readPathParams(route.request.params, call.params, invalid(route, "path")) : {};
    const query = route.request?.query ? readQuery(route.request.query, call.query, invalid(route, "query")) : {};
    if (!route.request?.body) route.request?.check?.({ params, query, body: undefined });
    return { params, query };
  });
  const alongside =
    parsed.ok && call.callerId !== null && route.alongside
      ? route.alongside({ ...parsed.value, body: undefined }, call.callerId, rc, call.verdict)
      : Promise.resolve(undefined);
  // Settled here, so a read nobody awaits (the key refused) is no unhandled rejection.
  const read = alongside.then(
    (value) => ({ status: "fulfilled" as const, value }),
    (reason: unknown) => ({ status: "rejected" as const, reason }),
  );

  // Judged in order: the key first (a failing key is a 401, an exhausted quota a 429, whatever else
  // happened), then the parameters. A refused request answers at once: the read started alongside
  // is not awaited (the runtime drops it with the response), so refusing costs no more than the verdict.
  const auth = await call.verdict;
  if (!parsed.ok) throw parsed.error;

  let body: unknown;
  if (route.request?.body && !route.request.body.raw) {
    const spec = route.request.body;
    body = parseOrThrow(spec.schema as z.ZodType, await call.body(spec.maxBytes), "Invalid request body.");
    route.request.check?.({ ...parsed.value, body });
  }
  const settled = await read;
  if (settled.status === "rejected") throw settled.reason;

  return route.handler(
    // Typed by the route's own kind of authentication, which the registry checked against its interface's.
    { ...parsed.value, body, read: settled.value, ...auth } as Parameters<Route["handler"]>[0],
    rc,
  );
}

const invalid =
  (route: Route, part: "path" | "query") =>
  (details: readonly ErrorDetail[]): string =>
    route.request?.invalidMessage?.(details) ?? (part === "path" ? "Invalid path parameters." : "Invalid query parameters.");
