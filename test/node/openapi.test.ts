import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/openapi/document";

describe("OpenAPI document", () => {
  const document = openApiDocument();

  it("is a valid OpenAPI 3.1 document", async () => {
    // validate() dereferences in place; give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
    expect(document.openapi).toBe("3.1.0");
  });

  it("describes both public interfaces and the control plane", () => {
    const paths = Object.keys(document.paths ?? {});
    expect(paths).toContain("/api/analytics/v1/prs");
    expect(paths).toContain("/api/v1/organizations/{org}/members/{githubUserId}");
    expect(paths).toContain("/internal/v1/events");
    expect(document.paths?.["/api/analytics/v1/prs"]?.get?.operationId).toBe("listPullRequestAnalytics");
  });

  it("control-plane names carry GitHub's patterns, in paths and in events; the public paths keep theirs", () => {
    const login = "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$";
    const params = (path: string, method: "put" | "get") =>
      Object.fromEntries(
        ((document.paths?.[path]?.[method]?.parameters ?? []) as { name: string; schema: { pattern?: string } }[]).map((p) => [
          p.name,
          p.schema.pattern,
        ]),
      );
    expect(params("/internal/v1/organizations/{org}/repositories/{repo}", "put")).toEqual({
      org: login,
      repo: "^(?!\\.\\.?$)[A-Za-z0-9._-]{1,100}$",
    });
    expect(params("/internal/v1/organizations/{org}/members/{githubUserId}", "put")).toMatchObject({ org: login });
    expect(params("/api/v1/organizations/{org}/members/{githubUserId}", "get")).toMatchObject({ org: undefined });
    const review = document.components?.schemas?.ReviewEvent as { properties: Record<string, { pattern?: string }> };
    expect(review.properties.org?.pattern).toBe(login);
  });

  it("every event type requires its version, updatedAt, a date-time", () => {
    const schemas = (document.components?.schemas ?? {}) as Record<
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

  it("documents the contract's event types from the validating schema", () => {
    const schemas = document.components?.schemas ?? {};
    for (const id of ["PullRequestEvent", "ReviewEvent", "FindingEvent", "AiAuthorshipEvent", "MemberPatch", "AnalyticsPrRow"]) {
      expect(schemas).toHaveProperty(id);
    }
  });
});
