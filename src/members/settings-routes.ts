import { z } from "zod";
import { atOrganization } from "../directory/resolve";
import { routesFor } from "../http/route";
import { unwrap } from "../lib/durable-call";
import { OrgLogin } from "../schemas/common";
import { OrganizationSettings, SeatRequestList, SettingsChangeResult, SettingsPatch } from "../schemas/settings";
import { changeRequest } from "./change-request";

/**
 * The organization's settings and its waiting list for seats (contract section 20), routes of the
 * members interface: read like a member (`members:read`), changed like a member PATCH
 * (`members:write`: the preconditions of section 4, a guard, an audit entry).
 */

const keyRoute = routesFor("apiKey");
const OrgPath = z.object({ org: OrgLogin });

/** A settings PATCH body is two fields, like a member PATCH's. */
const SETTINGS_PATCH_MAX_BODY = 8 * 1024;

/** `GET /api/v1/organizations/{org}/settings`: any member, alongside the key verdict. */
export const getOrganizationSettings = keyRoute({
  method: "GET",
  scope: "members:read",
  path: "/api/v1/organizations/{org}/settings",
  operationId: "getOrganizationSettings",
  summary: "Read the organization's settings",
  description:
    "Any member of the organization may read them. seatAssignment is manual (the default) or automatic. Read, then PATCH " +
    "with what you read.",
  request: { params: OrgPath },
  alongside: ({ params }, callerId, { env }) =>
    atOrganization<OrganizationSettings>(env, params.org, (stub) => stub.readSettings(params.org, callerId)),
  responses: {
    200: {
      description: "The settings.",
      body: OrganizationSettings,
      example: { seatAssignment: "manual" },
      links: {
        updateSettingsGuarded: {
          operationId: "updateOrganizationSettings",
          description: "Change the seat assignment, guarded by the value just read (expectedSeatAssignment).",
          parameters: { org: "$request.path.org" },
          requestBody: {
            seatAssignment: "$response.body#/seatAssignment",
            expectedSeatAssignment: "$response.body#/seatAssignment",
          },
        },
      },
    },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied"],
  handler: async ({ read }) => unwrap(read),
});

/**
 * `PATCH /api/v1/organizations/{org}/settings`: the member PATCH's preconditions, then the guard,
 * the write and its `settings.updated` audit entry in one transaction. One operation id per HTTP
 * request makes a retried call answer "unchanged" instead of failing its now-stale guard.
 */
export const updateOrganizationSettings = keyRoute({
  method: "PATCH",
  scope: "members:write",
  path: "/api/v1/organizations/{org}/settings",
  operationId: "updateOrganizationSettings",
  summary: "Change the organization's settings, guarded by the value last read",
  description:
    "Send seatAssignment with expectedSeatAssignment. A guard that differs from the current value is 409 " +
    "expected_value_mismatch (details name the current value) and nothing changes. Needs an organization admin and an " +
    "active Team or Pro subscription billed through the service. Automatic assignment never buys seats.",
  request: {
    params: OrgPath,
    body: {
      schema: SettingsPatch,
      maxBytes: SETTINGS_PATCH_MAX_BODY,
      example: { seatAssignment: "automatic", expectedSeatAssignment: "manual" },
    },
  },
  responses: {
    200: {
      description: "The result, also when nothing changed (changed false, before equal to after).",
      body: SettingsChangeResult,
      example: { before: { seatAssignment: "manual" }, after: { seatAssignment: "automatic" }, changed: true },
    },
  },
  errors: [
    "org_not_found",
    "installation_blocked",
    "org_access_denied",
    "not_org_admin",
    "subscription_required",
    "expected_value_mismatch",
  ],
  handler: async ({ params, body, caller, key }, rc) => {
    const operationId = crypto.randomUUID();
    const callerId = caller.githubUserId;
    const change = changeRequest(key, rc);
    return unwrap(
      await atOrganization<SettingsChangeResult>(rc.env, params.org, (stub) =>
        stub.updateSettings(params.org, callerId, body, operationId, change),
      ),
    );
  },
});

/** `GET /api/v1/organizations/{org}/seat-requests`: admins, alongside the key verdict. */
export const listSeatRequests = keyRoute({
  method: "GET",
  scope: "members:read",
  path: "/api/v1/organizations/{org}/seat-requests",
  operationId: "listSeatRequests",
  summary: "Read the waiting list for seats (admins only)",
  description:
    "Members without a seat whose new pull request found no seat available while seatAssignment was automatic, oldest " +
    "first, until a seat is given or the member leaves (at most 1,000 entries).",
  request: { params: OrgPath },
  alongside: ({ params }, callerId, { env }) =>
    atOrganization<SeatRequestList>(env, params.org, (stub) => stub.listSeatRequests(params.org, callerId)),
  responses: {
    200: {
      description: "The waiting list.",
      body: SeatRequestList,
      example: { data: [{ githubUserId: "1004", githubLogin: "nora-new", since: "2026-11-20T16:44:17.054Z" }] },
    },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "not_org_admin"],
  handler: async ({ read }) => unwrap(read),
});
