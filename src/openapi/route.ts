import type { RouterType } from "itty-router";
import type { RequestContext } from "../http/request";
import { json } from "../http/respond";
import { openApiDocument } from "./document";

let cached: unknown;

/** `GET /openapi.json`: generated from the same zod schemas that validate requests. */
export function registerOpenApi(router: RouterType<Request, [RequestContext]>) {
  router.get("/openapi.json", () => {
    cached ??= openApiDocument();
    return json(cached);
  });
}
