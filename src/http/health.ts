import type { RouterType } from "itty-router";
import { AppError } from "./errors";
import type { RequestContext } from "./request";
import { json } from "./respond";

/** Liveness and readiness; neither needs a key. */
export function registerHealth(router: RouterType<Request, [RequestContext]>) {
  router
    .get("/healthz", () => json({ status: "ok" }))
    .get("/readyz", async (_request, { env }) => {
      try {
        await env.DB.prepare("SELECT 1").first();
      } catch (error) {
        throw new AppError("unavailable", "The analytics database is not reachable.", { cause: error });
      }
      return json({ status: "ok" });
    });
}
