import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { internalDocument, publicDocument } from "../../src/interfaces";

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
    expect(codes("403")).toEqual(["installation_blocked", "org_access_denied", "not_org_admin", "subscription_required"]);
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
