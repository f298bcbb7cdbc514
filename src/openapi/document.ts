import { z } from "zod";
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from "zod-openapi";
import { AnalyticsPrPage, AnalyticsQuery } from "../schemas/analytics";
import { AnalyticsErrorBody, GithubOrgName, GithubRepoName, GithubUserId, MembersErrorBody, OrgLogin } from "../schemas/common";
import { EventBatch, EventBatchAccepted } from "../schemas/events";
import { Member, MemberInput, MemberPatch, MemberUpdateResult } from "../schemas/member";
import { Organization, OrganizationInput } from "../schemas/organization";
import { Repository, RepositoryInput } from "../schemas/repository";
import { ApiKeyCreated, ApiKeyCreateInput, KeyKind, User, UserInput } from "../schemas/user";

const jsonContent = (schema: z.ZodType) => ({ "application/json": { schema } });

const errors = (schema: z.ZodType, statuses: Record<string, string>): ZodOpenApiResponsesObject =>
  Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [status, { description, content: jsonContent(schema) }]),
  );

const membersErrors = (statuses: Record<string, string>) => errors(MembersErrorBody, statuses);

const controlPlane = (operation: ZodOpenApiOperationObject): ZodOpenApiOperationObject => ({
  tags: ["control plane"],
  security: [{ adminToken: [] }],
  ...operation,
  responses: {
    ...operation.responses,
    ...membersErrors({
      "400": "Invalid path or body",
      "401": "Missing or wrong admin token",
      "413": "Body over 1 MiB",
      "415": "Not application/json",
    }),
  },
});

const memberPath = z.object({ org: OrgLogin, githubUserId: GithubUserId });
/** The control plane takes GitHub's own names only (contract section 5, "Names"). */
const syncedMemberPath = z.object({ org: GithubOrgName, githubUserId: GithubUserId });

/** The OpenAPI 3.1 description, built from the schemas that validate requests. */
export function openApiDocument() {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Pull request analytics and member management",
      version: "1.0.0",
      description:
        "Analytics export (cak_ keys, Pro plan) and member management (cbk_ keys). Every response carries X-Correlation-Id and Cache-Control: no-store.",
    },
    tags: [
      { name: "analytics", description: "Merged pull requests with review metrics." },
      { name: "members", description: "Read a member; change its seat or role with expected-value guards." },
      { name: "control plane", description: "Internal: synchronisation, event ingestion and key management." },
      { name: "operations", description: "Health and readiness." },
    ],
    components: {
      securitySchemes: {
        analyticsKey: { type: "http", scheme: "bearer", description: "Personal Analytics API key (cak_...)." },
        membersKey: { type: "http", scheme: "bearer", description: "Personal Members API key (cbk_...)." },
        adminToken: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN secret of the Worker." },
      },
    },
    paths: {
      "/api/analytics/v1/prs": {
        get: {
          operationId: "listPullRequestAnalytics",
          tags: ["analytics"],
          summary: "List merged pull request analytics",
          security: [{ analyticsKey: [] }],
          requestParams: { query: AnalyticsQuery },
          responses: {
            "200": { description: "A page of rows, newest merge first.", content: jsonContent(AnalyticsPrPage) },
            ...errors(AnalyticsErrorBody, {
              "400": "Invalid parameters, cursor or date range",
              "401": "Missing, invalid, expired or revoked key, or blocked key owner",
              "403": "Installation blocked, not on Pro, or no access to the organization or repository",
              "404": "Organization has no installation",
              "500": "Unexpected failure",
            }),
          },
        },
      },
      "/api/v1/organizations/{org}/members/{githubUserId}": {
        get: {
          operationId: "getOrganizationMember",
          tags: ["members"],
          summary: "Read one member",
          security: [{ membersKey: [] }],
          requestParams: { path: memberPath },
          responses: {
            "200": { description: "The member.", content: jsonContent(Member) },
            ...membersErrors({
              "400": "Invalid path",
              "401": "Unauthenticated",
              "403": "Forbidden",
              "404": "Organization or member not found",
              "503": "Unavailable",
            }),
          },
        },
        patch: {
          operationId: "updateOrganizationMember",
          tags: ["members"],
          summary: "Turn a seat on or off, or change a role, guarded by the values last read",
          security: [{ membersKey: [] }],
          requestParams: { path: memberPath },
          requestBody: { required: true, content: jsonContent(MemberPatch) },
          responses: {
            "200": { description: "The result, also when nothing changed.", content: jsonContent(MemberUpdateResult) },
            ...membersErrors({
              "400": "Invalid path or body",
              "401": "Unauthenticated",
              "403": "Not an admin, blocked installation, or no active subscription",
              "404": "Organization or member not found",
              "409": "expected_value_mismatch, no_seat_available or last_admin",
              "413": "Body over 8 KiB",
              "415": "Not application/json",
              "422": "bot_cannot_be_admin",
              "503": "Unavailable",
            }),
          },
        },
      },
      "/internal/v1/organizations/{org}": {
        put: controlPlane({
          operationId: "putOrganization",
          requestParams: { path: z.object({ org: GithubOrgName }) },
          requestBody: { required: true, content: jsonContent(OrganizationInput) },
          responses: { "200": { description: "The stored organization.", content: jsonContent(Organization) } },
        }),
      },
      "/internal/v1/organizations/{org}/repositories/{repo}": {
        put: controlPlane({
          operationId: "putRepository",
          requestParams: { path: z.object({ org: GithubOrgName, repo: GithubRepoName }) },
          requestBody: { required: true, content: jsonContent(RepositoryInput) },
          responses: { "200": { description: "The stored repository.", content: jsonContent(Repository) } },
        }),
      },
      "/internal/v1/organizations/{org}/members/{githubUserId}": {
        put: controlPlane({
          operationId: "putMember",
          requestParams: { path: syncedMemberPath },
          requestBody: { required: true, content: jsonContent(MemberInput) },
          responses: { "200": { description: "The stored member.", content: jsonContent(Member) } },
        }),
        delete: controlPlane({
          operationId: "deleteMember",
          requestParams: { path: syncedMemberPath },
          responses: { "204": { description: "Removed (or was not there)." } },
        }),
      },
      "/internal/v1/users/{githubUserId}": {
        put: controlPlane({
          operationId: "putUser",
          requestParams: { path: z.object({ githubUserId: GithubUserId }) },
          requestBody: { required: true, content: jsonContent(UserInput) },
          responses: { "200": { description: "The stored user.", content: jsonContent(User) } },
        }),
      },
      "/internal/v1/users/{githubUserId}/api-keys": {
        post: controlPlane({
          operationId: "createApiKey",
          requestParams: { path: z.object({ githubUserId: GithubUserId }) },
          requestBody: { required: true, content: jsonContent(ApiKeyCreateInput) },
          responses: {
            "201": {
              description: "The new key; the previous key of this kind stops working at once.",
              content: jsonContent(ApiKeyCreated),
            },
            ...membersErrors({ "404": "User not registered" }),
          },
        }),
      },
      "/internal/v1/users/{githubUserId}/api-keys/{kind}": {
        delete: controlPlane({
          operationId: "revokeApiKey",
          requestParams: { path: z.object({ githubUserId: GithubUserId, kind: KeyKind }) },
          responses: { "204": { description: "Revoked (or there was none)." } },
        }),
      },
      "/internal/v1/events": {
        post: controlPlane({
          operationId: "ingestEvents",
          requestBody: { required: true, content: jsonContent(EventBatch) },
          responses: { "200": { description: "The whole batch was stored.", content: jsonContent(EventBatchAccepted) } },
        }),
      },
      "/healthz": {
        get: {
          operationId: "liveness",
          tags: ["operations"],
          responses: { "200": { description: "Alive.", content: jsonContent(z.object({ status: z.literal("ok") })) } },
        },
      },
      "/readyz": {
        get: {
          operationId: "readiness",
          tags: ["operations"],
          responses: {
            "200": { description: "D1 answered SELECT 1.", content: jsonContent(z.object({ status: z.literal("ok") })) },
            ...membersErrors({ "503": "D1 is not reachable" }),
          },
        },
      },
    },
  });
}
