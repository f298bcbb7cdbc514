import { z } from "zod";
import { userStub } from "../auth/user-stub";
import { reportActivity } from "../directory/activity";
import { storeEvents } from "../directory/events";
import { putOrganization as putOrganizationAtHome } from "../directory/put";
import { syncOrganization } from "../directory/resolve";
import { mainDatabase } from "../directory/shards";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, routesFor } from "../http/route";
import { callDurable, unwrap } from "../lib/durable-call";
import { inStore, notFound } from "../lib/errors";
import { formatInstant } from "../lib/time";
import { internalDocumentRoute } from "../openapi/routes";
import { GithubId, GithubOrgName, GithubRepoName, InstantOutput } from "../schemas/common";
import { EventBatch, EventBatchAccepted } from "../schemas/events";
import { Member, MemberInput } from "../schemas/member";
import { Organization, OrganizationInput } from "../schemas/organization";
import { Repository, RepositoryInput } from "../schemas/repository";
import { User, UserInput } from "../schemas/user";
import { deleteParked, listParked, readParked } from "../storage/parked";
import { replayParked } from "../webhooks/receive";
import { organizationKeyRoutes, userKeyRoutes } from "./key-routes";
import { cancelOrganizationMove, listShards, moveOrganization, readOrganizationMove } from "./shard-routes";
import { postSync, readSync } from "./sync-routes";

const adminRoute = routesFor("adminToken");

/** Control-plane bodies may be large (member lists, event batches), but not unbounded. */
export const CONTROL_PLANE_MAX_BODY = 1024 * 1024;

const OrgPath = z.object({ org: GithubOrgName });
const RepoPath = z.object({ org: GithubOrgName, repo: GithubRepoName });
const MemberPath = z.object({ org: GithubOrgName, githubUserId: GithubId });
const UserPath = z.object({ githubUserId: GithubId });

const body = <S extends z.ZodType>(schema: S, example: unknown) => ({ schema, maxBytes: CONTROL_PLANE_MAX_BODY, example });

/**
 * Writes are idempotent upserts; every call is safe to retry. They reach the organization at its
 * home (`directory/resolve.ts`); an old login of a renamed organization answers 404.
 */
const viaOrg = async <T>(env: Env, org: string, call: Parameters<typeof syncOrganization<T>>[2]) =>
  unwrap(await syncOrganization<T>(env, org, call));

/** A call to the user's object; retried on a transient failure unless `idempotent: false` says a retry could act twice. */
const viaUser = <T>(
  env: Env,
  id: string,
  call: (stub: ReturnType<typeof userStub>) => Promise<T>,
  { idempotent = true }: { idempotent?: boolean } = {},
) => callDurable<T>(() => call(userStub(env, id)), { idempotent });

const putOrganization = adminRoute({
  method: "PUT",
  path: "/internal/v1/organizations/{org}",
  operationId: "putOrganization",
  summary: "Register or update an organization's installation, plan and subscription",
  request: {
    params: OrgPath,
    body: body(OrganizationInput, {
      installationId: 41,
      installedAt: "2025-06-01T00:00:00Z",
      blocked: false,
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 10 },
    }),
  },
  responses: {
    200: {
      description:
        "The stored organization, under its current login. An installation id already registered updates that organization whatever login the path names (an old one, or a new one not applied yet) and keeps its login: only GitHub's renames change it.",
      body: Organization,
      example: {
        login: "acme",
        installationId: 41,
        installedAt: "2025-06-01T00:00:00.000Z",
        blocked: false,
        plan: "pro",
        subscription: { status: "active", billedThroughService: true, purchasedSeats: 10 },
      },
    },
  },
  errors: [],
  handler: async ({ params, body }, { env }) => putOrganizationAtHome(env, params.org, body),
});

const putRepository = adminRoute({
  method: "PUT",
  path: "/internal/v1/organizations/{org}/repositories/{repo}",
  operationId: "putRepository",
  summary: "Register a repository, its visibility and its collaborators",
  description:
    "Public repositories are open to every member; private ones to the organization's admins and the listed collaborators.",
  request: { params: RepoPath, body: body(RepositoryInput, { private: true, collaborators: ["1002"] }) },
  responses: {
    200: {
      description: "The stored repository.",
      body: Repository,
      example: { org: "acme", name: "infra", private: true, collaborators: ["1002"] },
    },
  },
  errors: ["org_not_found"],
  handler: async ({ params, body }, { env }) =>
    viaOrg(env, params.org, (stub, at, adopt) => stub.putRepository(at, params.repo, body, adopt)),
});

const putMember = adminRoute({
  method: "PUT",
  path: "/internal/v1/organizations/{org}/members/{githubUserId}",
  operationId: "putMember",
  summary: "Synchronise a member (no guards, no seat capacity check)",
  request: {
    params: MemberPath,
    body: body(MemberInput, { githubLogin: "max", workEmail: "max@example.com", role: "member", seat: true, isBot: false }),
  },
  responses: {
    200: {
      description: "The stored member.",
      body: Member,
      example: {
        githubUserId: "1002",
        githubLogin: "max",
        workEmail: "max@example.com",
        role: "member",
        seat: true,
        isBot: false,
        lastActivityAt: null,
      },
    },
  },
  errors: ["org_not_found"],
  handler: async ({ params, body }, { env, correlationId }) =>
    viaOrg(env, params.org, (stub, at, adopt) =>
      stub.putMember(at, params.githubUserId, body, { source: "sync", correlationId }, adopt),
    ),
});

const deleteMember = adminRoute({
  method: "DELETE",
  path: "/internal/v1/organizations/{org}/members/{githubUserId}",
  operationId: "deleteMember",
  summary: "Remove a member who left the GitHub organization",
  request: { params: MemberPath },
  responses: { 204: { description: "Removed (or was not there)." } },
  errors: ["org_not_found"],
  handler: async ({ params }, { env, correlationId }) => {
    await viaOrg(env, params.org, (stub, at, adopt) =>
      stub.deleteMember(at, params.githubUserId, { source: "sync", correlationId }, adopt),
    );
    return null;
  },
});

const putUser = adminRoute({
  method: "PUT",
  path: "/internal/v1/users/{githubUserId}",
  operationId: "putUser",
  summary: "Register or update a user; blocking takes effect on the next request",
  request: { params: UserPath, body: body(UserInput, { githubLogin: "max", blocked: false }) },
  responses: {
    200: { description: "The stored user.", body: User, example: { githubUserId: "1002", githubLogin: "max", blocked: false } },
  },
  errors: [],
  handler: async ({ params, body }, { env }) =>
    viaUser(env, params.githubUserId, (stub) => stub.putUser(params.githubUserId, body)),
});

const ingestEvents = adminRoute({
  method: "POST",
  path: "/internal/v1/events",
  operationId: "ingestEvents",
  summary: "Store a batch of reviewer events (all or nothing, any order, replay-safe)",
  request: {
    body: body(EventBatch, {
      events: [
        {
          type: "review",
          org: "acme",
          repo: "api",
          prNumber: 7,
          reviewId: "r-1",
          status: "completed",
          completedAt: "2026-11-01T11:00:00Z",
          updatedAt: "2026-11-01T11:00:00Z",
        },
      ],
    }),
  },
  responses: { 200: { description: "The whole batch was stored.", body: EventBatchAccepted, example: { accepted: 1 } } },
  errors: [],
  handler: async ({ body }, { env, correlationId }) => {
    const stored = await inStore("D1", () => storeEvents(env, body.events));
    // Members' activity and automatic seats (contract section 20), in the organizations' objects.
    await reportActivity(env, stored.activity, { assign: true, correlationId });
    return { accepted: body.events.length };
  },
});

const ParkedDelivery = z
  .object({
    id: z.string().max(140).meta({ description: "The delivery id and the part of the delivery (`<delivery>:<part>`)." }),
    delivery: z.string().max(140).meta({ description: "X-GitHub-Delivery." }),
    event: z.string().max(100).meta({ description: "Event and action, e.g. pull_request.closed." }),
    attempts: z.number().int().min(0).meta({ description: "Attempts the queue made before parking it." }),
    parkedAt: InstantOutput,
    message: z.unknown().meta({ description: "The queue message as it was sent (the reduced delivery)." }),
  })
  .meta({ id: "ParkedDelivery" });

const ParkedPage = z.object({ data: z.array(ParkedDelivery).max(100) }).meta({ id: "ParkedDeliveries" });
const ParkedPath = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,140}$/, "must be the id of a parked delivery")
    .meta({ example: "72d3162e-cc78-11e3-81ab-4c9367dc0958:0", override: { maxLength: 140 } }),
});

const PARKED_EXAMPLE = {
  id: "72d3162e-cc78-11e3-81ab-4c9367dc0958:0",
  delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
  event: "organization.member_added",
  attempts: 6,
  parkedAt: "2026-11-22T10:00:00.000Z",
  message: { v: 1, delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", part: 0, event: "organization.member_added", org: "acme" },
};

const present = (p: Awaited<ReturnType<typeof listParked>>[number]) => ({ ...p, parkedAt: formatInstant(p.parkedAt) });

const listParkedDeliveries = adminRoute({
  method: "GET",
  path: "/internal/v1/webhooks/parked",
  operationId: "listParkedWebhookDeliveries",
  summary: "List webhook deliveries the queue gave up on (the dead-letter queue), oldest first",
  request: { query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(100) }) },
  responses: {
    200: { description: "The oldest parked deliveries.", body: ParkedPage, example: { data: [PARKED_EXAMPLE] } },
  },
  errors: [],
  handler: async ({ query }, { env }) => ({
    data: (await inStore("D1", () => listParked(mainDatabase(env), query.limit))).map(present),
  }),
});

const replayParkedDelivery = adminRoute({
  method: "POST",
  path: "/internal/v1/webhooks/parked/{id}/replay",
  operationId: "replayParkedWebhookDelivery",
  summary: "Send a parked delivery to the queue again (applied idempotently) and drop the parked copy",
  request: { params: ParkedPath },
  responses: { 200: { description: "Queued again.", body: ParkedDelivery, example: PARKED_EXAMPLE } },
  errors: ["not_found", "delivery_not_applicable"],
  handler: async ({ params }, { env }) => {
    const parked = await inStore("D1", () => readParked(mainDatabase(env), params.id));
    if (parked === null) throw notFound("No parked delivery with this id.");
    // Queued first, deleted after: a failure in between leaves the copy to replay again (harmless).
    await replayParked(env, parked);
    await inStore("D1", () => deleteParked(mainDatabase(env), params.id));
    return present(parked);
  },
});

/** `/internal/v1/...`: the entry point that feeds the service its data (contract section 5). */
export const controlPlaneInterface: ApiInterface<"adminToken"> = {
  name: "control plane",
  description: "Internal: synchronisation, event ingestion and key management (ADMIN_TOKEN).",
  basePath: "/internal",
  document: "internal",
  envelope: codedErrorEnvelope,
  auth: { kind: "adminToken" },
  errors: ["internal_error", "unavailable"],
  routes: [
    putOrganization,
    putRepository,
    putMember,
    deleteMember,
    putUser,
    ...userKeyRoutes,
    ...organizationKeyRoutes,
    ingestEvents,
    listParkedDeliveries,
    replayParkedDelivery,
    readSync,
    postSync,
    listShards,
    readOrganizationMove,
    moveOrganization,
    cancelOrganizationMove,
    internalDocumentRoute,
  ],
};
