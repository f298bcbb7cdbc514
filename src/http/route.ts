import type { z } from "zod";
import type { KeyKind } from "../auth/api-key";
import type { Scope } from "../auth/scopes";
import type { KeyHolder } from "../auth/user-object";
import type { ErrorCode } from "../lib/errors";
import type { QuotaVerdict } from "../rules/quota";
import type { User } from "../schemas/user";
import type { Envelope } from "./envelopes";

/**
 * A route is data: method, path, operationId, the schemas of what it takes and gives, the errors it
 * can answer, and a handler of a few lines. `http/registry.ts` turns these definitions into the
 * router and `openapi/documents.ts` into the OpenAPI documents; nothing else lists routes.
 */

export type Method = "GET" | "PUT" | "POST" | "PATCH" | "DELETE";

/** What every handler receives besides its validated input. */
export interface RequestContext {
  env: Env;
  ctx: ExecutionContext;
  correlationId: string;
  url: URL;
  request: Request;
  /** Headers a stage adds to whatever the request answers (success or error), e.g. rate-limit headers. */
  responseHeaders: Headers;
  /** Every interface the Worker serves (the documents are built from them). */
  interfaces: readonly ApiInterface[];
}

/** A documented response header. */
export interface HeaderSpec {
  description: string;
  /** A JSON Schema of the header's value. */
  schema: { type: "string" | "integer"; [keyword: string]: unknown };
}

export interface SuccessResponse {
  description: string;
  /** JSON body; absent for 204. */
  body?: z.ZodType;
  /** Other media types with their own schema (e.g. text/csv). */
  media?: Record<string, { schema: z.ZodType; example?: string }>;
  headers?: Record<string, HeaderSpec & { required?: boolean }>;
  example?: unknown;
  /** OpenAPI links: operations a client can call next with values of this answer (runtime expressions). */
  links?: Record<
    string,
    { operationId: string; description: string; parameters?: Record<string, string>; requestBody?: unknown }
  >;
}

export interface BodySpec<B extends z.ZodType> {
  schema: B;
  maxBytes: number;
  example?: unknown;
  /**
   * The authentication stage reads the body (a signature over the exact bytes is checked while it
   * streams in) and the handler gets those bytes as `raw`; `schema` then only describes it in the
   * document.
   */
  raw?: boolean;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** The key a request of an `anyApiKey` interface came with, as the owner's object judged it. */
export interface CallerKey {
  /** The key's kind; null for an OAuth access token (contract section 19), whose scopes may span both. */
  kind: KeyKind | null;
  /** The owner's id as the key record names it. */
  userId: string;
  /** The key's id, name and scopes; null for an OAuth access token (its changes' audit entries name no key). */
  holder: KeyHolder | null;
  /**
   * Counts this request against the owner's quota, once the route knows it is one to count (the
   * MCP server: a `tools/call` it runs); resolves to the verdict (exhausted: the route answers
   * that), null for an unlimited kind. Sets the quota headers on the answer. `kind`: the quota a
   * token's call counts against (the tool's kind); a key counts against its own kind's.
   */
  count: (kind: KeyKind) => Promise<QuotaVerdict | null>;
  /** What the credential may do: a key's scopes (its holder's), or the scopes a person approved for an OAuth client. */
  scopes: readonly Scope[];
}

/**
 * What a handler learns from its interface's authentication, by the kind of that authentication:
 * the registry runs the stage before any handler, so these are never missing.
 */
export type AuthArgs<A extends AuthKind> = A extends "apiKey"
  ? {
      /** The verified key owner. */
      caller: User;
      /** The key (id, name, scopes); null when the app's session runs the same route (`forApp`). */
      key: KeyHolder | null;
    }
  : A extends "session"
    ? {
        caller: User;
        /** The session's CSRF token, for the page to send back. */
        csrfToken: string;
        key: null;
      }
    : A extends "anyApiKey"
      ? { caller: User /** The key itself: its kind picks the MCP tools. */; key: CallerKey }
      : A extends "webhookSignature"
        ? { /** The body as sent, verified by its signature. */ raw: Uint8Array }
        : Record<never, never>;

export type HandlerArgs<P, Q, B, T, A extends AuthKind> = RouteInput<P, Q, B> & {
  /** What `alongside` read, once the key verdict allowed it to be seen. */
  read: T;
} & AuthArgs<A>;

/** A handler returns the success body (answered with the first documented success status), null for 204, or a Response. */
export type HandlerResult = unknown;

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, T, A extends AuthKind = AuthKind> {
  method: Method;
  /** OpenAPI form: `/api/v1/organizations/{org}/members/{githubUserId}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  request?: {
    params?: P;
    query?: Q;
    body?: BodySpec<B>;
    /** Request headers the handler reads itself (e.g. a webhook's event name): documented, not parsed by the registry. */
    headers?: z.ZodObject;
    /** Rules across fields (e.g. a date range), run once every part parsed; throw an AppError. */
    check?: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => void;
    /** The 400 message for invalid parameters; default "Invalid path parameters." / "Invalid query parameters.". */
    invalidMessage?: (details: readonly { path: string; message: string }[]) => string;
  };
  /**
   * A read that may run alongside the key verdict once the key is known to exist (reads only).
   * Its answer is judged after the verdict and after parameter errors, so nothing of it leaks to a
   * caller whose key fails. Receives the key owner's id from the key record, and the verdict
   * itself (it rejects on a 401 or 429), e.g. to stop guessing for a caller who is refused.
   */
  alongside?: (
    input: RouteInput<z.output<P>, z.output<Q>, undefined>,
    callerId: string,
    rc: RequestContext,
    verdict: Promise<unknown>,
  ) => Promise<T>;
  /**
   * The scope a key needs for this route (contract section 18): checked after the key's verdict,
   * its network and its quota (403 `insufficient_scope`). Every API-key route declares one; a
   * session (a person in the app) holds every scope.
   */
  scope?: Scope;
  /**
   * Routes of a session interface: the key kind whose quota a request counts against, as a key of
   * that kind would (contract section 13); absent: not counted.
   */
  quota?: KeyKind;
  /**
   * Whether the route exists in this deployment (absent: always). When it says no, the route is
   * not there at all: every method, header and body answers exactly as an unknown path does
   * (local sign-in without `DEV_SIGN_IN`, contract section 13).
   */
  exists?: (env: Env) => boolean;
  /** Success responses by status. */
  responses: Record<number, SuccessResponse>;
  /** Error codes the handler itself can answer; the registry adds those of auth, parsing and stages. */
  errors: readonly ErrorCode[];
  handler(args: HandlerArgs<z.output<P>, z.output<Q>, z.output<B>, T, A>, rc: RequestContext): Promise<HandlerResult>;
}

/**
 * A route with its input types erased, as the registry holds it, and the kind of authentication its
 * handler was written for (the registry refuses to serve it under another).
 */
// biome-ignore lint/suspicious/noExplicitAny: the registry handles every route alike; each definition is checked where it is written.
export type Route<A extends AuthKind = AuthKind> = RouteSpec<any, any, any, any, A> & { auth: A };

/**
 * The route builder of an interface authenticated by `auth`: identity with inference, so the handler
 * sees the output types of the route's own schemas and exactly what that authentication
 * establishes (`AuthArgs`).
 */
export const routesFor =
  <A extends AuthKind>(auth: A) =>
  <
    P extends z.ZodType = z.ZodObject<Record<string, never>>,
    Q extends z.ZodType = z.ZodObject<Record<string, never>>,
    B extends z.ZodType = z.ZodUndefined,
    T = undefined,
  >(
    spec: RouteSpec<P, Q, B, T, A>,
  ): Route<A> =>
    ({ ...spec, auth }) as Route<A>;

/** A route of an interface without a credential (or that only checks the Origin). */
export const defineRoute = routesFor("none");

/**
 * How an interface authenticates its routes: one declared stage, run by `http/authentication.ts`
 * (which also counts failures per client address).
 */
export type InterfaceAuth =
  | { kind: "none" }
  /** A personal API key of this kind, judged by the owner's Durable Object; counted against a quota. */
  | { kind: "apiKey"; keyKind: KeyKind }
  /**
   * A personal API key of either kind, whose kind the route learns (the MCP endpoint: it picks the
   * tools). The stage reads the JSON body (an object or an array) and judges the key without
   * counting; the route counts through `CallerKey.count` what it decides to run.
   */
  | { kind: "anyApiKey" }
  /** `Authorization: Bearer <ADMIN_TOKEN>`, for every path under the base path, routed or not. */
  | { kind: "adminToken" }
  /** GitHub's `X-Hub-Signature-256` over the raw body, checked while the body streams in (routes with a `raw` body). */
  | { kind: "webhookSignature" }
  /**
   * The web app's session cookie (`__Host-session`), judged by the user's Durable Object; a
   * state-changing request also needs a same-origin `Origin` and the session's `X-CSRF-Token`.
   */
  | { kind: "session" }
  /** No credential, but a state-changing request needs a same-origin `Origin` (sign-in). */
  | { kind: "sameOrigin" };

/**
 * An interface: a group of routes sharing a base path, an error envelope, an authentication and a
 * document. Paths under `basePath` that no route matches still answer in this interface's envelope.
 */
export type AuthKind = InterfaceAuth["kind"];

/** An interface of one kind of authentication; without a kind, any interface. */
export type ApiInterface<A extends AuthKind = AuthKind> = A extends AuthKind ? InterfaceOf<A> : never;

interface InterfaceOf<A extends AuthKind> {
  name: string;
  description: string;
  basePath: string;
  /** The OpenAPI document that lists the interface's routes; "none" for one that is not REST (MCP). */
  document: "public" | "internal" | "none";
  envelope: Envelope;
  auth: Extract<InterfaceAuth, { kind: A }>;
  /** Error codes every route of the interface can answer (e.g. 503 where a Durable Object is asked). */
  errors: readonly ErrorCode[];
  /** Routes written for this authentication, or for none (they need nothing from it). */
  routes: readonly Route<A | "none">[];
  /** What a GET (or HEAD) of a path under `basePath` that no route matches answers, instead of the envelope's 404 (the app's pages: a page). */
  unknownPage?: (rc: RequestContext) => Response;
}
