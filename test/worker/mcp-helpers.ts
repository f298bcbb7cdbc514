import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { fetchWithEnv } from "./helpers";

/**
 * Raw MCP over HTTP, as a 2025-era client sends it (JSON-RPC POSTs, answers as JSON or SSE), so
 * that tests see the HTTP status and headers of each exchange. The SDK's own client is driven
 * against `wrangler dev` in test/node/mcp-client.test.ts.
 */

const BASE = "https://service.test";
let nextId = 1;

/** A client address of the running test's own (failed authentications are throttled per address). */
function testAddress(): string {
  const { testPath, currentTestName } = expect.getState();
  let hash = 2_166_136_261;
  for (const c of `mcp ${testPath} ${currentTestName}`) hash = Math.imul(hash ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return `10.${(hash >>> 16) & 255}.${(hash >>> 8) & 255}.${hash & 255}`;
}

export interface McpExchange {
  response: Response;
  /** The JSON-RPC answer (from a JSON body or the SSE stream's message), or null (202, or an HTTP error). */
  message: { result?: Record<string, unknown>; error?: { code: number; message: string } } | null;
  /** The body when it is no JSON-RPC answer (an HTTP error's envelope). */
  body: unknown;
}

export async function mcpPost(
  key: string | null,
  payload: Record<string, unknown>,
  { path = "/mcp", headers = {}, vars }: { path?: string; headers?: Record<string, string>; vars?: Record<string, string> } = {},
): Promise<McpExchange> {
  const request = new Request(`${BASE}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "CF-Connecting-IP": testAddress(),
      ...(key === null ? {} : { Authorization: `Bearer ${key}` }),
      ...headers,
    },
    body: JSON.stringify(payload),
  });
  // With `vars` (small quotas), the Worker's handler runs with those Worker vars for this request.
  const response = vars ? await fetchWithEnv(request, vars, { documented: false }) : await exports.default.fetch(request);
  const text = await response.text();
  const type = response.headers.get("Content-Type") ?? "";
  if (type.includes("text/event-stream")) {
    const data = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => JSON.parse(line.slice(5)));
    return { response, message: data.find((m) => "result" in m || "error" in m) ?? null, body: null };
  }
  const body = text === "" ? null : JSON.parse(text);
  const isRpc = body !== null && typeof body === "object" && "jsonrpc" in body;
  return { response, message: isRpc ? body : null, body };
}

/** One JSON-RPC request. */
export interface McpOptions {
  path?: string;
  headers?: Record<string, string>;
  vars?: Record<string, string>;
}

export const rpc = (key: string | null, method: string, params: Record<string, unknown> = {}, options: McpOptions = {}) =>
  mcpPost(key, { jsonrpc: "2.0", id: nextId++, method, params }, options);

export interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface Refusal {
  code: string;
  message: string;
  retriable: boolean;
  details: unknown[];
  retryAfterSeconds?: number;
}

/**
 * A refusal's error (contract section 15): `isError`, exactly one text item holding
 * `{ error: {...} }`, and no `structuredContent` (which would have to match the success schema).
 */
export function refusalOf(result: ToolResult): Refusal {
  expect(result.isError).toBe(true);
  expect(result).not.toHaveProperty("structuredContent");
  expect(result.content).toHaveLength(1);
  expect(result.content[0]?.type).toBe("text");
  const body = JSON.parse(result.content[0]?.text ?? "") as { error: Refusal };
  expect(Object.keys(body)).toEqual(["error"]);
  return body.error;
}

/** `tools/call`: the exchange and its result. */
export async function callTool(key: string, name: string, args: Record<string, unknown>, options: McpOptions = {}) {
  const exchange = await rpc(key, "tools/call", { name, arguments: args }, options);
  return { ...exchange, result: exchange.message?.result as unknown as ToolResult };
}

export interface ListedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

/** `tools/list`: the tools by name. */
export async function listTools(key: string, options: McpOptions = {}): Promise<Map<string, ListedTool>> {
  const { message } = await rpc(key, "tools/list", {}, options);
  const tools = (message?.result?.tools ?? []) as ListedTool[];
  return new Map(tools.map((tool) => [tool.name, tool]));
}

export const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "worker-test", version: "1.0.0" },
};
