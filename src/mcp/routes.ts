import { z } from "zod";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, routesFor } from "../http/route";
import { serveMcp } from "./server";
import { toolsFor } from "./tools";

/**
 * `POST /mcp` and `POST /mcp/readonly` (contract section 15): the Model Context Protocol over
 * Streamable HTTP, stateless, for a personal key of either kind (its kind picks the tools). The
 * authentication stage judges the key before the MCP server is reached (401 over HTTP) and counts
 * only a `tools/call` against the owner's quota. `GET /mcp` is 405 (no server-initiated stream).
 */

const anyKeyRoute = routesFor("anyApiKey");

/** A JSON-RPC message; a batch of 100 member changes is about 13 KiB. */
const MCP_MAX_BODY = 128 * 1024;

const JsonRpcMessage = z.record(z.string(), z.unknown()).meta({ description: "One JSON-RPC 2.0 message." });

/** `/mcp/readonly`, or `X-MCP-Readonly: true` on `/mcp`: only the tools that change nothing. */
const readOnlyMode = (path: string, request: Request): boolean =>
  path === "/mcp/readonly" || request.headers.get("X-MCP-Readonly")?.trim().toLowerCase() === "true";

const mcpRoute = (path: "/mcp" | "/mcp/readonly", operationId: string, summary: string) =>
  anyKeyRoute({
    method: "POST",
    path,
    operationId,
    summary,
    request: { body: { schema: JsonRpcMessage, maxBytes: MCP_MAX_BODY } },
    responses: {
      200: { description: "The JSON-RPC answer, as JSON or as an SSE stream (the client accepts both)." },
      202: { description: "A notification, accepted." },
    },
    errors: [],
    handler: async ({ body, caller, key }, rc) => {
      return serveMcp(path, body, { rc, user: caller, key, readOnly: readOnlyMode(path, rc.request) });
    },
  });

export const mcpInterface: ApiInterface<"anyApiKey"> = {
  name: "mcp",
  description: "Model Context Protocol endpoint: the analytics and member routes as tools (cak_ or cbk_ keys).",
  basePath: "/mcp",
  document: "none",
  envelope: codedErrorEnvelope,
  // Contract section 15: every tools/call counts once; initialize, tools/list, ping and notifications are free.
  auth: {
    kind: "anyApiKey",
    counted: (message) => message.method === "tools/call",
    // An OAuth token (contract section 19): the quota of the tool's kind, for a tool the caller can run.
    countedKind: (message, scopes, rc) => {
      const name = (message.params as { name?: unknown } | undefined)?.name;
      const tools = toolsFor(rc.interfaces, scopes, readOnlyMode(rc.url.pathname, rc.request));
      return tools.find((tool) => tool.name === name)?.keyKind ?? null;
    },
  },
  errors: ["internal_error", "unavailable"],
  routes: [
    mcpRoute("/mcp", "mcp", "MCP endpoint (every tool of the key's kind)"),
    mcpRoute("/mcp/readonly", "mcpReadonly", "MCP endpoint, read-only tools only"),
  ],
};
