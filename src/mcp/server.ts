import { isJSONRPCRequest, type McpRequestContext, McpServer, type StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { createMcpHandler, type StatelessMcpHandler } from "agents/mcp/server";
import { callTool, type ToolSession } from "./call";
import type { JsonSchema } from "./schemas";
import { type Tool, toolsFor } from "./tools";

/**
 * The MCP server of one request (stateless: contract section 15): the SDK's `McpServer`, built
 * per request by the factory that Cloudflare's `createMcpHandler` calls, with the tools the key's
 * kind and the read-only mode allow. The HTTP stages (key, quota) ran before; the session they
 * established reaches the factory as the SDK's pass-through `authInfo`.
 */

const INSTRUCTIONS =
  "Pull request analytics (cak_ keys) and organization member management (cbk_ keys) of an automated pull-request " +
  "reviewer. Each tool is the REST route it names in its description: the same parameters, the same JSON answer, and the " +
  "same refusals as a tool error { error: { code, message, retriable, details } }. Member changes are guarded: read " +
  "first, then pass the values you read as the expected values.";

/**
 * A JSON Schema as the SDK's Standard Schema, without validation of its own: the route's schemas
 * decide, so a bad argument is the REST 400 with its details, not the SDK's own message.
 */
const described = (schema: JsonSchema): StandardSchemaWithJSON<Record<string, unknown>> => ({
  "~standard": {
    version: 1,
    vendor: "pr-review-service",
    validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
    jsonSchema: { input: () => schema, output: () => schema },
  },
});

/**
 * Contract section 15's annotations: reads change nothing; the member updates overwrite a seat or a
 * role (destructive), and a repeat with the same values is a no-op under the guards (idempotent).
 * No tool reaches beyond this service's own data.
 */
const READ_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE_ANNOTATIONS = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** What the SDK's `registerTool` takes for a tool, built once per isolate (`registrationOf`). */
interface ToolConfig {
  title: string;
  description: string;
  inputSchema: StandardSchemaWithJSON<Record<string, unknown>>;
  outputSchema: StandardSchemaWithJSON<Record<string, unknown>>;
  annotations: typeof READ_ANNOTATIONS;
}

const configs = new WeakMap<Tool, ToolConfig>();

/**
 * A tool's registration (title, description, schemas, annotations): the same for every request,
 * so built once per tool and isolate. Only the handler, which closes over the request's session,
 * is made per request.
 */
function registrationOf(tool: Tool): ToolConfig {
  let config = configs.get(tool);
  if (!config) {
    config = {
      title: tool.title,
      description: tool.description,
      inputSchema: described(tool.inputSchema),
      outputSchema: described(tool.outputSchema),
      annotations: tool.readOnly ? READ_ANNOTATIONS : WRITE_ANNOTATIONS,
    };
    configs.set(tool, config);
  }
  return config;
}

/** What the request's authentication stage hands the factory (the SDK's pass-through `authInfo.extra`). */
interface FactoryExtra {
  session: ToolSession;
  /** The tool a `tools/call` names (a string), else undefined: the request needs no other tool. */
  calledTool: string | undefined;
}

/**
 * The server of one request. A new instance every time, as the SDK requires: the handler writes
 * per-request state into it (the negotiated protocol version, the client's identity, the modern
 * revision's handlers), so an instance reused by a later request could answer it differently, and
 * one shared by two requests at once would mix them. What is the same for every request (the
 * tools' definitions) is built once per isolate (`toolsFor`, `registrationOf`), and a `tools/call`
 * gets only the tool it names registered: its answer depends on that tool alone (an unknown or
 * withheld name finds no tool either way, and the SDK answers its unknown-tool error), while
 * `tools/list`, `initialize` and the rest get every tool the caller may use.
 */
function buildServer({ authInfo }: McpRequestContext): McpServer {
  const extra = authInfo?.extra as FactoryExtra | undefined;
  const session = extra?.session;
  if (!session) throw new Error("the MCP endpoint was reached without its authentication stage");
  // The tool list never changes while a client holds it, so `tools.listChanged` is not advertised.
  const server = new McpServer(
    { name: "pr-review-service", version: "1.0.0" },
    { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: false } } },
  );
  const tools = toolsFor(session.rc.interfaces, session.scopes, session.readOnly);
  const called = extra.calledTool;
  for (const tool of tools) {
    if (called !== undefined && tool.name !== called) continue;
    server.registerTool(tool.name, registrationOf(tool), (args) => callTool(tool, args, session));
  }
  countRunCalls(server, session, tools);
  return server;
}

/**
 * Contract section 15: only a `tools/call` the server runs counts. The transport hands the server
 * a message only once its own checks passed (Origin, protocol version, Accept, body) and never a
 * notification's reply, so the count starts where the transport delivers a `tools/call` request
 * (a known tool or not); the tool awaits it before running (`call.ts`).
 */
function countRunCalls(server: McpServer, session: ToolSession, tools: readonly Tool[]): void {
  // A key counts against its kind; an OAuth token (contract section 19) against the called tool's,
  // and a call of a tool it cannot run (unknown to it) against nothing.
  const kindOf = (name: unknown) => session.key.kind ?? tools.find((tool) => tool.name === name)?.keyKind ?? null;
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    await connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message) && message.method === "tools/call") {
        const kind = kindOf(message.params?.name);
        if (kind !== null) session.counting ??= session.key.count(kind);
      }
      deliver?.call(transport, message, extra);
    };
  };
}

// One handler per path: `createMcpHandler` serves exactly one pathname.
const handlers = new Map<string, StatelessMcpHandler>();

/** The factory's extra: the session, and the tool a `tools/call` names (the SDK reads the same message, `parsedBody`). */
function factoryExtra(message: Record<string, unknown>, session: ToolSession): Record<string, unknown> & FactoryExtra {
  const params = message.params;
  const name =
    message.method === "tools/call" && typeof params === "object" && params !== null
      ? (params as Record<string, unknown>).name
      : undefined;
  return { session, calledTool: typeof name === "string" ? name : undefined };
}

/** Answers one MCP request (its JSON-RPC message already read and the key judged, not counted). */
export async function serveMcp(path: string, message: Record<string, unknown>, session: ToolSession): Promise<Response> {
  let handler = handlers.get(path);
  if (!handler) {
    // No CORS: a browser cannot send the Authorization header without a preflight this Worker does not answer.
    // Origins: the route's own rule ran before the credential (http/mcp-origin.ts, contract section 19).
    handler = createMcpHandler(buildServer, { route: path, corsOptions: false, allowedOriginHostnames: "*" });
    handlers.set(path, handler);
  }
  const response = await handler.fetch(session.rc.request, {
    parsedBody: message,
    authInfo: {
      token: "bearer",
      clientId: session.key.userId,
      scopes: [...session.scopes],
      extra: factoryExtra(message, session),
    },
  });
  // The whole answer (one message: a stateless server sends no progress), so that the quota
  // headers of a call counted meanwhile are on it; a count that failed was the tool's error.
  const body = await response.text();
  await session.counting?.catch(() => null);
  return new Response(body === "" ? null : body, { status: response.status, headers: response.headers });
}
