import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { dereference, type Schema, type SchemaDraft, validate } from "@cfworker/json-schema";

/**
 * Every answer of the fake GitHub is checked against GitHub's official REST description
 * (`@octokit/openapi`, api.github.com), so the fake cannot drift from GitHub's real shapes.
 *
 * - The operation is found by method and path template; a path GitHub does not have is a drift.
 * - A status the operation documents: the body must validate against that status's schema.
 * - A status it does not document: only what GitHub may answer on any endpoint (401; 403 and 429
 *   for rate limits; 404 for what the caller cannot see, which the description leaves out of e.g.
 *   `GET /orgs/{org}/members` though GitHub answers it; 5xx), whose body is GitHub's `basic-error`.
 *   Anything else is a drift.
 *
 * The description is OpenAPI 3.0 (`nullable`), validated as JSON Schema draft 4 (the draft 3.0's
 * schema objects are based on) after turning `nullable: true` into `anyOf [null, …]`.
 */

type Json = { [key: string]: unknown };
interface Response {
  $ref?: string;
  content?: { "application/json"?: { schema?: Json } };
}
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, Json>; responses: Record<string, Response> };
}

const DRAFT: SchemaDraft = "4";
const ANY_ENDPOINT = new Set([401, 403, 404, 429, 500, 502, 503, 504]);

export class OpenApiDrift extends Error {
  override readonly name = "OpenApiDrift";
}

let loaded: { doc: Doc; lookup: ReturnType<typeof dereference>; templates: { template: string; pattern: RegExp }[] } | undefined;

function load() {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve("@octokit/openapi/package.json")), "generated", "api.github.com.json");
  const doc = JSON.parse(readFileSync(file, "utf8")) as Doc;
  const schemas = Object.fromEntries(Object.entries(doc.components.schemas).map(([name, s]) => [name, fromOpenApi(s)]));
  // One index of every component, built once, under the pointers GitHub's $refs use; each response
  // schema is indexed into it when first used.
  const lookup: ReturnType<typeof dereference> = Object.create(null);
  for (const [name, schema] of Object.entries(schemas)) {
    dereference(schema as Schema, lookup, undefined, `/components/schemas/${name}`);
  }
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  loaded = { doc, lookup, templates };
  return loaded;
}

/** OpenAPI 3.0's `nullable` to JSON Schema; every other keyword is JSON Schema already. */
function fromOpenApi(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromOpenApi);
  if (value === null || typeof value !== "object") return value;
  const { nullable, example: _example, discriminator: _discriminator, ...rest } = value as Json;
  const converted = Object.fromEntries(
    Object.entries(rest).map(([k, v]) => [k, k === "properties" ? mapValues(v) : fromOpenApi(v)]),
  );
  return nullable === true ? { anyOf: [{ type: "null" }, converted] } : converted;
}
const mapValues = (v: unknown) =>
  v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, s]) => [k, fromOpenApi(s)])) : v;

/** The path template GitHub documents for a concrete path, or undefined. Literal segments win. */
export function templateOf(method: string, path: string): string | undefined {
  const { doc, templates } = load();
  const candidates = templates.filter((t) => t.pattern.test(path) && doc.paths[t.template]?.[method.toLowerCase()]);
  // `/repos/{owner}/{repo}/pulls/{pull_number}` must not lose to a template with more parameters.
  candidates.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  return candidates[0]?.template;
}

const compiled = new Map<Json, Schema>();

/** Throws an OpenApiDrift unless GitHub's description allows this answer. */
export function checkResponse(method: string, path: string, status: number, body: unknown): void {
  const { doc, lookup } = load();
  const where = `${method} ${path} → ${status}`;
  const template = templateOf(method, path);
  if (!template) throw new OpenApiDrift(`${where}: GitHub documents no such operation`);
  const operation = doc.paths[template]?.[method.toLowerCase()];
  let response = operation?.responses[String(status)];
  if (!response) {
    if (!ANY_ENDPOINT.has(status)) throw new OpenApiDrift(`${where}: status not documented for ${method} ${template}`);
    response = { content: { "application/json": { schema: { $ref: "#/components/schemas/basic-error" } } } };
  }
  if (response.$ref) response = doc.components.responses[response.$ref.split("/").pop() ?? ""] ?? {};
  const raw = response.content?.["application/json"]?.schema;
  if (!raw) {
    if (body !== undefined && body !== "") throw new OpenApiDrift(`${where}: GitHub documents no body for it`);
    return;
  }
  let schema = compiled.get(raw);
  if (!schema) {
    schema = fromOpenApi(raw) as Schema;
    dereference(schema, lookup, undefined, `/responses/${compiled.size}`);
    compiled.set(raw, schema);
  }
  // Validate what goes on the wire (undefined fields dropped, dates as strings), not the object.
  const result = validate(JSON.parse(JSON.stringify(body)), schema, DRAFT, lookup, false);
  if (!result.valid) {
    const errors = result.errors
      .filter((e) => e.keyword !== "properties" && e.keyword !== "items" && e.keyword !== "allOf" && e.keyword !== "$ref")
      .slice(0, 8)
      .map((e) => `${e.instanceLocation}: ${e.error}`);
    throw new OpenApiDrift(`${where} (${template}) does not match GitHub's description:\n  ${errors.join("\n  ")}`);
  }
}
