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
