import { z } from "zod";
import { defineRoute, type RequestContext } from "../http/route";
import { documentOf } from "./documents";

const documentFor = (rc: RequestContext, which: "public" | "internal") => documentOf(rc.interfaces, which);

const OpenApiDocument = z
  .object({ openapi: z.literal("3.1.0") })
  .loose()
  .meta({ description: "An OpenAPI 3.1 document." });

const example = { openapi: "3.1.0", info: { title: "…", version: "1.0.0" }, paths: {} };

/** `GET /openapi.json`: the public interfaces, generated from their route definitions. */
export const publicDocumentRoute = defineRoute({
  method: "GET",
  path: "/openapi.json",
  operationId: "getOpenApiDocument",
  summary: "This document",
  responses: { 200: { description: "The OpenAPI 3.1 document of the public interfaces.", body: OpenApiDocument, example } },
  errors: [],
  handler: async (_args, rc) => documentFor(rc, "public"),
});

/** `GET /internal/v1/openapi.json` (admin token): the control plane and the webhooks. */
export const internalDocumentRoute = defineRoute({
  method: "GET",
  path: "/internal/v1/openapi.json",
  operationId: "getInternalOpenApiDocument",
  summary: "This document",
  responses: {
    200: { description: "The OpenAPI 3.1 document of the control plane and the webhooks.", body: OpenApiDocument, example },
  },
  errors: [],
  handler: async (_args, rc) => documentFor(rc, "internal"),
});
