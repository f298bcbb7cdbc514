/**
 * A tool's input and output JSON Schemas, taken from the operation it mirrors in the public OpenAPI
 * document: the same schemas (and the same overrides, e.g. `perPage` as an integer) that validate
 * the REST route, never a second copy. MCP clients want self-contained schemas of one object, so
 * `$ref`s are inlined, OpenAPI's `example` is dropped, and parameters and body become one object.
 */

export type JsonSchema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

/** The parts of an OpenAPI operation a tool is made of. */
export interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Every operation of the document by its operationId. */
export function operationsById(document: OpenApiDocument): Map<string, Operation> {
  const byId = new Map<string, Operation>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) byId.set(operation.operationId, operation);
  }
  return byId;
}

/** `$ref`s to the document's components replaced by the component itself (siblings such as a description win). */
function inline(node: unknown, document: OpenApiDocument, depth = 0): unknown {
  if (depth > 32) throw new Error("schema nesting too deep to inline (a recursive component?)");
  if (Array.isArray(node)) return node.map((item) => inline(item, document, depth + 1));
  if (node === null || typeof node !== "object") return node;
  const { $ref, example: _dropped, ...rest } = node as JsonSchema;
  const out: JsonSchema = {};
  if (typeof $ref === "string") {
    const name = $ref.replace("#/components/schemas/", "");
    const target = document.components?.schemas?.[name];
    if (target === undefined) throw new Error(`unresolvable $ref ${$ref}`);
    Object.assign(out, inline(target, document, depth + 1));
  }
  for (const [key, value] of Object.entries(rest)) out[key] = inline(value, document, depth + 1);
  return out;
}

/**
 * A body schema as one object's properties: an object as it is; alternatives (`oneOf`/`anyOf` of
 * objects, e.g. the PATCH body's seat and role pairs) as the union of their properties, required
 * only where every alternative requires it. The route's own schema still decides (a 400 says why).
 */
function bodyProperties(schema: JsonSchema): { properties: JsonSchema; required: string[]; description?: string } {
  const branches = (schema.oneOf ?? schema.anyOf ?? [schema]) as JsonSchema[];
  const properties: JsonSchema = {};
  let required: string[] | null = null;
  for (const branch of branches) {
    for (const [name, property] of Object.entries((branch.properties ?? {}) as JsonSchema)) {
      // `false` marks a field an alternative forbids; another alternative defines it.
      if (property !== false && !(name in properties)) properties[name] = property;
    }
    const mine = (branch.required ?? []) as string[];
    required = required === null ? mine : required.filter((name) => mine.includes(name));
  }
  return {
    properties,
    required: required ?? [],
    ...(typeof schema.description === "string" ? { description: schema.description } : {}),
  };
}

/**
 * The tool's arguments: path and query parameters (minus `omit`) and the JSON body's fields, as one
 * object. A name in two places would make the split ambiguous, so it is refused when tools are built.
 */
export function toolInputSchema(operation: Operation, document: OpenApiDocument, omit: readonly string[]): JsonSchema {
  const properties: JsonSchema = {};
  const required: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    if ((parameter.in !== "path" && parameter.in !== "query") || omit.includes(parameter.name)) continue;
    const schema = inline(parameter.schema, document) as JsonSchema;
    properties[parameter.name] = parameter.description ? { ...schema, description: parameter.description } : schema;
    if (parameter.required) required.push(parameter.name);
  }
  const bodySchema = operation.requestBody?.content["application/json"]?.schema;
  let description: string | undefined;
  if (bodySchema) {
    const body = bodyProperties(inline(bodySchema, document) as JsonSchema);
    for (const [name, schema] of Object.entries(body.properties)) {
      if (name in properties) throw new Error(`${operation.operationId}: ${name} is both a parameter and a body field`);
      properties[name] = schema;
    }
    required.push(...body.required);
    description = body.description;
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    // Unknown body fields are refused by the route (400); unknown query parameters are ignored, as over HTTP.
    ...(bodySchema ? { additionalProperties: false } : {}),
    ...(description ? { description } : {}),
  };
}

/** The JSON body of the operation's success, which a tool's `structuredContent` is. */
export function toolOutputSchema(operation: Operation, document: OpenApiDocument): JsonSchema {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith("2"))?.[1];
  const schema = success?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`${operation.operationId} answers no JSON body`);
  return inline(schema, document) as JsonSchema;
}
