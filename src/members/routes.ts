import type { RouterType } from "itty-router";
import { z } from "zod";
import { authenticate, lookupApiKey, readAlongsideVerdict } from "../auth/authenticate";
import { callDurable, type DurableResult, unwrap } from "../durable/call";
import { organizationStub } from "../durable/stubs";
import { readJsonObject } from "../http/body";
import { pathParams, type RequestContext } from "../http/request";
import { json } from "../http/respond";
import { parseOrThrow } from "../http/validation";
import { GithubUserId, OrgLogin } from "../schemas/common";
import { type Member, MemberPatch, type MemberUpdateResult } from "../schemas/member";

const MEMBER_PATH = "/api/v1/organizations/:org/members/:githubUserId";
const MemberPath = z.object({ org: OrgLogin, githubUserId: GithubUserId });

/** A PATCH body is a handful of fields. */
export const MEMBER_PATCH_MAX_BODY = 8 * 1024;

/**
 * `GET` and `PATCH /api/v1/organizations/{org}/members/{githubUserId}` (contract section 4).
 * Both read and write the organization's Durable Object, never a replica: read, then PATCH with
 * what you read.
 */
export function registerMembers(router: RouterType<Request & { params: Record<string, string> }, [RequestContext]>) {
  router
    .get(MEMBER_PATH, async (request, { env }) => {
      const known = await lookupApiKey(request, env, "members");
      const { value } = await readAlongsideVerdict(
        env,
        known,
        () => pathParams(MemberPath, request.params),
        (path) =>
          callDurable<DurableResult<Member>>(
            () => organizationStub(env, path.org).readMember(known.record.userId, path.githubUserId),
            {
              idempotent: true,
            },
          ),
      );
      return json(unwrap(value));
    })
    .patch(MEMBER_PATH, async (request, { env }) => {
      // A write waits for the key verdict: nothing changes for a revoked key.
      const caller = await authenticate(request, env, "members");
      const { org, githubUserId } = pathParams(MemberPath, request.params);
      const patch = parseOrThrow(MemberPatch, await readJsonObject(request, MEMBER_PATCH_MAX_BODY), "Invalid request body.");
      // One id per HTTP request, shared by its retries, makes the call safe to repeat.
      const operationId = crypto.randomUUID();
      const result = await callDurable<DurableResult<MemberUpdateResult>>(
        () => organizationStub(env, org).updateMember(caller.githubUserId, githubUserId, patch, operationId),
        { idempotent: true },
      );
      return json(unwrap(result));
    });
}
