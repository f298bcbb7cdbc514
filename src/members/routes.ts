import { z } from "zod";
import type { MemberChangesResult } from "../durable/organization";
import { organizationStub } from "../durable/stubs";
import { membersEnvelope } from "../http/envelopes";
import { type ApiInterface, defineRoute, signedIn } from "../http/route";
import { callDurable, type DurableResult, unwrap } from "../lib/durable-call";
import { GithubUserId, OrgLogin } from "../schemas/common";
import { Member, MemberPatch, MemberUpdateResult } from "../schemas/member";

const MemberPath = z.object({ org: OrgLogin, githubUserId: GithubUserId });

/** A PATCH body is a handful of fields. */
export const MEMBER_PATCH_MAX_BODY = 8 * 1024;

const exampleMember = {
  githubUserId: "1002",
  githubLogin: "max-member",
  workEmail: "max-member@example.com",
  role: "member",
  seat: true,
  isBot: false,
};

/**
 * `GET /api/v1/organizations/{org}/members/{githubUserId}` (contract section 4): from the
 * organization's Durable Object, never a replica, alongside the key verdict.
 */
const getOrganizationMember = defineRoute({
  method: "GET",
  path: "/api/v1/organizations/{org}/members/{githubUserId}",
  operationId: "getOrganizationMember",
  summary: "Read one member",
  description:
    "Any member of the organization (member, admin or viewer) may read any member. Read, then PATCH with what you read.",
  request: { params: MemberPath },
  alongside: ({ params }, callerId, { env }) =>
    callDurable<DurableResult<Member>>(() => organizationStub(env, params.org).readMember(callerId, params.githubUserId), {
      idempotent: true,
    }),
  responses: { 200: { description: "The member.", body: Member, example: exampleMember } },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "member_not_found"],
  handler: async ({ read }) => unwrap(read),
});

/**
 * `PATCH /api/v1/organizations/{org}/members/{githubUserId}`: a batch of one change, judged by the
 * same rules in the same transaction as the batch PATCH. A write waits for the key verdict.
 */
const updateOrganizationMember = defineRoute({
  method: "PATCH",
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
  errors: [
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
  ],
  handler: async ({ params, body, caller }, { env }) => {
    // One id per HTTP request, shared by its retries, makes the call safe to repeat.
    const operationId = crypto.randomUUID();
    const change = { githubUserId: params.githubUserId, ...body };
    const result = await callDurable<DurableResult<MemberChangesResult>>(
      () => organizationStub(env, params.org).updateMembers(signedIn(caller).githubUserId, [change], operationId, null),
      { idempotent: true },
    );
    return unwrap(result).results[0];
  },
});

export const membersInterface: ApiInterface = {
  name: "members",
  description: "Read a member; change its seat or role with expected-value guards (personal cbk_ keys).",
  basePath: "/api/v1",
  document: "public",
  envelope: membersEnvelope,
  auth: { kind: "apiKey", keyKind: "members" },
  errors: ["internal_error", "unavailable"],
  routes: [getOrganizationMember, updateOrganizationMember],
};
