import { z } from "zod";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, routesFor } from "../http/route";
import { serveMcp } from "./server";

/**
 * `POST /mcp` and `POST /mcp/readonly` (contract section 15): the Model Context Protocol over
 * Streamable HTTP, stateless, for a personal key of either kind (its kind picks the tools) or an
 * OAuth access token (its approved scopes pick them, contract section 19). The authentication
 * stage judges the credential before the MCP server is reached (401 over HTTP); a
 * `tools/call` the server runs counts against the owner's quota. `GET /mcp` is 405 (no server-initiated stream).
 */

const anyKeyRoute = routesFor("anyApiKey");

/** A JSON-RPC message; a batch of 100 member changes is about 13 KiB. */
const MCP_MAX_BODY = 128 * 1024;

const JsonRpcMessage = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .meta({ description: "One JSON-RPC 2.0 message (a batch, an array, is refused)." });

/** Contract section 15: a JSON-RPC batch is refused under every protocol version, as JSON-RPC. */
const batchRefused = () =>
  Response.json({ jsonrpc: "2.0", error: { code: -32600, message: "batches are not supported" }, id: null }, { status: 400 });

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
      if (Array.isArray(body)) return batchRefused();
      return serveMcp(path, body, { rc, user: caller, key, scopes: key.scopes, readOnly: readOnlyMode(path, rc.request) });
    },
  });

export const mcpInterface: ApiInterface<"anyApiKey"> = {
  name: "mcp",
  description: "Model Context Protocol endpoint: the analytics and member routes as tools (cak_ or cbk_ keys, or OAuth tokens).",
  basePath: "/mcp",
  document: "none",
  envelope: codedErrorEnvelope,
  // Contract section 15: a tools/call the server runs counts once (server.ts); nothing else does.
  auth: { kind: "anyApiKey" },
  errors: ["internal_error", "unavailable"],
  routes: [
    mcpRoute("/mcp", "mcp", "MCP endpoint (every tool of the key's kind)"),
    mcpRoute("/mcp/readonly", "mcpReadonly", "MCP endpoint, read-only tools only"),
  ],
};
