import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from "zod-openapi";
import { authDocumentation } from "../http/authentication";
import type { ApiInterface, HeaderSpec, Route } from "../http/route";
import { AppError, ERROR_CODES, type ErrorCode } from "../lib/errors";

/**
 * The OpenAPI 3.1 documents, produced from the same route definitions that route and validate
 * requests (contract section 11): the public one (analytics, members, health) and the internal one
 * (control plane, webhooks). Nothing here lists a path of its own.
 */

/** A non-negative count (of requests or seconds). */
const count = { type: "integer", format: "int64", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** Headers of every response (contract section 1) and of particular statuses. */
const HEADERS: Record<string, HeaderSpec> = {
  "X-Correlation-Id": {
    description: "The client's X-Correlation-Id when it matches ^[A-Za-z0-9._:-]{1,128}$, else a new UUID. Also in logs.",
    schema: {
      type: "string",
      pattern: "^[A-Za-z0-9._:-]{1,128}$",
      maxLength: 128,
      example: "0b8e7c1e-4f6a-4b59-9a55-0d7f1c5e2a10",
    },
  },
  "Cache-Control": { description: "Always no-store: the data is personal.", schema: { type: "string", const: "no-store" } },
  "WWW-Authenticate": { description: "The scheme to authenticate with.", schema: { type: "string", const: "Bearer" } },
  Allow: {
    description: "The methods this path answers; HEAD wherever GET is.",
    schema: { type: "string", pattern: "^[A-Z]+(, [A-Z]+)*$", maxLength: 40, example: "GET, HEAD, PATCH" },
  },
  "Retry-After": {
    description: "Whole seconds until a retry may succeed (at least 1).",
    schema: { ...count, minimum: 1, example: 42 },
  },
};

/** Contract section 7: on every response counted against the caller's quota. */
const QUOTA_HEADERS: Record<string, HeaderSpec> = {
  "X-RateLimit-Limit": {
    description: "Requests allowed per window for this key owner and key kind.",
    schema: { ...count, example: 1000 },
  },
  "X-RateLimit-Remaining": { description: "Requests left in the current window.", schema: { ...count, example: 998 } },
  "X-RateLimit-Reset": {
    description: "UTC epoch seconds when the current window ends.",
    schema: { ...count, example: 1795000000 },
  },
  "X-RateLimit-Used": { description: "Requests counted in the current window.", schema: { ...count, example: 2 } },
  "RateLimit-Policy": {
    description: 'IETF draft: "default";q=<limit>;w=<window seconds>.',
    schema: { type: "string", pattern: '^"default";q=\\d+;w=\\d+$', maxLength: 60, example: '"default";q=1000;w=900' },
  },
  RateLimit: {
    description: 'IETF draft: "default";r=<remaining>;t=<seconds until reset>.',
    schema: { type: "string", pattern: '^"default";r=\\d+;t=\\d+$', maxLength: 60, example: '"default";r=998;t=712' },
  },
};

/**
 * Which documented headers a response of an API-key route carries: every answer after the key was
 * verified is counted, so its quota headers are required. They are absent on 401 and 405 (answered
 * before the key is judged), and optional where a status can come from before or after the count:
 * 429 (the per-address flood limit has no quota to report), 404 on a path whose segment is not
 * valid percent-encoding (answered before the key), 403 (`ip_not_allowed` is answered with the
 * key's verdict, never counted: contract section 18) and 5xx (a store may fail before or after).
 */
function quotaHeadersFor(api: ApiInterface, route: Route, status: number): Record<string, unknown> {
  const counted = api.auth.kind === "apiKey" || (api.auth.kind === "session" && route.quota !== undefined);
  if (!counted || status === 401 || status === 405) return {};
  // A session's 403 csrf_failed comes before the count (Origin) or after it (the token); a key's
  // 403 ip_not_allowed is never counted.
  const required = status !== 429 && status !== 404 && status !== 403 && status < 500;
  return Object.fromEntries(Object.keys(QUOTA_HEADERS).map((name) => [name, required ? ref(name) : ref(`${name}-optional`)]));
}

const SECURITY_SCHEMES = {
  analyticsKey: { type: "http", scheme: "bearer", description: "Personal Analytics API key (cak_...)." },
  membersKey: { type: "http", scheme: "bearer", description: "Personal Members API key (cbk_...)." },
  adminToken: { type: "http", scheme: "bearer", description: "The Worker's ADMIN_TOKEN secret." },
  sessionCookie: {
    type: "apiKey",
    in: "cookie",
    name: "__Host-session",
    description:
      "The web app's session (sign in at /). State-changing requests also need a same-origin Origin header and the session's CSRF token in X-CSRF-Token (from GET /app/api/session).",
  },
  githubSignature: {
    type: "apiKey",
    in: "header",
    name: "X-Hub-Signature-256",
    description:
      "sha256=<hex HMAC-SHA256 of the raw body> with the GitHub App's webhook secret (GITHUB_WEBHOOK_SECRET, or GITHUB_WEBHOOK_SECRET_PREVIOUS during a rotation).",
  },
} as const;

const EXAMPLE_ID = "0b8e7c1e-4f6a-4b59-9a55-0d7f1c5e2a10";

/** Real sentences the service answers, where the generic description would read oddly. */
const EXAMPLE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_request: "Invalid query parameters.",
  unauthenticated: "Invalid, expired or revoked API key.",
  rate_limited: "Rate limit exceeded: 1000 requests per 900 seconds. Retry after the Retry-After seconds.",
  internal_error: "An unexpected error occurred.",
  unavailable: "The service is temporarily unavailable. Retry with the same request.",
};

/** The other 429 of an API-key route (docs/api.md "Rate limits"; `auth/flood.ts`). */
const FLOOD_429 =
  "Also answered per client address (CF-Connecting-IP) once it has had 100 failed authentications within 60 seconds: " +
  "for the rest of that minute every request from it gets 429 before any key is looked up, valid keys too, " +
  "with Retry-After but no quota headers (no quota was counted).";

/** The only 429 of an interface without quotas (control plane, webhooks): the same per-address throttle. */
const FLOOD_ONLY_429 =
  "rate_limited: this client address (CF-Connecting-IP; an IPv6 address by its /64) has had 100 failed authentications " +
  "within 60 seconds: for the rest of that minute every request from it gets 429 before any credential is checked, " +
  "valid ones too, with Retry-After. This interface has no quota.";

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const always = { "X-Correlation-Id": ref("X-Correlation-Id"), "Cache-Control": ref("Cache-Control") };

/** Every error code a route can answer: its own, its interface's, and those of the stages it passes. */
export function errorCodesOf(api: ApiInterface, route: Route): ErrorCode[] {
  const codes = new Set<ErrorCode>([...route.errors, ...api.errors, "method_not_allowed", "internal_error"]);
  for (const code of authDocumentation(api.auth).errors) {
    // A CSRF check guards only what changes state.
    if (code !== "csrf_failed" || route.method !== "GET") codes.add(code);
  }
  if (route.request?.params || route.request?.query || route.request?.body) codes.add("invalid_request");
  // A key made without the route's scope (a read-only members key on a write); a session holds every scope.
  if (
    api.auth.kind === "apiKey" &&
    route.scope !== undefined &&
    route.scope !== "members:read" &&
    route.scope !== "analytics:read"
  )
    codes.add("insufficient_scope");
  // A path segment that is not valid percent-encoding matches no resource.
  if (route.request?.params) codes.add("not_found");
  if (route.request?.body) {
    codes.add("payload_too_large");
    codes.add("unsupported_media_type");
  }
  return [...codes];
}

/** Error responses by status, with the codes each status can carry (after the envelope's own mapping). */
function errorResponses(api: ApiInterface, route: Route): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(api, route)) {
    const answered = api.envelope.translate(new AppError(code, "")).code;
    const status = ERROR_CODES[answered].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(answered)) list.push(answered);
    byStatus.set(status, list);
  }
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, unknown> = { ...always, ...quotaHeadersFor(api, route, status) };
    if (status === 401 && authDocumentation(api.auth).bearer) headers["WWW-Authenticate"] = ref("WWW-Authenticate");
    if (status === 405) headers.Allow = ref("Allow");
    if (status === 429) headers["Retry-After"] = ref("Retry-After");
    const [first] = codes as [ErrorCode];
    // The body exactly as the envelope renders it, for the first code of this status.
    const example = api.envelope.render(
      new AppError(first, EXAMPLE_MESSAGES[first] ?? `${ERROR_CODES[first].when}.`),
      EXAMPLE_ID,
    );
    const description = codes.map((c) => `${c}: ${ERROR_CODES[c].when}.`).join(" ");
    responses[`${status}` as `4${string}`] = {
      description: status !== 429 ? description : api.auth.kind === "apiKey" ? `${description} ${FLOOD_429}` : FLOOD_ONLY_429,
      headers: headers as never,
      content: { "application/json": { schema: api.envelope.schema(codes), example } },
    };
  }
  return responses;
}

function operation(api: ApiInterface, route: Route): ZodOpenApiOperationObject {
  const scheme = authDocumentation(api.auth).securityScheme;
  const security = scheme === null ? [] : [{ [scheme]: [] }];
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const headers: Record<string, unknown> = { ...always, ...quotaHeadersFor(api, route, Number(status)) };
    for (const [name, h] of Object.entries(spec.headers ?? {})) headers[name] = { ...h };
    const content: Record<string, unknown> = {};
    if (spec.body)
      content["application/json"] = { schema: spec.body, ...(spec.example === undefined ? {} : { example: spec.example }) };
    for (const [type, media] of Object.entries(spec.media ?? {})) content[type] = media;
    responses[status as `2${string}`] = {
      description: spec.description,
      headers: headers as never,
      ...(spec.links ? { links: spec.links as never } : {}),
      ...(Object.keys(content).length > 0 ? { content: content as never } : {}),
    };
  }
  Object.assign(responses, errorResponses(api, route));
  const body = route.request?.body;
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [api.name],
    security,
    ...(route.request?.params || route.request?.query || route.request?.headers
      ? {
          requestParams: {
            ...(route.request.params ? { path: route.request.params } : {}),
            ...(route.request.query ? { query: route.request.query } : {}),
            ...(route.request.headers ? { header: route.request.headers } : {}),
          },
        }
      : {}),
    ...(body
      ? {
          requestBody: {
            required: true,
            description: `JSON, at most ${body.maxBytes} bytes.`,
            content: {
              "application/json": { schema: body.schema, ...(body.example === undefined ? {} : { example: body.example }) },
            },
          },
        }
      : {}),
    responses,
  };
}

const DOCUMENTS = {
  public: {
    title: "Pull request analytics and member management",
    description:
      "Analytics export (cak_ keys, Pro plan) and member management (cbk_ keys) of an automated pull-request reviewer. " +
      "Every response carries X-Correlation-Id and Cache-Control: no-store. Date-times are UTC with milliseconds. " +
      "HEAD is answered wherever GET is: the GET's status and headers (quota counted), no body.",
  },
  internal: {
    title: "Pull request analytics service: internal control plane",
    description:
      "Synchronisation, event ingestion, key management and parked webhook deliveries (ADMIN_TOKEN), and the GitHub App webhook endpoint (signed deliveries). Not for end users; served only with the admin token. " +
      "HEAD is answered wherever GET is: the GET's status and headers, no body.",
  },
} as const;

const built = new WeakMap<readonly ApiInterface[], Map<string, ReturnType<typeof buildDocument>>>();

/** `buildDocument`, once per isolate and list of interfaces (the served documents and the MCP tools' schemas read it). */
export function documentOf(interfaces: readonly ApiInterface[], which: "public" | "internal"): ReturnType<typeof buildDocument> {
  const documents = built.get(interfaces) ?? new Map<string, ReturnType<typeof buildDocument>>();
  built.set(interfaces, documents);
  const document = documents.get(which) ?? buildDocument(interfaces, which);
  documents.set(which, document);
  return document;
}

/** One of the two documents, from the interfaces that belong to it. */
export function buildDocument(interfaces: readonly ApiInterface[], which: "public" | "internal") {
  const mine = interfaces.filter((api) => api.document === which);
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const api of mine) {
    for (const route of api.routes) {
      paths[route.path] ??= {};
      (paths[route.path] as Record<string, ZodOpenApiOperationObject>)[route.method.toLowerCase()] = operation(api, route);
    }
  }
  const used = new Set(mine.map((api) => authDocumentation(api.auth).securityScheme));
  return withUsedHeadersOnly(
    withIntegerFormats(
      createDocument({
        openapi: "3.1.0",
        info: { title: DOCUMENTS[which].title, version: "1.0.0", description: DOCUMENTS[which].description },
        servers: [
          {
            url: "/",
            description: "production (or local, under npm start): the deployment that serves this document",
            "x-internal": which === "internal",
          },
        ],
        tags: mine.map((api) => ({ name: api.name, description: api.description })),
        components: {
          headers: Object.fromEntries([
            ...Object.entries({ ...HEADERS, ...QUOTA_HEADERS }).map(([name, h]) => [name, { ...h, required: true }]),
            ...Object.entries(QUOTA_HEADERS).map(([name, h]) => [`${name}-optional`, { ...h, required: false }]),
          ]) as never,
          securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => used.has(name))) as never,
        },
        paths: paths as never,
      }),
    ),
  );
}

/**
 * The header components both documents could use, minus those no operation of this one refers to
 * (the internal document has no quota headers).
 */
function withUsedHeadersOnly<T extends { paths?: unknown; components?: { headers?: Record<string, unknown> } }>(document: T): T {
  const paths = JSON.stringify(document.paths);
  const headers = document.components?.headers;
  if (headers)
    for (const name of Object.keys(headers)) if (!paths.includes(`"#/components/headers/${name}"`)) delete headers[name];
  return document;
}

/**
 * Every integer of this API is a JSON number within ±(2^53 − 1): int64 in OpenAPI's terms. Zod
 * cannot say so, so the generated document states it wherever a schema has no format of its own.
 */
function withIntegerFormats<T>(document: T): T {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === "object") {
      const schema = node as Record<string, unknown>;
      if (schema.type === "integer" && schema.format === undefined) schema.format = "int64";
      Object.values(schema).forEach(visit);
    }
  };
  visit(document);
  return document;
}
