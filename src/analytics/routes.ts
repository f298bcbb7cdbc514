import type { RouterType } from "itty-router";
import { lookupApiKey, verifyApiKey } from "../auth/authenticate";
import { callDurable, type DurableResult, unwrap } from "../durable/call";
import type { AnalyticsAccess } from "../durable/organization";
import { organizationStub, orgKey } from "../durable/stubs";
import type { RequestContext } from "../http/request";
import { json } from "../http/respond";
import { listMergedPullRequests } from "../storage/analytics";
import { type AnalyticsParams, parseAnalyticsParams } from "./params";
import { toPage } from "./present";
import { resolveWindow } from "./window";

/**
 * `GET /api/analytics/v1/prs` (contract section 3). Answers in the contract's order: 401 key,
 * 400 parameters, 404 organization, 403 access, then the page.
 *
 * Once KV has shown the key is real, the key verdict (the owner's Durable Object) and the access
 * check (the organization's) run side by side; their answers are still judged in that order,
 * so an access answer is never revealed to a caller whose key fails.
 */
export function registerAnalytics(router: RouterType<Request, [RequestContext]>) {
  router.get("/api/analytics/v1/prs", async (request, { env, url }) => {
    const known = await lookupApiKey(request, env, "analytics");
    const now = Date.now();
    let params: AnalyticsParams | undefined;
    let paramsError: unknown;
    try {
      params = parseAnalyticsParams(url.searchParams, now);
    } catch (error) {
      paramsError = error;
    }
    const valid = params;
    const [verdict, access] = await Promise.allSettled([
      verifyApiKey(env, known),
      valid
        ? callDurable<DurableResult<AnalyticsAccess>>(
            () => organizationStub(env, valid.org).analyticsAccess(known.record.userId, valid.repo),
            {
              idempotent: true,
            },
          )
        : Promise.resolve(null),
    ]);
    if (verdict.status === "rejected") throw verdict.reason;
    if (!valid) throw paramsError;
    if (access.status === "rejected") throw access.reason;
    const allowed = unwrap(access.value as DurableResult<AnalyticsAccess>);

    const window = resolveWindow(valid.start, valid.end, allowed.installedAt, now);
    // Analytics may lag: reads go to the nearest replica (documented in the README).
    const rows = await listMergedPullRequests(env.DB.withSession("first-unconstrained"), {
      orgKey: orgKey(valid.org),
      repoKey: valid.repo?.toLowerCase() ?? null,
      accessibleRepoKeys: allowed.accessibleRepoKeys,
      start: window.start,
      end: window.end,
      after: valid.cursor,
      limit: valid.perPage + 1,
    });
    return json(toPage(valid.org, rows, valid.perPage));
  });
}
