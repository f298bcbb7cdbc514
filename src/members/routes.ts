import { z } from "zod";
import type { KeyHolder } from "../auth/user-object";
import { atOrganization } from "../directory/resolve";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, type RequestContext, routesFor } from "../http/route";
import { unwrap } from "../lib/durable-call";
import type { ErrorCode } from "../lib/errors";
import type { MemberChangesResult, MemberRows } from "../organization/answers";
import type { MemberChange } from "../rules/members";
import { GithubUserId, OrgLogin } from "../schemas/common";
import { Member, MemberBatchPatch, MemberBatchResult, MemberPage, MemberPatch, MemberUpdateResult } from "../schemas/member";
import { OrganizationPage } from "../schemas/organization";
import { listOrganizationAuditLog } from "./audit-log";
import { changeRequest } from "./change-request";
import { listPage, PAGE_HEADERS } from "./list-pages";
import { MemberCsv, toMemberCsv } from "./member-csv";
import { listOrganizations } from "./organizations";
import { DEFAULT_LIMIT, encodeMemberCursor, invalidListQueryMessage, MemberListQuery, OrganizationListQuery } from "./query";
import { getOrganizationSettings, listSeatRequests, updateOrganizationSettings } from "./settings-routes";

const keyRoute = routesFor("apiKey");

const MemberPath = z.object({ org: OrgLogin, githubUserId: GithubUserId });
const OrgPath = z.object({ org: OrgLogin });

/** A PATCH body is a handful of fields. */
export const MEMBER_PATCH_MAX_BODY = 8 * 1024;

/**
 * A batch PATCH body: 100 changes of at most about 130 bytes each (ids of 20 digits, both pairs)
 * is 13 KiB; 64 KiB leaves room for pretty-printed JSON and still refuses anything absurd unread.
 */
export const MEMBER_BATCH_MAX_BODY = 64 * 1024;

/** The state rules a change can break, in the order they are judged (members/rules.ts). */
const CHANGE_ERRORS: readonly ErrorCode[] = [
  "org_not_found",
  "installation_blocked",
  "org_access_denied",
  "not_org_admin",
  "subscription_required",
  "member_not_found",
  "expected_value_mismatch",
  "no_seat_available",
  "last_admin",
  "bot_cannot_be_admin",
];

/** Guarded changes in the organization's object, one transaction; one operation id per HTTP request makes retries safe. */
function applyChanges(
  org: string,
  callerId: string,
  changes: MemberChange[],
  pathPrefix: string | null,
  key: KeyHolder | null,
  rc: RequestContext,
) {
  const operationId = crypto.randomUUID();
  const change = changeRequest(key, rc);
  return atOrganization<MemberChangesResult>(rc.env, org, (stub) =>
    stub.updateMembers(org, callerId, changes, operationId, pathPrefix, change),
  );
}

/**
 * The list's keyset is (lower(githubLogin), githubUserId): exact while members come and go, but a
 * login is part of the position. Keeping a walk exact under renames would need a snapshot per
 * walk or an order that is not the contract's; the limit is stated instead (docs/api.md, the document).
 */
const MEMBER_WALK_LIMIT =
  "A member whose githubLogin changes during the walk moves in this order, so it may be returned twice or not at all.";

const exampleMember = {
  githubUserId: "1002",
  githubLogin: "max-member",
  workEmail: "max-member@example.com",
  role: "member",
  seat: true,
  isBot: false,
  lastActivityAt: "2026-11-20T16:44:17.054Z",
};

/**
 * `GET /api/v1/organizations/{org}/members/{githubUserId}` (contract section 4): from the
 * organization's Durable Object, never a replica, alongside the key verdict.
 */
export const getOrganizationMember = keyRoute({
  method: "GET",
  scope: "members:read",
  path: "/api/v1/organizations/{org}/members/{githubUserId}",
  operationId: "getOrganizationMember",
  summary: "Read one member",
  description:
    "Any member of the organization (member, admin or viewer) may read any member. Read, then PATCH with what you read.",
  request: { params: MemberPath },
  alongside: ({ params }, callerId, { env }) =>
    atOrganization<Member>(env, params.org, (stub) => stub.readMember(params.org, callerId, params.githubUserId)),
  responses: {
    200: {
      description: "The member.",
      body: Member,
      example: exampleMember,
      // The guard workflow: PATCH with the values just read. As written, each keeps the value (changed false);
      // a client sets seat or role to what it wants and keeps the expected value from this read.
      links: {
        updateSeatGuarded: {
          operationId: "updateOrganizationMember",
          description: "Change this member's seat, guarded by the seat just read (expectedSeat).",
          parameters: { org: "$request.path.org", githubUserId: "$response.body#/githubUserId" },
          requestBody: { seat: "$response.body#/seat", expectedSeat: "$response.body#/seat" },
        },
        updateRoleGuarded: {
          operationId: "updateOrganizationMember",
          description: "Change this member's role, guarded by the role just read (expectedRole).",
          parameters: { org: "$request.path.org", githubUserId: "$response.body#/githubUserId" },
          requestBody: { role: "$response.body#/role", expectedRole: "$response.body#/role" },
        },
      },
    },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "member_not_found"],
  handler: async ({ read }) => unwrap(read),
});

/**
 * `PATCH /api/v1/organizations/{org}/members/{githubUserId}`: a batch of one change, judged by the
 * same rules in the same transaction as the batch PATCH. A write waits for the key verdict.
 */
export const updateOrganizationMember = keyRoute({
  method: "PATCH",
  scope: "members:write",
  path: "/api/v1/organizations/{org}/members/{githubUserId}",
  operationId: "updateOrganizationMember",
  summary: "Turn a seat on or off, or change a role, guarded by the values last read",
  description:
    "Send seat with expectedSeat, role with expectedRole, or both pairs (applied atomically). A guard that differs from the " +
    "current value is 409 expected_value_mismatch and nothing changes. Needs an organization admin and an active Team or Pro " +
    "subscription billed through the service. Never buys seats.",
  request: {
    params: MemberPath,
    body: { schema: MemberPatch, maxBytes: MEMBER_PATCH_MAX_BODY, example: { seat: false, expectedSeat: true } },
  },
  responses: {
    200: {
      description: "The result, also when nothing changed (changed false, before equal to after).",
      body: MemberUpdateResult,
      example: {
        githubUserId: "1002",
        before: { seat: true, role: "member" },
        after: { seat: false, role: "member" },
        changed: true,
        availableSeats: 3,
        purchasedQuantityChanged: false,
      },
    },
  },
  errors: CHANGE_ERRORS,
  handler: async ({ params, body, caller, key }, rc) => {
    const change = { githubUserId: params.githubUserId, ...body };
    const result = await applyChanges(params.org, caller.githubUserId, [change], null, key, rc);
    return unwrap(result).results[0];
  },
});

/**
 * `GET /api/v1/organizations` (contract section 8): the caller's organizations from their index,
 * each confirmed by the organization's object (members/organizations.ts), alongside the key verdict.
 */
export const listCallerOrganizations = keyRoute({
  method: "GET",
  scope: "members:read",
  path: "/api/v1/organizations",
  operationId: "listOrganizations",
  summary: "List the installed organizations you are a member of",
  description:
    "Ordered by login, case-insensitively. Each entry carries your role and seat and what you may do there: " +
    "canManageSeats and canManageRoles (an admin of an unblocked organization with an active Team or Pro subscription " +
    "billed through the service) and canExportAnalytics (a member of an unblocked Pro organization). Blocked " +
    "installations are listed with all three false. Cursor-paginated: pass nextCursor back as cursor.",
  request: { query: OrganizationListQuery, invalidMessage: invalidListQueryMessage },
  alongside: ({ query }, callerId, { env, ctx }) =>
    listOrganizations(env, ctx, callerId, query.cursor ?? null, query.limit ?? DEFAULT_LIMIT),
  responses: {
    200: {
      description: "A page of organizations.",
      body: OrganizationPage,
      example: {
        data: [
          {
            org: "acme",
            plan: "pro",
            role: "admin",
            seat: true,
            canManageSeats: true,
            canManageRoles: true,
            canExportAnalytics: true,
          },
        ],
        nextCursor: null,
      },
    },
  },
  errors: [],
  handler: async ({ read }) => read,
});

/**
 * `GET /api/v1/organizations/{org}/members` (contract section 8): any member may list; a keyset
 * page from the organization's object, alongside the key verdict.
 */
export const listOrganizationMembers = keyRoute({
  method: "GET",
  scope: "members:read",
  path: "/api/v1/organizations/{org}/members",
  operationId: "listOrganizationMembers",
  summary: "List members, with filters and the seat summary",
  description:
    "Any member of the organization may list. Ordered by githubLogin case-insensitively, then githubUserId. Filters: role, " +
    "seat, search (a case-insensitive substring of githubLogin or workEmail) and inactiveDays (lastActivityAt null or " +
    "older than that many days). Walking every page with nextCursor " +
    "returns each matching member exactly once, also while members are added or removed. " +
    `${MEMBER_WALK_LIMIT} seats counts the whole organization, not the filtered page. format=csv, or Accept naming text/csv ` +
    "above JSON, answers the same page as CSV (the seats summary is JSON only); errors stay JSON. Every page but the last " +
    'carries Link: <next page URL>; rel="next" and X-Next-Cursor: a CSV of the whole filtered list follows Link.',
  request: { params: OrgPath, query: MemberListQuery, invalidMessage: invalidListQueryMessage },
  alongside: ({ params, query }, callerId, { env }) =>
    atOrganization<MemberRows>(env, params.org, (stub) =>
      stub.listMembers(params.org, callerId, {
        role: query.role,
        seat: query.seat,
        search: query.search,
        inactiveDays: query.inactiveDays,
        after: query.cursor,
        limit: query.limit ?? DEFAULT_LIMIT,
      }),
    ),
  responses: {
    200: {
      description: "A page of members and the organization's seats.",
      body: MemberPage,
      example: {
        data: [exampleMember],
        nextCursor: "bTo1ODMyMzE6bWF4LW1lbWJlcg",
        seats: { purchased: 10, used: 7, available: 3 },
      },
      media: {
        "text/csv": {
          schema: MemberCsv,
          example:
            "githubUserId,githubLogin,workEmail,role,seat,isBot,lastActivityAt\r\n" +
            "1002,max-member,max-member@example.com,member,true,false,2026-11-20T16:44:17.054Z\r\n",
        },
      },
      headers: PAGE_HEADERS,
      links: {
        getMember: {
          operationId: "getOrganizationMember",
          description: "Read a listed member (the first here; any index of data works), then PATCH it with what the read gave.",
          parameters: { org: "$request.path.org", githubUserId: "$response.body#/data/0/githubUserId" },
        },
      },
    },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied"],
  handler: async ({ query, read }, rc) => {
    const rows = unwrap(read);
    const page = { data: rows.data, nextCursor: rows.next && encodeMemberCursor(rows.next), seats: rows.seats };
    return listPage(page, query.format, () => toMemberCsv(rows.data), rc);
  },
});

/**
 * `PATCH /api/v1/organizations/{org}/members` (contract section 8): the single PATCH's rules for a
 * list of changes, judged as a whole and applied all or nothing in one transaction.
 */
export const updateOrganizationMembers = keyRoute({
  method: "PATCH",
  scope: "members:write",
  path: "/api/v1/organizations/{org}/members",
  operationId: "updateOrganizationMembers",
  summary: "Change seats and roles of up to 100 members at once, all or nothing",
  description:
    "1 to 100 changes, each the single PATCH body plus githubUserId, no member twice. Every guard must hold and every " +
    "state rule must hold for the batch as a whole (seat capacity counts the net seats of the batch; the last-admin rule " +
    "looks at the state after the batch), or nothing changes and the answer is the first failing rule's status and code " +
    "with details paths such as changes.3.expectedSeat. Same preconditions as the single PATCH. Body at most 64 KiB.",
  request: {
    params: OrgPath,
    body: {
      schema: MemberBatchPatch,
      maxBytes: MEMBER_BATCH_MAX_BODY,
      example: {
        changes: [
          { githubUserId: "1002", seat: false, expectedSeat: true },
          { githubUserId: "1003", seat: true, expectedSeat: false, role: "admin", expectedRole: "member" },
        ],
      },
    },
  },
  responses: {
    200: {
      description: "One result per change in request order, also for changes that changed nothing.",
      body: MemberBatchResult,
      example: {
        results: [
          {
            githubUserId: "1002",
            before: { seat: true, role: "member" },
            after: { seat: false, role: "member" },
            changed: true,
            availableSeats: 3,
            purchasedQuantityChanged: false,
          },
          {
            githubUserId: "1003",
            before: { seat: false, role: "member" },
            after: { seat: true, role: "admin" },
            changed: true,
            availableSeats: 3,
            purchasedQuantityChanged: false,
          },
        ],
        availableSeats: 3,
      },
    },
  },
  errors: CHANGE_ERRORS,
  handler: async ({ params, body, caller, key }, rc) =>
    unwrap(await applyChanges(params.org, caller.githubUserId, body.changes, "changes", key, rc)),
});

export const membersInterface: ApiInterface<"apiKey"> = {
  name: "members",
  description:
    "Your organizations; list, read and change members (seats and roles, guarded by expected values, one or up to 100 " +
    "at once); the organization's settings and waiting list for seats; the audit log (personal cbk_ keys).",
  basePath: "/api/v1",
  document: "public",
  envelope: codedErrorEnvelope,
  auth: { kind: "apiKey", keyKind: "members" },
  errors: ["internal_error", "unavailable"],
  routes: [
    listCallerOrganizations,
    listOrganizationMembers,
    updateOrganizationMembers,
    getOrganizationMember,
    updateOrganizationMember,
    listOrganizationAuditLog,
    getOrganizationSettings,
    updateOrganizationSettings,
    listSeatRequests,
  ],
};
