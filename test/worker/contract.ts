import { type Schema, Validator } from "@cfworker/json-schema";
import { authDocumentation } from "../../src/http/authentication";
import { isCanonicalPath } from "../../src/http/request";
import { INTERFACES, internalDocument, publicDocument } from "../../src/interfaces";

/**
 * Checks every response an integration test receives against the generated OpenAPI documents:
 * the status is documented for the operation, the documented required headers are present, every
 * documented header that is present fits its schema, the Content-Type is documented, and the body
 * (JSON, or the text of a text/csv answer) validates against the document's JSON Schema (not the zod objects, so the generation
 * itself is under test). A response the documents do not describe fails the test that got it.
 */

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, { headers?: Record<string, Json>; content?: Record<string, { schema?: Json }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components?: Json & { headers?: Record<string, Json> };
}

const documents = [publicDocument(), internalDocument()] as unknown as Doc[];

const routes = documents.flatMap((doc) =>
  Object.entries(doc.paths).map(([template, item]) => ({
    doc,
    item,
    pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`),
  })),
);

const validators = new Map<Json, Validator>();
function validatorFor(doc: Doc, schema: Json): Validator {
  let v = validators.get(schema);
  if (!v) {
    // The schema's $refs point into the document's components: validate with them at hand.
    v = new Validator({ ...schema, components: doc.components } as Schema, "2020-12", false);
    validators.set(schema, v);
  }
  return v;
}

const resolveHeader = (doc: Doc, header: Json): Json => {
  const ref = header.$ref;
  if (typeof ref !== "string") return header;
  const name = ref.split("/").pop() ?? "";
  return doc.components?.headers?.[name] ?? {};
};

export class ContractViolation extends Error {}

/** Throws a ContractViolation describing how the response differs from the documents. */
export async function checkAgainstDocuments(request: Request, response: Response): Promise<void> {
  const url = new URL(request.url);
  // HEAD is answered wherever GET is, with the GET's status and headers and no body (contract
  // section 1): it is checked against the GET operation, and its body must be empty.
  const head = request.method === "HEAD";
  const method = head ? "get" : request.method.toLowerCase();
  const where = `${request.method} ${url.pathname} → ${response.status}`;
  const text = await response.clone().text();
  if (head && text !== "") throw new ContractViolation(`${where}: a HEAD answer has a body: ${text.slice(0, 200)}`);
  const canonical = isCanonicalPath(url.pathname);
  const matches = canonical ? routes.filter((r) => r.pattern.test(url.pathname)) : [];
  const match = matches.find((r) => r.item[method]);

  if (!match) {
    // Outside every documented operation only the routing answers exist: 404, or 405 on a known
    // path, or what an interface's authentication answers where it covers every path (the admin token).
    const expected = new Set([matches.length > 0 ? 405 : 404]);
    const guarded = INTERFACES.find(
      (api) => authDocumentation(api.auth).everyPath && url.pathname.startsWith(`${api.basePath}/`),
    );
    if (guarded && canonical) for (const status of [401, 404, 429]) expected.add(status);
    if (!expected.has(response.status)) {
      throw new ContractViolation(`${where}: an undocumented operation must answer ${[...expected].join(" or ")}`);
    }
    if (!head && !JSON.parse(text).error) throw new ContractViolation(`${where}: not an error envelope: ${text}`);
    return;
  }

  const { doc } = match;
  const operation = match.item[method] as Operation;
  const documented = operation.responses[String(response.status)];
  if (!documented) {
    throw new ContractViolation(
      `${where}: status not documented (documented: ${Object.keys(operation.responses).join(", ")}); body ${text.slice(0, 300)}`,
    );
  }
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const spec = resolveHeader(doc, header);
    const value = response.headers.get(name);
    if (value === null) {
      if (spec.required === true) throw new ContractViolation(`${where}: documented header ${name} is missing`);
      continue;
    }
    const schema = spec.schema as Json | undefined;
    if (!schema) continue;
    const instance = schema.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
    const result = validatorFor(doc, schema).validate(instance);
    if (!result.valid) throw new ContractViolation(`${where}: header ${name}: ${value} does not match its documented schema`);
  }
  const content = documented.content ?? {};
  if (head) return;
  if (Object.keys(content).length === 0) {
    if (text !== "") throw new ContractViolation(`${where}: documented without a body, but got ${text.slice(0, 200)}`);
    return;
  }
  const type = (response.headers.get("Content-Type") ?? "").split(";")[0]?.trim() ?? "";
  const media = content[type];
  if (!media) throw new ContractViolation(`${where}: Content-Type ${type} not documented (${Object.keys(content).join(", ")})`);
  if (!media.schema) return;
  // JSON bodies are validated as parsed JSON; text bodies (text/csv) as one string against their
  // documented string schema (its pattern and length).
  const instance = type === "application/json" ? JSON.parse(text) : type.startsWith("text/") ? text : undefined;
  if (instance === undefined) return;
  const result = validatorFor(doc, media.schema).validate(instance);
  if (!result.valid) {
    const errors = result.errors.map((e) => `${e.instanceLocation}: ${e.error}`).slice(0, 8);
    throw new ContractViolation(
      `${where}: body does not match the documented schema:\n  ${errors.join("\n  ")}\n  body: ${text.slice(0, 500)}`,
    );
  }
}
