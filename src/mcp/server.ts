import { type McpRequestContext, McpServer, type StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { createMcpHandler, type StatelessMcpHandler } from "agents/mcp/server";
import { callTool, type ToolSession } from "./call";
import type { JsonSchema } from "./schemas";
import { toolsFor } from "./tools";

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

function buildServer({ authInfo }: McpRequestContext): McpServer {
  const session = authInfo?.extra?.session as ToolSession | undefined;
  if (!session) throw new Error("the MCP endpoint was reached without its authentication stage");
  const server = new McpServer({ name: "pr-review-service", version: "1.0.0" }, { instructions: INSTRUCTIONS });
  for (const tool of toolsFor(session.rc.interfaces, session.key.scopes, session.readOnly)) {
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: described(tool.inputSchema),
        outputSchema: described(tool.outputSchema),
        // Writes change a seat or a role: reversible, guarded, never a deletion.
        annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
      },
      (args) => callTool(tool, args, session),
    );
  }
  return server;
}

// One handler per path: `createMcpHandler` serves exactly one pathname.
const handlers = new Map<string, StatelessMcpHandler>();

/** Answers one MCP request (its JSON-RPC message already read and the key judged). */
export function serveMcp(path: string, message: Record<string, unknown>, session: ToolSession): Promise<Response> {
  let handler = handlers.get(path);
  if (!handler) {
    // No CORS: a browser cannot send the Authorization header without a preflight this Worker does not answer.
    // Origins: the route's own rule ran before the key (http/mcp-origin.ts, contract section 19).
    handler = createMcpHandler(buildServer, { route: path, corsOptions: false, allowedOriginHostnames: "*" });
    handlers.set(path, handler);
  }
  return handler.fetch(session.rc.request, {
    parsedBody: message,
    authInfo: { token: "bearer", clientId: session.key.userId, scopes: [...session.key.scopes], extra: { session } },
  });
}
