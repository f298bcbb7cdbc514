import type { RouterType } from "itty-router";
import { authenticate } from "../auth/authenticate";
import { callDurable, type DurableResult, unwrap } from "../durable/call";
import type { AnalyticsAccess } from "../durable/organization";
import { organizationStub, orgKey } from "../durable/stubs";
import type { RequestContext } from "../http/request";
import { json } from "../http/respond";
import { listMergedPullRequests } from "../storage/analytics";
import { parseAnalyticsParams } from "./params";
import { toPage } from "./present";
import { resolveWindow } from "./window";

/**
 * `GET /api/analytics/v1/prs` (contract section 3). Checks run in the contract's order:
 * 401 key, 400 parameters, 404 organization, 403 access, then the page.
 */
export function registerAnalytics(router: RouterType<Request, [RequestContext]>) {
  router.get("/api/analytics/v1/prs", async (request, { env, url }) => {
    const user = await authenticate(request, env, "analytics");
    const now = Date.now();
    const params = parseAnalyticsParams(url.searchParams, now);
    const access = unwrap(
      await callDurable<DurableResult<AnalyticsAccess>>(
        () => organizationStub(env, params.org).analyticsAccess(user.githubUserId, params.repo),
        { idempotent: true },
      ),
    );
    const window = resolveWindow(params.start, params.end, access.installedAt, now);
    // Analytics may lag: reads go to the nearest replica (documented in the README).
    const rows = await listMergedPullRequests(env.DB.withSession("first-unconstrained"), {
      orgKey: orgKey(params.org),
      repoKey: params.repo?.toLowerCase() ?? null,
      accessibleRepoKeys: access.accessibleRepoKeys,
      start: window.start,
      end: window.end,
      after: params.cursor,
      limit: params.perPage + 1,
    });
    return json(toPage(params.org, rows, params.perPage));
  });
}
