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

  it("documents the contract's event types from the validating schema", () => {
    const schemas = document.components?.schemas ?? {};
    for (const id of ["PullRequestEvent", "ReviewEvent", "FindingEvent", "AiAuthorshipEvent", "MemberPatch", "AnalyticsPrRow"]) {
      expect(schemas).toHaveProperty(id);
    }
  });
});
