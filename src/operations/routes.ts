import { z } from "zod";
import { everyShardAnswers } from "../directory/shards";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, defineRoute } from "../http/route";
import { inStore } from "../lib/errors";
import { publicDocumentRoute } from "../openapi/routes";

const Status = z.object({ status: z.literal("ok") }).meta({ id: "HealthStatus" });

const liveness = defineRoute({
  method: "GET",
  path: "/healthz",
  operationId: "liveness",
  summary: "Alive (touches no storage)",
  responses: { 200: { description: "The Worker runs.", body: Status, example: { status: "ok" } } },
  errors: [],
  handler: async () => ({ status: "ok" }),
});

const readiness = defineRoute({
  method: "GET",
  path: "/readyz",
  operationId: "readiness",
  summary: "Ready: every D1 database (the main one and each analytics shard) answers SELECT 1",
  responses: { 200: { description: "Every D1 database answered.", body: Status, example: { status: "ok" } } },
  errors: ["unavailable"],
  handler: async (_args, { env }) => {
    await inStore("D1", () => everyShardAnswers(env));
    return { status: "ok" };
  },
});

/** Liveness, readiness and the public document; no key, never rate limited. */
export const operationsInterface: ApiInterface<"none"> = {
  name: "operations",
  description: "Health, readiness and this document. No key needed.",
  basePath: "/",
  document: "public",
  envelope: codedErrorEnvelope,
  auth: { kind: "none" },
  errors: [],
  routes: [liveness, readiness, publicDocumentRoute],
};
