import { clientAddress } from "../auth/authenticate";
import type { Scope } from "../auth/scopes";
import { quotaExceeded } from "../http/authentication";
import { tooLarge } from "../http/body";
import { publicError } from "../http/error-response";
import { executeRoute, type RouteCall } from "../http/registry";
import type { CallerKey, RequestContext } from "../http/route";
import { type AppError, badRequest } from "../lib/errors";
import type { QuotaVerdict } from "../rules/quota";
import type { User } from "../schemas/user";
import type { Tool } from "./tools";

/**
 * Runs a tool as the REST request it mirrors, in-process: the arguments become that request's path
 * parameters, query and body, and the route's own stages (its schemas, its `alongside` read, its
 * handler) run with the caller the MCP request authenticated. So a tool's result is the REST body
 * at that moment, and its refusal the REST error with the same code, message and details
 * (contract section 15), with nothing re-implemented.
 */

/** What the MCP request established: the key owner, the key (kind, and how to count), its context. */
export interface ToolSession {
  rc: RequestContext;
  user: User;
  key: CallerKey;
  /** The scopes that pick the tools listed and run (the key's; an OAuth grant's). */
  scopes: readonly Scope[];
  readOnly: boolean;
  /** The count of this request's `tools/call`, started when the transport delivered it (`server.ts`). */
  counting?: Promise<QuotaVerdict | null>;
}

/**
 * The MCP `CallToolResult` of a tool: on success `structuredContent` and the same JSON as text; a
 * refusal (`isError`) is the error JSON as text only, since MCP wants `structuredContent` to match
 * the tool's `outputSchema` (the success body) and the SDK's v1 client rejects a result that does not.
 */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: true;
}

/** A query or path value as it would be written in a URL; the route's schema then judges it as over HTTP. */
const scalar = (value: unknown): string =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean"
      ? String(value)
      : JSON.stringify(value);

/**
 * A list parameter's argument as the REST string (`Tool.lists`): the string as it is, or an array of
 * names joined with commas. What the input schema refuses is refused here, naming the argument: an
 * empty array (it would read as no filter at all), an item that is not one non-blank name (a comma
 * in it would make two), and any other type (a number is not a name).
 */
function listArgument(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  const refuse = (message: string) => badRequest("Invalid arguments.", [{ path: name, message }]);
  if (!Array.isArray(value)) throw refuse("must be a comma-separated string of names or an array of names");
  if (value.length === 0) throw refuse("must list at least one name (leave the argument out for no filter)");
  for (const item of value) {
    if (typeof item !== "string" || item.trim() === "" || item.includes(",")) {
      throw refuse("each item of the array must be one name: a non-blank string without commas");
    }
  }
  return value.join(",");
}

function routeCall(tool: Tool, args: Record<string, unknown>, session: ToolSession): RouteCall {
  const params: Record<string, string> = {};
  for (const name of tool.pathNames) {
    if (args[name] !== undefined) params[name] = encodeURIComponent(scalar(args[name]));
  }
  const query = new URLSearchParams();
  for (const name of tool.queryNames) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    if (tool.lists.includes(name)) {
      query.append(name, listArgument(name, value));
      continue;
    }
    // Any other array is a parameter given several times: 400, as over HTTP.
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, scalar(item));
  }
  const taken = new Set([...tool.pathNames, ...tool.queryNames, ...tool.omit]);
  const body = Object.fromEntries(Object.entries(args).filter(([name]) => !taken.has(name)));
  return {
    params,
    query,
    body: async (maxBytes) => {
      if (new TextEncoder().encode(JSON.stringify(body)).byteLength > maxBytes) throw tooLarge(maxBytes);
      return body;
    },
    callerId: session.key.userId,
    // The REST route is an API-key route: its handler sees the caller the MCP request authenticated.
    verdict: Promise.resolve({ caller: session.user, key: session.key.holder }),
  };
}

/** The REST request's context: its URL (the export builds its Link from it), a JSON Accept and the caller's address; headers it sets are dropped. */
function restContext(tool: Tool, call: RouteCall, rc: RequestContext): RequestContext {
  const path = tool.route.path.replace(/\{(\w+)\}/g, (_, name: string) => call.params[name] ?? "");
  const url = new URL(path, rc.url);
  url.search = call.query.toString();
  const headers = new Headers({ Accept: "application/json" });
  // The caller's address: the key's allowed networks were judged on it, and a change's audit entry records it.
  const address = clientAddress(rc.request);
  if (address !== null) headers.set("CF-Connecting-IP", address);
  const request = new Request(url, { method: tool.route.method, headers });
  return { ...rc, url, request, responseHeaders: new Headers() };
}

const success = (text: string): ToolResult => ({
  content: [{ type: "text", text }],
  structuredContent: JSON.parse(text) as Record<string, unknown>,
});

/** A refusal as a tool result: the REST error's code, message, retriable flag and details. */
function errorResult(error: AppError, retryAfterSeconds?: number): ToolResult {
  const body = {
    error: {
      code: error.code,
      message: error.message,
      retriable: error.retriable,
      details: error.details,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    },
  };
  return { content: [{ type: "text", text: JSON.stringify(body) }], isError: true };
}

/** Calls a tool; never throws (every failure is a tool result, as the contract wants). */
export async function callTool(tool: Tool, args: Record<string, unknown>, session: ToolSession): Promise<ToolResult> {
  const { rc } = session;
  try {
    // Counted once the transport delivered the call (the headers of section 7 go on the HTTP
    // response); an exhausted quota is answered here, and nothing runs.
    const quota = await (session.counting ?? session.key.count(tool.keyKind));
    if (quota !== null && !quota.allowed) {
      return errorResult(quotaExceeded(quota), Math.max(1, Math.ceil((quota.resetAt - Date.now()) / 1000)));
    }
    const call = routeCall(tool, args, session);
    const answer = await executeRoute(tool.route, call, restContext(tool, call, rc));
    // The body exactly as REST would send it (a route may answer a Response, e.g. the export).
    return success(answer instanceof Response ? await answer.text() : JSON.stringify(answer));
  } catch (error) {
    return errorResult(publicError(error, tool.api.envelope, rc.correlationId));
  }
}
