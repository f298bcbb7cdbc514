import type { RouterType } from "itty-router";
import { z } from "zod";
import { callDurable, type DurableResult, unwrap } from "../durable/call";
import { organizationStub, userStub } from "../durable/stubs";
import { readJsonObject } from "../http/body";
import { badRequest } from "../http/errors";
import { pathParams, type RequestContext } from "../http/request";
import { json, noContent } from "../http/respond";
import { parseOrThrow } from "../http/validation";
import { GithubOrgName, GithubRepoName, GithubUserId } from "../schemas/common";
import { EventBatch } from "../schemas/events";
import { MemberInput } from "../schemas/member";
import { OrganizationInput } from "../schemas/organization";
import { RepositoryInput } from "../schemas/repository";
import { type ApiKeyCreated, ApiKeyCreateInput, KeyKind, UserInput } from "../schemas/user";
import { storeEvents } from "../storage/events";

/** Control-plane bodies may be large (member lists, event batches), but not unbounded. */
export const CONTROL_PLANE_MAX_BODY = 1024 * 1024;

const OrgPath = z.object({ org: GithubOrgName });
const RepoPath = z.object({ org: GithubOrgName, repo: GithubRepoName });
const MemberPath = z.object({ org: GithubOrgName, githubUserId: GithubUserId });
const UserPath = z.object({ githubUserId: GithubUserId });
const KeyPath = z.object({ githubUserId: GithubUserId, kind: KeyKind });

const body = async <S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> =>
  parseOrThrow(schema, await readJsonObject(request, CONTROL_PLANE_MAX_BODY), "Invalid request body.");

type OrgStub = ReturnType<typeof organizationStub>;
type UserStub = ReturnType<typeof userStub>;

/** Writes are idempotent upserts; every call is safe to retry. */
const viaOrg = <T>(env: Env, org: string, call: (stub: OrgStub) => Promise<T>) =>
  callDurable<T>(() => call(organizationStub(env, org)), { idempotent: true });

const viaUser = <T>(env: Env, id: string, call: (stub: UserStub) => Promise<T>, idempotent = true) =>
  callDurable<T>(() => call(userStub(env, id)), { idempotent });

/** `/internal/v1/...`: the entry point that feeds the service its data (contract section 5). */
export function registerControlPlane(router: RouterType<Request & { params: Record<string, string> }, [RequestContext]>) {
  router
    .put("/internal/v1/organizations/:org", async (request, { env }) => {
      const { org } = pathParams(OrgPath, request.params);
      const input = await body(request, OrganizationInput);
      return json(await viaOrg(env, org, (stub) => stub.putOrganization(org, input)));
    })
    .put("/internal/v1/organizations/:org/repositories/:repo", async (request, { env }) => {
      const { org, repo } = pathParams(RepoPath, request.params);
      const input = await body(request, RepositoryInput);
      return json(await viaOrg(env, org, (stub) => stub.putRepository(org, repo, input)));
    })
    .put("/internal/v1/organizations/:org/members/:githubUserId", async (request, { env }) => {
      const { org, githubUserId } = pathParams(MemberPath, request.params);
      const input = await body(request, MemberInput);
      return json(await viaOrg(env, org, (stub) => stub.putMember(githubUserId, input)));
    })
    .delete("/internal/v1/organizations/:org/members/:githubUserId", async (request, { env }) => {
      const { org, githubUserId } = pathParams(MemberPath, request.params);
      await viaOrg(env, org, (stub) => stub.deleteMember(githubUserId));
      return noContent();
    })
    .put("/internal/v1/users/:githubUserId", async (request, { env }) => {
      const { githubUserId } = pathParams(UserPath, request.params);
      const input = await body(request, UserInput);
      return json(await viaUser(env, githubUserId, (stub) => stub.putUser(githubUserId, input)));
    })
    .post("/internal/v1/users/:githubUserId/api-keys", async (request, { env }) => {
      const { githubUserId } = pathParams(UserPath, request.params);
      const input = await body(request, ApiKeyCreateInput);
      const now = Date.now();
      if (input.expiresAt !== null && input.expiresAt <= now) {
        throw badRequest("Invalid request body.", [{ path: "expiresAt", message: "must be in the future" }]);
      }
      // Not retried: a retry after a lost answer would mint a second key and revoke the first.
      const created = unwrap(
        await viaUser<DurableResult<ApiKeyCreated>>(
          env,
          githubUserId,
          (stub) => stub.createKey(input.kind, input.expiresAt, now),
          false,
        ),
      );
      return json(created, 201);
    })
    .delete("/internal/v1/users/:githubUserId/api-keys/:kind", async (request, { env }) => {
      const { githubUserId, kind } = pathParams(KeyPath, request.params);
      await viaUser(env, githubUserId, (stub) => stub.revokeKey(kind));
      return noContent();
    })
    .post("/internal/v1/events", async (request, { env }) => {
      const { events } = await body(request, EventBatch);
      await storeEvents(env.DB, events);
      return json({ accepted: events.length });
    });
}
