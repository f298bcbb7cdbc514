import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { internalDocument, publicDocument } from "../../src/interfaces";
import { MAX_INSTANT_MS } from "../../src/lib/time";

describe.each([
  ["public", publicDocument],
  ["internal", internalDocument],
])("the %s OpenAPI document", (_name, build) => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const document = build();
    // validate() dereferences in place; give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
    expect(document.openapi).toBe("3.1.0");
  });
});

describe("what the documents say", () => {
  const pub = publicDocument();
  const internal = internalDocument();
  type Params = {
    name: string;
    schema: { pattern?: string; type?: string; minimum?: number; maximum?: number; default?: number };
  }[];
  const params = (doc: typeof pub, path: string, method: "put" | "get") =>
    Object.fromEntries(((doc.paths?.[path]?.[method]?.parameters ?? []) as Params).map((p) => [p.name, p.schema]));

  it("the public document lists the public operations by their contract ids, and nothing internal", () => {
    expect(pub.paths?.["/api/analytics/v1/prs"]?.get?.operationId).toBe("listPullRequestAnalytics");
    expect(pub.paths?.["/api/v1/organizations/{org}/members/{githubUserId}"]?.get?.operationId).toBe("getOrganizationMember");
    expect(pub.paths?.["/api/v1/organizations/{org}/members/{githubUserId}"]?.patch?.operationId).toBe(
      "updateOrganizationMember",
    );
    expect(Object.keys(pub.paths ?? {}).filter((p) => p.startsWith("/internal"))).toEqual([]);
    expect(Object.keys(pub.components?.schemas ?? {})).not.toContain("EventBatch");
  });

  it("perPage is an integer from 1 to 100 with default 100", () => {
    expect(params(pub, "/api/analytics/v1/prs", "get").perPage).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 100,
    });
  });

  it("control-plane names carry GitHub's patterns, in paths and in events; the public paths keep theirs", () => {
    const login = "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$";
    const repo = params(internal, "/internal/v1/organizations/{org}/repositories/{repo}", "put");
    expect(repo.org?.pattern).toBe(login);
    expect(repo.repo?.pattern).toBe("^(?!\\.\\.?$)[A-Za-z0-9._-]{1,100}$");
    expect(params(internal, "/internal/v1/organizations/{org}/members/{githubUserId}", "put").org?.pattern).toBe(login);
    expect(params(pub, "/api/v1/organizations/{org}/members/{githubUserId}", "get").org?.pattern).toBeUndefined();
    const review = internal.components?.schemas?.ReviewEvent as { properties: Record<string, { pattern?: string }> };
    expect(review.properties.org?.pattern).toBe(login);
  });

  it("every event type requires its version, updatedAt, a date-time", () => {
    const schemas = (internal.components?.schemas ?? {}) as Record<
      string,
      { required?: string[]; properties?: Record<string, { format?: string; description?: string }> }
    >;
    for (const id of ["PullRequestEvent", "ReviewEvent", "FindingEvent", "AiAuthorshipEvent"]) {
      expect(schemas[id]?.required).toContain("updatedAt");
      expect(schemas[id]?.properties?.updatedAt).toMatchObject({
        format: "date-time",
        description: expect.stringContaining("greatest updatedAt wins"),
      });
    }
  });

  it("each error status lists its closed set of codes; 405 carries Allow, 401 WWW-Authenticate, 429 Retry-After", () => {
    const patch = pub.paths?.["/api/v1/organizations/{org}/members/{githubUserId}"]?.patch as unknown as {
      responses: Record<string, { headers: Record<string, unknown>; content: Record<string, { schema: unknown }> }>;
    };
    type ErrorSchema = { properties: { error: { properties: { code: { enum: string[] } } } } };
    const codes = (status: string) => {
      const schema = patch.responses[status]?.content["application/json"]?.schema as ErrorSchema | undefined;
      return schema?.properties.error.properties.code.enum;
    };
    expect(codes("409")).toEqual(["expected_value_mismatch", "no_seat_available", "last_admin"]);
    // With the key's own 403s (contract section 18): outside its networks, and a read-only key on a write.
    expect(codes("403")).toEqual([
      "installation_blocked",
      "org_access_denied",
      "not_org_admin",
      "subscription_required",
      "ip_not_allowed",
      "insufficient_scope",
    ]);
    expect(Object.keys(patch.responses)).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "404", "405", "409", "413", "415", "422", "429", "500", "503"]),
    );
    expect(patch.responses["405"]?.headers).toHaveProperty("Allow");
    expect(patch.responses["401"]?.headers).toHaveProperty("WWW-Authenticate");
    expect(patch.responses["429"]?.headers).toHaveProperty("Retry-After");
    expect(patch.responses["200"]?.headers).toHaveProperty("X-RateLimit-Remaining");
    const revoke = internal.paths?.["/internal/v1/users/{githubUserId}/api-keys/{kind}"]?.delete as unknown as {
      responses: object;
    };
    expect(Object.keys(revoke.responses)).not.toContain("413");
    expect(Object.keys(revoke.responses)).not.toContain("415");
  });

  it("the analytics 200 is JSON or text/csv, with Link and X-Next-Cursor documented but not required (the last page has neither)", () => {
    const get = pub.paths?.["/api/analytics/v1/prs"]?.get as unknown as {
      responses: Record<string, { headers: Record<string, { required?: boolean }>; content: Record<string, unknown> }>;
    };
    const ok = get.responses["200"];
    expect(Object.keys(ok?.content ?? {})).toEqual(["application/json", "text/csv"]);
    expect(ok?.headers.Link?.required).toBe(false);
    expect(ok?.headers["X-Next-Cursor"]?.required).toBe(false);
    expect(params(pub, "/api/analytics/v1/prs", "get").format).toMatchObject({ enum: ["json", "csv"], default: "json" });
  });

  it("the webhook endpoint is internal, signed (no bearer challenge on its 401), answers 200 pong or 202, and 429 only to a flood of bad signatures", () => {
    expect(Object.keys(pub.paths ?? {})).not.toContain("/webhooks/github");
    const post = internal.paths?.["/webhooks/github"]?.post as unknown as {
      security: object[];
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(post.security).toEqual([{ githubSignature: [] }]);
    expect(Object.keys(post.responses)).toEqual(
      expect.arrayContaining(["200", "202", "400", "401", "404", "413", "415", "429", "500", "503"]),
    );
    // No quota: 429 is the per-address limit on failed authentications.
    expect(post.responses["429"]?.headers).toHaveProperty("Retry-After");
    expect(post.responses["429"]?.headers).not.toHaveProperty("X-RateLimit-Limit");
    expect(post.responses["401"]?.headers).not.toHaveProperty("WWW-Authenticate");
  });
});

type Node = Record<string, unknown>;
type AnyDoc = { paths?: Record<string, Record<string, Node>>; components?: Record<string, Record<string, Node>> };
const operations = (doc: AnyDoc) =>
  Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op: op as Node })),
  );
/** Every schema node under `node`, with where it sits, following $refs into the components once. */
function* schemaNodes(doc: AnyDoc, node: unknown, where: string, seen = new Set<unknown>()): Generator<[string, Node]> {
  if (!node || typeof node !== "object" || seen.has(node)) return;
  seen.add(node);
  const schema = node as Node;
  if (typeof schema.$ref === "string") {
    const [, , kind = "", name = ""] = schema.$ref.split("/");
    yield* schemaNodes(doc, doc.components?.[kind]?.[name], schema.$ref, seen);
    return;
  }
  yield [where, schema];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "example" || key === "examples") continue;
    if (Array.isArray(value))
      for (const [i, item] of value.entries()) yield* schemaNodes(doc, item, `${where}.${key}.${i}`, seen);
    else yield* schemaNodes(doc, value, `${where}.${key}`, seen);
  }
}

describe("issue 22: what the documents must also say", () => {
  const docs = [
    ["public", publicDocument() as unknown as AnyDoc],
    ["internal", internalDocument() as unknown as AnyDoc],
  ] as const;

  it.each(docs)("%s: every 429 names the per-address limit on failed authentications, which hits valid keys too", (_n, doc) => {
    let seen = 0;
    for (const { where, op } of operations(doc)) {
      const tooMany = (op.responses as Record<string, Node>)["429"];
      if (!tooMany) continue;
      seen += 1;
      expect(tooMany.description, where).toMatch(/client address/);
      expect(tooMany.description, where).toMatch(/failed authentications/);
      expect(tooMany.description, where).toMatch(/valid (keys|ones) too/);
      // Public routes: no quota headers on this 429; the internal ones have no quota at all.
      expect(tooMany.description, where).toMatch(/no quota/);
    }
    if (_n === "public") expect(seen).toBeGreaterThan(0);
  });

  // The one signed kind: the summary's medians are differences of two instants (contract section 12
  // keeps negative ones), bounded by the span of instants the service stores.
  it.each(docs)("%s: every integer a response carries has a minimum of 0 or 1 (a duration: -MAX_INSTANT_MS)", (_n, doc) => {
    for (const { where, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Node>)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, Node>)) {
          for (const [at, schema] of schemaNodes(doc, media.schema, `${where} ${status}`)) {
            const types = ([] as unknown[]).concat(schema.type);
            if (types.includes("integer")) expect([0, 1, -MAX_INSTANT_MS], at).toContain(schema.minimum);
          }
        }
      }
    }
  });

  it.each(docs)("%s: every header component is used", (_n, doc) => {
    const text = JSON.stringify(doc.paths);
    for (const name of Object.keys(doc.components?.headers ?? {})) {
      expect(text.includes(`"#/components/headers/${name}"`), name).toBe(true);
    }
  });

  it("the analytics dates carry section 3's grammar, the 1970 floor, and the rule for blank values", () => {
    const list = publicDocument().paths?.["/api/analytics/v1/prs"]?.get as unknown as {
      description: string;
      parameters: { name: string; description?: string; schema: { pattern?: string; description?: string } }[];
    };
    const param = (name: string) => list.parameters.find((p) => p.name === name);
    for (const name of ["startDate", "endDate"]) {
      const pattern = new RegExp(param(name)?.schema.pattern ?? "^$");
      for (const ok of ["2026-09-01", "2026-09-01T10:00:00Z", "2026-09-01T10:00:00.123456+02:00", "2026-09-01t10:00:00z"]) {
        expect(pattern.test(ok), `${name} ${ok}`).toBe(true);
      }
      for (const bad of ["2026-09-01T10:00:00", "2026-9-1", "yesterday", "2026-09-01 10:00:00Z", "1e9"]) {
        expect(pattern.test(bad), `${name} ${bad}`).toBe(false);
      }
      expect(JSON.stringify(param(name)), name).toContain("1970");
    }
    expect(list.description).toMatch(/[Bb]lank optional values are ignored/);
  });

  it("every cursor, in and out, has a pattern that the cursors the service issues match", () => {
    const pub = publicDocument() as unknown as AnyDoc;
    const cursors: [string, string, string][] = [
      ["/api/analytics/v1/prs", "AnalyticsPrPage", "2026-11-20T16:44:17.054Z|137"],
      ["/api/v1/organizations", "OrganizationPage", "bzphY21l"],
      ["/api/v1/organizations/{org}/members", "MemberPage", "bToxMDAyOm1heC1tZW1iZXI"],
      ["/api/v1/organizations/{org}/audit-log", "AuditPage", "YTo0Mg"],
    ];
    for (const [path, page, issued] of cursors) {
      const param = ((pub.paths?.[path]?.get?.parameters ?? []) as { name: string; schema: { pattern?: string } }[]).find(
        (p) => p.name === "cursor",
      );
      expect(param?.schema.pattern, path).toBeTypeOf("string");
      expect(new RegExp(param?.schema.pattern ?? "").test(issued), path).toBe(true);
      const properties = (pub.components?.schemas?.[page]?.properties ?? {}) as Record<
        string,
        { anyOf?: Node[]; pattern?: string }
      >;
      const next = properties.nextCursor;
      const out = String(next?.anyOf?.find((s) => s.type === "string")?.pattern ?? next?.pattern);
      expect(out, page).not.toBe("undefined");
      expect(new RegExp(out).test(issued), page).toBe(true);
    }
  });

  it("the webhook declares X-GitHub-Event and X-GitHub-Delivery as required header parameters", () => {
    const post = internalDocument().paths?.["/webhooks/github"]?.post as unknown as {
      parameters: { name: string; in: string; required?: boolean }[];
    };
    const headers = post.parameters.filter((p) => p.in === "header");
    expect(headers.map((p) => [p.name, p.required])).toEqual([
      ["X-GitHub-Event", true],
      ["X-GitHub-Delivery", true],
    ]);
  });

  it("control-plane date-times state the 1970 floor; the key expiry's example lies in the future", () => {
    const internal = internalDocument() as unknown as AnyDoc;
    const installedAt = ((internal.components?.schemas?.OrganizationInput?.properties ?? {}) as Record<string, Node>).installedAt;
    expect(JSON.stringify(installedAt)).toContain("1970");
    const keyInput = internal.components?.schemas?.ApiKeyCreateInput as { properties: Record<string, Node> };
    const examples = [...schemaNodes(internal, keyInput.properties.expiresAt, "expiresAt")].flatMap(([, s]) =>
      [s.example, ...((s.examples as unknown[]) ?? [])].filter((e): e is string => typeof e === "string"),
    );
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) expect(Date.parse(example), example).toBeGreaterThan(Date.parse("2030-01-01T00:00:00Z"));
  });

  it("links lead from the member list to the member read, and from the read to the guarded PATCH", () => {
    const pub = publicDocument() as unknown as AnyDoc;
    const ok = (path: string, method: string) => ((pub.paths?.[path]?.[method]?.responses ?? {}) as Record<string, Node>)["200"];
    const listLinks = ok("/api/v1/organizations/{org}/members", "get")?.links as Record<string, Node>;
    const readLinks = ok("/api/v1/organizations/{org}/members/{githubUserId}", "get")?.links as Record<string, Node>;
    expect(Object.values(listLinks ?? {})).toContainEqual(
      expect.objectContaining({
        operationId: "getOrganizationMember",
        parameters: { org: "$request.path.org", githubUserId: "$response.body#/data/0/githubUserId" },
      }),
    );
    expect(Object.values(readLinks ?? {})).toContainEqual(
      expect.objectContaining({
        operationId: "updateOrganizationMember",
        parameters: { org: "$request.path.org", githubUserId: "$response.body#/githubUserId" },
        requestBody: expect.objectContaining({ expectedSeat: "$response.body#/seat" }),
      }),
    );
  });
});
