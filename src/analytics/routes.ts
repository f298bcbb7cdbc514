import type { RouterType } from "itty-router";
import { authenticate } from "../auth/authenticate";
import { AppError } from "../http/errors";
import type { RequestContext } from "../http/request";

/** `GET /api/analytics/v1/prs` (contract section 3). */
export function registerAnalytics(router: RouterType<Request, [RequestContext]>) {
  router.get("/api/analytics/v1/prs", async (request, { env }) => {
    await authenticate(request, env, "analytics");
    throw new AppError("not_implemented", "The analytics export is not implemented yet.");
  });
}
