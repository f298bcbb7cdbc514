import { z } from "zod";
import { atOrganization } from "../directory/resolve";
import { routesFor } from "../http/route";
import { unwrap } from "../lib/durable-call";
import type { AuditRows } from "../organization/answers";
import { AuditPage } from "../schemas/audit";
import { OrgLogin } from "../schemas/common";
import { AuditCsv, toAuditCsv } from "./audit-csv";
import { listPage, PAGE_HEADERS } from "./list-pages";
import {
  AuditLogQuery,
  auditFilters,
  checkAuditLogQuery,
  DEFAULT_LIMIT,
  encodeAuditCursor,
  invalidListQueryMessage,
} from "./query";

const keyRoute = routesFor("apiKey");
const OrgPath = z.object({ org: OrgLogin });

/** `GET /api/v1/organizations/{org}/audit-log` (contract sections 8 and 21): admins only, newest first, filtered. */
export const listOrganizationAuditLog = keyRoute({
  method: "GET",
  scope: "members:read",
  path: "/api/v1/organizations/{org}/audit-log",
  operationId: "listOrganizationAuditLog",
  summary: "Read the audit log of member changes (admins only)",
  description:
    "Every member added or removed, every seat or role change, every settings change and every organization key " +
    "created, regenerated or revoked, whoever made it (source api: a PATCH; sync: the control plane; github: a GitHub " +
    "webhook; automatic: automatic seat assignment), with the key and address of an API change, newest first, written in the same transaction as the change. Requests " +
    "that changed nothing write nothing. Entries are kept 400 days. Filters (all optional, combined with and): " +
    "githubUserId (the member), action, source, actor (who made it), since and until (inclusive). Cursor-paginated; the " +
    "cursor is bound to the filters. format=csv, or Accept naming text/csv above JSON, answers the same page as CSV; " +
    'errors stay JSON. Every page but the last carries Link: <next page URL>; rel="next" and X-Next-Cursor.',
  request: { params: OrgPath, query: AuditLogQuery, check: checkAuditLogQuery, invalidMessage: invalidListQueryMessage },
  alongside: ({ params, query }, callerId, { env }) =>
    atOrganization<AuditRows>(env, params.org, (stub) =>
      stub.readAuditLog(params.org, callerId, {
        ...auditFilters(query),
        before: query.cursor?.before,
        limit: query.limit ?? DEFAULT_LIMIT,
      }),
    ),
  responses: {
    200: {
      description: "A page of entries, newest first.",
      body: AuditPage,
      example: {
        data: [
          {
            id: "42",
            at: "2026-11-20T16:44:17.054Z",
            action: "member.updated",
            actor: { githubUserId: "1001", githubLogin: "ada-admin" },
            source: "api",
            githubUserId: "1002",
            githubLogin: "max-member",
            before: { seat: true, role: "member" },
            after: { seat: false, role: "member" },
            correlationId: "0b8e7c1e-4f6a-4b59-9a55-0d7f1c5e2a10",
            key: { id: "key_4fQ8nW2kLm9Xp3Rt7Vb1", name: "nightly job" },
            ip: "192.0.2.10",
          },
        ],
        nextCursor: null,
      },
      media: {
        "text/csv": {
          schema: AuditCsv,
          example:
            "id,at,action,source,actorGithubUserId,actorGithubLogin,githubUserId,githubLogin,beforeSeat,beforeRole,beforeSeatAssignment,afterSeat,afterRole,afterSeatAssignment,correlationId,keyId,keyName,ip\r\n" +
            "42,2026-11-20T16:44:17.054Z,member.updated,api,1001,ada-admin,1002,max-member,true,member,,false,member,,0b8e7c1e-4f6a-4b59-9a55-0d7f1c5e2a10,key_4fQ8nW2kLm9Xp3Rt7Vb1,nightly job,192.0.2.10\r\n",
        },
      },
      headers: PAGE_HEADERS,
    },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "not_org_admin"],
  handler: async ({ query, read }, rc) => {
    const rows = unwrap(read);
    const nextCursor = rows.next === null ? null : encodeAuditCursor(rows.next, auditFilters(query));
    return listPage({ data: rows.data, nextCursor }, query.format, () => toAuditCsv(rows.data), rc);
  },
});
