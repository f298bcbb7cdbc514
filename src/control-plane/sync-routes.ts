import { z } from "zod";
import { atOrganization } from "../directory/resolve";
import { githubSync } from "../github/config";
import { routesFor } from "../http/route";
import { unwrap } from "../lib/durable-call";
import { AppError } from "../lib/errors";
import { GithubOrgName } from "../schemas/common";
import { SyncRun, SyncStatus } from "../schemas/sync";
import { startSync } from "../sync/start";

/** `GET`/`POST /internal/v1/organizations/{org}/sync` (contract section 17): an installation sync's progress and start. */

const adminRoute = routesFor("adminToken");

const OrgPath = z.object({ org: GithubOrgName });

const RUN_EXAMPLE = {
  id: 1,
  trigger: "installation",
  state: "running",
  startedAt: "2026-11-22T10:00:00.000Z",
  finishedAt: null,
  steps: {
    repositories: { state: "done", count: 12 },
    members: { state: "done", count: 40 },
    collaborators: { state: "running", count: 9 },
    pullRequests: { state: "pending", count: 0 },
  },
  lastError: null,
};

export const readSync = adminRoute({
  method: "GET",
  path: "/internal/v1/organizations/{org}/sync",
  operationId: "getOrganizationSync",
  summary: "The running and the last installation sync with GitHub: state, times, counts per step, last error",
  request: { params: OrgPath },
  responses: {
    200: {
      description: "The running sync and the last finished one (null when there is none).",
      body: SyncStatus,
      example: { running: RUN_EXAMPLE, last: null },
    },
  },
  errors: ["org_not_found"],
  handler: async ({ params }, { env }) => unwrap(await atOrganization(env, params.org, (stub, at) => stub.readSync(at.login))),
});

export const postSync = adminRoute({
  method: "POST",
  path: "/internal/v1/organizations/{org}/sync",
  operationId: "startOrganizationSync",
  summary: "Start an installation sync with GitHub (repositories, members, collaborators, pull request history)",
  description:
    "One sync runs at a time per organization. The sync is durable (a Cloudflare Workflow): it survives restarts, retries failing steps with backoff and waits out GitHub's rate limits; follow it with GET.",
  request: { params: OrgPath },
  responses: {
    202: { description: "Started; it runs in the background.", body: SyncRun, example: RUN_EXAMPLE },
  },
  errors: ["org_not_found", "sync_in_progress", "sync_off"],
  handler: async ({ params }, { env, correlationId }) => {
    const sync = githubSync(env);
    if (sync.kind !== "on") {
      // The organization first (404 for an unknown one, as with sync on); then: sync is off.
      unwrap(await atOrganization(env, params.org, (stub, at) => stub.readSync(at.login)));
      throw new AppError("sync_off", "Sync with GitHub's API is not configured for this service.");
    }
    const answer = await startSync(env, () =>
      atOrganization(env, params.org, (stub, at) => stub.beginSync(at.login, { kind: "api", key: correlationId })),
    );
    const begun = unwrap(answer);
    if (begun.kind === "not_installed")
      throw new AppError("org_not_found", "The organization cannot be resolved to an installation.");
    if (begun.kind === "in_progress") {
      throw new AppError("sync_in_progress", `Sync ${begun.run.id} of this organization is still running.`);
    }
    return begun.run;
  },
});
