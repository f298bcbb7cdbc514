import type { RouterType } from "itty-router";
import { lookupApiKey, readAlongsideVerdict } from "../auth/authenticate";
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
 * `GET /api/analytics/v1/prs` (contract section 3). Answers in the contract's order: 401 key,
 * 400 parameters, 404 organization, 403 access, then the page. The access check runs alongside
 * the key verdict (see `readAlongsideVerdict`).
 */
export function registerAnalytics(router: RouterType<Request, [RequestContext]>) {
  router.get("/api/analytics/v1/prs", async (request, { env, url }) => {
    const known = await lookupApiKey(request, env, "analytics");
    const now = Date.now();
    const { input: query, value: access } = await readAlongsideVerdict(
      env,
      known,
      () => parseAnalyticsParams(url.searchParams, now),
      (q) =>
        callDurable<DurableResult<AnalyticsAccess>>(
          () => organizationStub(env, q.org).analyticsAccess(known.record.userId, q.repo),
          {
            idempotent: true,
          },
        ),
    );
    const allowed = unwrap(access);

    const window = resolveWindow(query.start, query.end, allowed.installedAt, now);
    // Analytics may lag: reads go to the nearest replica (documented in the README).
    const { rows, rowsRead } = await listMergedPullRequests(env.DB.withSession("first-unconstrained"), {
      orgKey: orgKey(query.org),
      repoKey: query.repo?.toLowerCase() ?? null,
      accessibleRepoKeys: allowed.accessibleRepoKeys,
      start: window.start,
      end: window.end,
      after: query.cursor,
      limit: query.perPage + 1,
      now,
    });
    // Benchmarks only (`--var DEBUG_ROWS_READ:true`): how many rows D1 read for the page.
    const debug = env.DEBUG_ROWS_READ === "true" ? { "X-Debug-Rows-Read": String(rowsRead) } : undefined;
    return json(toPage(query.org, rows, query.perPage), 200, debug);
  });
}
