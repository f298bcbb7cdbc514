import type { z } from "zod";
import { MAX_LIST_NAMES } from "../analytics/query";
import type { Scope } from "../auth/scopes";
import type { ApiInterface, Route } from "../http/route";
import { documentOf } from "../openapi/documents";
import type { KeyKind } from "../schemas/key-kind";
import { type JsonSchema, type OpenApiDocument, operationsById, toolInputSchema, toolOutputSchema } from "./schemas";

/**
 * The MCP tools (contract section 15), each one line naming the REST route it mirrors by
 * operationId. Everything else comes from the route: its interface's key kind (which keys list the
 * tool), its method (GET: `readOnlyHint`), its summary and description, and its schemas through the
 * public OpenAPI document. A new route becomes a tool with one line here.
 */

interface ToolLine {
  name: string;
  operationId: string;
  /** Parameters the tool leaves out: `format` of the export and the lists (a tool answers JSON, never CSV). */
  omit?: readonly string[];
  /** What an agent must know beyond the route's own description. */
  advice?: string;
  /**
   * Query parameters that take a comma-separated list of names (contract section 21: `repo`,
   * `author`): the tool takes the REST string as it is, or an array of names, which becomes that
   * string (agents tend to pass a list as an array; the route's own checks still decide).
   */
  lists?: readonly string[];
}

const NAME_LISTS = ["repo", "author"] as const;

const READ_FIRST =
  "Guarded: read the member first (get_member, or list_members) and pass the values you read as expectedSeat / expectedRole, " +
  "next to the seat / role you want. If the member changed since your read, nothing changes and the error " +
  "(expected_value_mismatch) names the current value of each failing guard in details: read again and decide again.";

const TOOL_LINES: readonly ToolLine[] = [
  { name: "list_pull_request_analytics", operationId: "listPullRequestAnalytics", omit: ["format"], lists: NAME_LISTS },
  {
    name: "summarize_pull_request_analytics",
    operationId: "getPullRequestAnalyticsSummary",
    omit: ["format"],
    lists: NAME_LISTS,
  },
  { name: "list_organizations", operationId: "listOrganizations" },
  { name: "list_members", operationId: "listOrganizationMembers", omit: ["format"] },
  { name: "get_member", operationId: "getOrganizationMember" },
  { name: "update_member", operationId: "updateOrganizationMember", advice: READ_FIRST },
  {
    name: "update_members",
    operationId: "updateOrganizationMembers",
    advice: `${READ_FIRST} Each change carries its own guards; one failing guard or rule changes nothing at all.`,
  },
  { name: "read_audit_log", operationId: "listOrganizationAuditLog", omit: ["format"] },
];

/**
 * Every tool's name, from the lines above: the tests and the MCP Inspector check take the tools
 * they expect from here, so adding a tool stays one line.
 */
export const MCP_TOOL_NAMES: readonly string[] = TOOL_LINES.map((line) => line.name);

/** A tool, resolved against the interfaces the Worker serves. */
export interface Tool {
  name: string;
  /** For people: the route's summary. */
  title: string;
  description: string;
  keyKind: KeyKind;
  /** The scope the route needs: a caller lists and runs the tools of its scopes (contract section 18). */
  scope: Scope;
  /** A GET route: the tool changes nothing (`readOnlyHint`), and it is the only kind read-only mode offers. */
  readOnly: boolean;
  api: ApiInterface;
  route: Route;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** Where each argument goes in the equivalent REST request. */
  pathNames: readonly string[];
  queryNames: readonly string[];
  omit: readonly string[];
  /** Query parameters whose argument may be an array of names, joined with commas (`ToolLine.lists`). */
  lists: readonly string[];
}

const shapeKeys = (schema: z.ZodType | undefined): string[] =>
  schema && "shape" in schema ? Object.keys((schema as z.ZodObject).shape) : [];

function resolve(interfaces: readonly ApiInterface[]): Tool[] {
  const document = documentOf(interfaces, "public") as unknown as OpenApiDocument;
  const operations = operationsById(document);
  return TOOL_LINES.map((line) => {
    const found = interfaces.flatMap((api) =>
      api.routes.filter((route) => route.operationId === line.operationId).map((route) => ({ api, route })),
    )[0];
    const operation = operations.get(line.operationId);
    if (!found || !operation) throw new Error(`tool ${line.name}: no public route ${line.operationId}`);
    const { api, route } = found;
    if (api.auth.kind !== "apiKey") throw new Error(`tool ${line.name}: ${line.operationId} is not a route of an API key`);
    if (!route.scope) throw new Error(`tool ${line.name}: ${line.operationId} declares no scope`);
    const omit = line.omit ?? [];
    return {
      name: line.name,
      title: route.summary,
      description: [`${route.summary}.`, route.description, line.advice].filter(Boolean).join(" "),
      keyKind: api.auth.keyKind,
      scope: route.scope,
      readOnly: route.method === "GET",
      api,
      route,
      inputSchema: withNameLists(toolInputSchema(operation, document, omit), line.lists ?? []),
      outputSchema: toolOutputSchema(operation, document),
      pathNames: shapeKeys(route.request?.params),
      queryNames: shapeKeys(route.request?.query).filter((name) => !omit.includes(name)),
      omit,
      lists: line.lists ?? [],
    };
  });
}

/** The REST string of a list parameter, or an array of its names (at most 20, none empty), for `ToolLine.lists`. */
function withNameLists(schema: JsonSchema, lists: readonly string[]): JsonSchema {
  const properties = { ...(schema.properties as Record<string, JsonSchema>) };
  for (const name of lists) {
    const property = properties[name];
    if (property === undefined) throw new Error(`list parameter ${name} is not a parameter of the tool`);
    const { description, ...text } = property;
    properties[name] = {
      anyOf: [
        text,
        { type: "array", items: { type: "string", minLength: 1, maxLength: 255 }, minItems: 1, maxItems: MAX_LIST_NAMES },
      ],
      description: `${String(description ?? "")} Also an array of names, e.g. ["api", "web"] (the same rules as the comma-separated string).`,
    };
  }
  return { ...schema, properties };
}

const resolved = new WeakMap<readonly ApiInterface[], Tool[]>();

/**
 * The tools a caller with these scopes may list and call (a key's: an analytics key holds
 * `analytics:read`, a members key `members:read` and, unless read-only, `members:write`; an OAuth
 * grant the scopes approved). Scopes and read-only mode are enforced here and only here: a tool
 * outside them is never registered, so it is neither listed nor callable (`tools/call` answers the
 * protocol's unknown-tool error), whatever the client asks. So a read-only key behaves exactly as
 * `/mcp/readonly` does.
 */
export function toolsFor(interfaces: readonly ApiInterface[], scopes: readonly Scope[], readOnlyMode: boolean): Tool[] {
  const tools = resolved.get(interfaces) ?? resolve(interfaces);
  resolved.set(interfaces, tools);
  return tools.filter((tool) => scopes.includes(tool.scope) && (tool.readOnly || !readOnlyMode));
}
