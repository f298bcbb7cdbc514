import { type IRequest, Router } from "itty-router";
import { registerAnalytics } from "./analytics/routes";
import { requireAdmin } from "./control-plane/admin-auth";
import { registerControlPlane } from "./control-plane/routes";
import { registerHealth } from "./http/health";
import { dispatch } from "./http/pipeline";
import type { RequestContext } from "./http/request";
import { registerMembers } from "./members/routes";
import { registerOpenApi } from "./openapi/route";

export { OrganizationObject } from "./durable/organization";
export { UserObject } from "./durable/user";

const router = Router<IRequest, [RequestContext]>({
  before: [
    async (request, { env, url }) => {
      if (url.pathname === "/internal" || url.pathname.startsWith("/internal/")) await requireAdmin(request, env);
    },
  ],
});
registerHealth(router);
registerOpenApi(router);
registerAnalytics(router);
registerMembers(router);
registerControlPlane(router);

export default {
  fetch: (request, env, ctx) => dispatch(router, request, env, ctx),
} satisfies ExportedHandler<Env>;
