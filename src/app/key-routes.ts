import { z } from "zod";
import { clientAddress } from "../auth/authenticate";
import {
  ApiKeyCreated,
  ApiKeyList,
  AppKeyCreateInput,
  AppOrgKeyCreateInput,
  KeyId,
  OrgApiKeyCreated,
  OrgApiKeyList,
} from "../auth/key-schemas";
import { defaultScopes, readOnlyScopes } from "../auth/key-scopes";
import { createUserKey, listUserKeys, revokeUserKey } from "../auth/keys";
import { createOrgKey, listOrgKeys, revokeOrgKey } from "../auth/org-keys";
import { routesFor } from "../http/route";
import { keyExpiresAt } from "../rules/sessions";
import { OrgLogin } from "../schemas/common";

/**
 * The web app's key routes (contract sections 13 and 18), for the signed-in person's own keys:
 * the same functions as the control plane's (`auth/keys.ts`).
 */

const sessionRoute = routesFor("session");

const listKeys = sessionRoute({
  method: "GET",
  path: "/app/api/keys",
  operationId: "appListKeys",
  summary: "Your keys: name, hint, scopes, networks, created, expires, last used (to the hour)",
  responses: {
    200: {
      description: "Every key you hold, by kind then creation (never a secret).",
      body: ApiKeyList,
      example: {
        data: [
          {
            keyId: "key_4fQ8nW2kLm9Xp3Rt7Vb1",
            name: "spreadsheet",
            kind: "analytics",
            scopes: ["analytics:read"],
            hint: "cak_…j5Kp",
            createdAt: "2026-11-02T09:30:00.000Z",
            expiresAt: "2027-11-02T09:30:00.000Z",
            allowedNetworks: [],
            lastUsedAt: "2026-11-20T16:00:00.000Z",
          },
        ],
      },
    },
  },
  errors: [],
  handler: async ({ caller }, { env }) => ({ data: await listUserKeys(env, caller.githubUserId) }),
});

const createKey = sessionRoute({
  method: "POST",
  path: "/app/api/keys",
  operationId: "appCreateKey",
  summary: "Create a named key, or regenerate yours of that kind and name (its previous value stops working at once)",
  request: {
    body: {
      schema: AppKeyCreateInput,
      maxBytes: 4096,
      example: { kind: "members", name: "agent", readOnly: true, expiresInDays: 90, allowedNetworks: [] },
    },
  },
  responses: {
    201: {
      description: "The new key, shown once.",
      body: ApiKeyCreated,
      example: {
        key: "cbk_3CjWq0y5pTqRLg0hQm1nZk2sVb8xYf4eTr6Aj5Kp",
        keyId: "key_4fQ8nW2kLm9Xp3Rt7Vb1",
        name: "agent",
        kind: "members",
        scopes: ["members:read"],
        hint: "cbk_…j5Kp",
        createdAt: "2026-11-22T10:00:00.000Z",
        expiresAt: "2027-02-20T10:00:00.000Z",
        allowedNetworks: [],
      },
    },
  },
  errors: ["not_found", "key_limit_reached"],
  handler: async ({ body, caller }, { env }) => {
    const now = Date.now();
    const scopes = body.readOnly ? readOnlyScopes(body.kind) : defaultScopes(body.kind);
    const expiresAt = keyExpiresAt(body.expiresInDays, now);
    return createUserKey(env, caller.githubUserId, { ...body, scopes, expiresAt }, now);
  },
});

const revokeKey = sessionRoute({
  method: "DELETE",
  path: "/app/api/keys/{keyId}",
  operationId: "appRevokeKey",
  summary: "Revoke one of your keys",
  request: { params: z.object({ keyId: KeyId }) },
  responses: { 204: { description: "Revoked (or there was no such key)." } },
  errors: [],
  handler: async ({ params, caller }, { env }) => {
    await revokeUserKey(env, caller.githubUserId, params.keyId);
    return null;
  },
});

const OrgPath = z.object({ org: OrgLogin });

const EXAMPLE_KEY = "cak_3CjWq0y5pTqRLg0hQm1nZk2sVb8xYf4eTr6Aj5Kp";
const ORG_KEY_EXAMPLE = {
  keyId: "key_4fQ8nW2kLm9Xp3Rt7Vb1",
  name: "warehouse export",
  kind: "analytics",
  scopes: ["analytics:read"],
  hint: "cak_…j5Kp",
  createdAt: "2026-11-22T10:00:00.000Z",
  expiresAt: "2027-11-22T10:00:00.000Z",
  allowedNetworks: [],
  repositories: ["api"],
};

const listOrgKeysRoute = sessionRoute({
  method: "GET",
  path: "/app/api/orgs/{org}/keys",
  operationId: "appListOrganizationKeys",
  summary: "The organization's keys (admins)",
  request: { params: OrgPath },
  responses: {
    200: {
      description: "Every key of the organization, never a secret.",
      body: OrgApiKeyList,
      example: { data: [{ ...ORG_KEY_EXAMPLE, lastUsedAt: "2026-11-20T16:00:00.000Z" }] },
    },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "not_org_admin"],
  handler: async ({ params, caller }, { env }) => ({ data: await listOrgKeys(env, params.org, caller.githubUserId) }),
});

const createOrgKeyRoute = sessionRoute({
  method: "POST",
  path: "/app/api/orgs/{org}/keys",
  operationId: "appCreateOrganizationKey",
  summary: "Create an organization key, or regenerate the one of that kind and name (admins)",
  request: {
    params: OrgPath,
    body: {
      schema: AppOrgKeyCreateInput,
      maxBytes: 16 * 1024,
      example: { kind: "analytics", name: "warehouse export", readOnly: false, expiresInDays: 365, repositories: ["api"] },
    },
  },
  responses: {
    201: { description: "The key, shown once.", body: OrgApiKeyCreated, example: { ...ORG_KEY_EXAMPLE, key: EXAMPLE_KEY } },
  },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "not_org_admin", "key_limit_reached"],
  handler: async ({ params, body, caller }, { env, correlationId, request }) => {
    const now = Date.now();
    const scopes = body.readOnly ? readOnlyScopes(body.kind) : defaultScopes(body.kind);
    const spec = { ...body, scopes, expiresAt: keyExpiresAt(body.expiresInDays, now) };
    return createOrgKey(env, params.org, spec, { actor: caller.githubUserId, correlationId, ip: clientAddress(request) }, now);
  },
});

const revokeOrgKeyRoute = sessionRoute({
  method: "DELETE",
  path: "/app/api/orgs/{org}/keys/{keyId}",
  operationId: "appRevokeOrganizationKey",
  summary: "Revoke one of the organization's keys (admins)",
  request: { params: z.object({ org: OrgLogin, keyId: KeyId }) },
  responses: { 204: { description: "Revoked (or there was no such key)." } },
  errors: ["org_not_found", "installation_blocked", "org_access_denied", "not_org_admin"],
  handler: async ({ params, caller }, { env, correlationId, request }) => {
    await revokeOrgKey(env, params.org, params.keyId, { actor: caller.githubUserId, correlationId, ip: clientAddress(request) });
    return null;
  },
});

export const appKeyRoutes = [listKeys, createKey, revokeKey, listOrgKeysRoute, createOrgKeyRoute, revokeOrgKeyRoute];
