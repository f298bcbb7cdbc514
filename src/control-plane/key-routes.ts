import { z } from "zod";
import { clientAddress } from "../auth/authenticate";
import {
  ApiKeyCreated,
  ApiKeyCreateInput,
  ApiKeyList,
  KeyId,
  OrgApiKeyCreated,
  OrgApiKeyList,
  OrgKeyCreateInput,
} from "../auth/key-schemas";
import { createUserKey, listUserKeys, revokeUserKey, revokeUserKeys } from "../auth/keys";
import { createOrgKey, listOrgKeys, revokeOrgKey } from "../auth/org-keys";
import { routesFor } from "../http/route";
import { badRequest } from "../lib/errors";
import { GithubId, GithubOrgName } from "../schemas/common";
import { KeyKind } from "../schemas/key-kind";

/**
 * A person's named keys on the control plane (contract sections 5 and 18): the same functions as
 * the web app's key routes (`auth/keys.ts`).
 */

const adminRoute = routesFor("adminToken");

const UserPath = z.object({ githubUserId: GithubId });
const KindPath = z.object({ githubUserId: GithubId, kind: KeyKind });
const KeyPath = z.object({ githubUserId: GithubId, kind: KeyKind, keyId: KeyId });

const CREATED_EXAMPLE = {
  key: "cak_3CjWq0y5pTqRLg0hQm1nZk2sVb8xYf4eTr6Aj5Kp",
  keyId: "key_4fQ8nW2kLm9Xp3Rt7Vb1",
  name: "nightly job",
  kind: "analytics",
  scopes: ["analytics:read"],
  hint: "cak_…j5Kp",
  createdAt: "2026-11-22T10:00:00.000Z",
  expiresAt: "2030-12-31T23:59:59.000Z",
  allowedNetworks: ["192.0.2.0/24"],
};

/** `expiresAt` must lie in the future (400 at its path). */
export const futureExpiry = ({ body }: { body: { expiresAt: number | null } }): void => {
  if (body.expiresAt !== null && body.expiresAt <= Date.now()) {
    throw badRequest("Invalid request body.", [{ path: "expiresAt", message: "must be in the future" }]);
  }
};

const createApiKey = adminRoute({
  method: "POST",
  path: "/internal/v1/users/{githubUserId}/api-keys",
  operationId: "createApiKey",
  summary: "Create the user's key of one kind and name, or regenerate it when the name is taken",
  description:
    "Without a name the key is named default, so the call keeps its earlier meaning: the user's default key of that kind is " +
    "regenerated and its previous value stops working at once. Other keys are never touched. At most 10 keys of a kind " +
    "(409 key_limit_reached). A user's key creations (and revocations, and blocking) run one at a time. A blocked user's " +
    "new key works once the user is unblocked.",
  request: {
    params: UserPath,
    body: {
      schema: ApiKeyCreateInput,
      maxBytes: 16 * 1024,
      example: { kind: "analytics", name: "nightly job", expiresAt: "2030-12-31T23:59:59Z", allowedNetworks: ["192.0.2.0/24"] },
    },
    check: futureExpiry,
  },
  responses: { 201: { description: "The new or regenerated key, shown once.", body: ApiKeyCreated, example: CREATED_EXAMPLE } },
  errors: ["not_found", "key_limit_reached"],
  handler: async ({ params, body }, { env }) => createUserKey(env, params.githubUserId, body, Date.now()),
});

const listApiKeys = adminRoute({
  method: "GET",
  path: "/internal/v1/users/{githubUserId}/api-keys",
  operationId: "listApiKeys",
  summary: "The user's keys (never a secret)",
  request: { params: UserPath },
  responses: {
    200: {
      description: "Every key of the user, by kind then creation.",
      body: ApiKeyList,
      example: { data: [{ ...CREATED_EXAMPLE, key: undefined, lastUsedAt: "2026-11-23T08:00:00.000Z" }] },
    },
  },
  errors: [],
  handler: async ({ params }, { env }) => ({ data: await listUserKeys(env, params.githubUserId) }),
});

const revokeApiKeys = adminRoute({
  method: "DELETE",
  path: "/internal/v1/users/{githubUserId}/api-keys/{kind}",
  operationId: "revokeApiKey",
  summary: "Revoke every key of one kind the user holds",
  request: { params: KindPath },
  responses: { 204: { description: "Revoked (or there were none)." } },
  errors: [],
  handler: async ({ params }, { env }) => {
    await revokeUserKeys(env, params.githubUserId, params.kind);
    return null;
  },
});

const revokeOneApiKey = adminRoute({
  method: "DELETE",
  path: "/internal/v1/users/{githubUserId}/api-keys/{kind}/{keyId}",
  operationId: "revokeOneApiKey",
  summary: "Revoke one of the user's keys",
  request: { params: KeyPath },
  responses: { 204: { description: "Revoked (or there was no such key)." } },
  errors: [],
  handler: async ({ params }, { env }) => {
    await revokeUserKey(env, params.githubUserId, params.keyId, params.kind);
    return null;
  },
});

export const userKeyRoutes = [createApiKey, listApiKeys, revokeApiKeys, revokeOneApiKey];

const OrgPath = z.object({ org: GithubOrgName });
const OrgKeyPath = z.object({ org: GithubOrgName, keyId: KeyId });

const ORG_KEY_EXAMPLE = { ...CREATED_EXAMPLE, name: "warehouse export", repositories: ["api"] };

const createOrganizationKey = adminRoute({
  method: "POST",
  path: "/internal/v1/organizations/{org}/api-keys",
  operationId: "createOrganizationKey",
  summary: "Create an organization's key of one kind and name, or regenerate it when the name is taken",
  description:
    "The key belongs to the organization: it keeps working when the person who made it leaves or is blocked, and ends when " +
    "it is revoked, when it expires, or when the installation is deleted. An analytics key may be limited to listed " +
    "repositories. At most 25 of a kind (409 key_limit_reached). Audited as key.created or key.regenerated.",
  request: {
    params: OrgPath,
    body: {
      schema: OrgKeyCreateInput,
      maxBytes: 16 * 1024,
      example: { kind: "analytics", name: "warehouse export", repositories: ["api"], expiresAt: null },
    },
    check: futureExpiry,
  },
  responses: {
    201: { description: "The new or regenerated key, shown once.", body: OrgApiKeyCreated, example: ORG_KEY_EXAMPLE },
  },
  errors: ["org_not_found", "key_limit_reached"],
  handler: async ({ params, body }, { env, correlationId, request }) =>
    createOrgKey(env, params.org, body, { actor: null, correlationId, ip: clientAddress(request) }, Date.now()),
});

const listOrganizationKeys = adminRoute({
  method: "GET",
  path: "/internal/v1/organizations/{org}/api-keys",
  operationId: "listOrganizationKeys",
  summary: "The organization's keys (never a secret)",
  request: { params: OrgPath },
  responses: {
    200: {
      description: "Every key of the organization, by kind then creation.",
      body: OrgApiKeyList,
      example: { data: [{ ...ORG_KEY_EXAMPLE, key: undefined, lastUsedAt: null }] },
    },
  },
  errors: ["org_not_found"],
  handler: async ({ params }, { env }) => ({ data: await listOrgKeys(env, params.org, null) }),
});

const revokeOrganizationKey = adminRoute({
  method: "DELETE",
  path: "/internal/v1/organizations/{org}/api-keys/{keyId}",
  operationId: "revokeOrganizationKey",
  summary: "Revoke one of the organization's keys",
  request: { params: OrgKeyPath },
  responses: { 204: { description: "Revoked (or there was no such key)." } },
  errors: ["org_not_found"],
  handler: async ({ params }, { env, correlationId, request }) => {
    await revokeOrgKey(env, params.org, params.keyId, { actor: null, correlationId, ip: clientAddress(request) });
    return null;
  },
});

export const organizationKeyRoutes = [createOrganizationKey, listOrganizationKeys, revokeOrganizationKey];
