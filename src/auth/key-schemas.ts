import { z } from "zod";
import { parseNetwork } from "../lib/networks";
import { KEY_EXPIRY_DAYS } from "../schemas/app";
import { InstantOutput, instantInput } from "../schemas/common";
import { KeyKind } from "../schemas/key-kind";
import { KIND_SCOPES, ScopeSchema } from "./key-scopes";
import type { Scope } from "./scopes";

/** The shapes of named keys (contract section 18), for the control plane and the web app alike. */

export const MAX_NETWORKS = 20;

export const KeyName = z
  .string()
  .min(1)
  .max(64)
  // Printable: no C0 or C1 control character (a pattern JSON Schema's validators all read alike).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is this pattern's purpose.
  .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, "must be printable characters")
  .meta({ description: "1 to 64 printable characters, unique per owner and kind (case-insensitively).", example: "nightly job" });

export const KeyId = z
  .string()
  .max(24)
  .regex(/^key_[0-9A-Za-z]{20}$/)
  .meta({ description: "key_ and 20 base62 characters.", example: "key_4fQ8nW2kLm9Xp3Rt7Vb1" });

/** CIDR ranges, IPv4 or IPv6, written canonically; an invalid one is 400 with its path (`allowedNetworks.3`). */
export const AllowedNetworksInput = z
  .array(z.string().max(64))
  .max(MAX_NETWORKS)
  .transform((ranges, ctx) =>
    ranges.map((range, i) => {
      const parsed = parseNetwork(range);
      if (parsed.ok) return parsed.cidr;
      ctx.addIssue({ code: "custom", path: [i], message: parsed.message });
      return range;
    }),
  )
  .meta({
    description: `Up to ${MAX_NETWORKS} CIDR ranges (IPv4 or IPv6; a bare address is one address). Empty: any address.`,
    example: ["192.0.2.0/24", "2001:db8::/32"],
  });

export const AllowedNetworks = z
  .array(z.string().max(64))
  .max(MAX_NETWORKS)
  .meta({
    description: "CIDR ranges the key works from, written canonically; empty: any address.",
    example: ["192.0.2.0/24"],
  });

/** Scopes of the key's kind only: a scope of the other kind is 400 at `scopes.N`. */
export const scopesOfKind = (kind: KeyKind, scopes: readonly Scope[], ctx: z.RefinementCtx): void => {
  scopes.forEach((scope, i) => {
    if (!KIND_SCOPES[kind].includes(scope)) {
      ctx.addIssue({ code: "custom", path: ["scopes", i], message: `a ${kind} key cannot carry ${scope}` });
    }
  });
};

const ScopesInput = z.array(ScopeSchema).min(1).max(3).meta({
  description: 'Default: every scope of the key\'s kind. A members key with ["members:read"] is read-only.',
});

const expiresAt = instantInput("2030-12-31T23:59:59.000Z").nullable().default(null).meta({
  description: "When the key stops working: a future date-time, at most 9999-12-31T23:59:59.999Z; null (default) for never.",
  example: "2030-12-31T23:59:59.000Z",
});

/** Control plane: `POST /internal/v1/users/{githubUserId}/api-keys`. */
export const ApiKeyCreateInput = z
  .strictObject({
    kind: KeyKind,
    name: KeyName.default("default"),
    scopes: ScopesInput.optional(),
    expiresAt,
    allowedNetworks: AllowedNetworksInput.default([]),
  })
  .superRefine((body, ctx) => scopesOfKind(body.kind, body.scopes ?? [], ctx))
  .meta({ id: "ApiKeyCreateInput" });
export type ApiKeyCreateInput = z.output<typeof ApiKeyCreateInput>;

const keyFields = {
  keyId: KeyId,
  name: KeyName,
  kind: KeyKind,
  scopes: z.array(ScopeSchema).max(3),
  hint: z.string().max(12).meta({ description: "The prefix and the last 4 characters.", example: "cak_…a1B9" }),
  createdAt: InstantOutput,
  expiresAt: InstantOutput.nullable().meta({ description: "Null: never expires. In the past: expired." }),
  allowedNetworks: AllowedNetworks,
};

export const ApiKeyCreated = z
  .object({
    key: z.string().max(44).meta({ description: "The plaintext key. Shown once; only its SHA-256 hash is stored." }),
    ...keyFields,
  })
  .meta({ id: "ApiKeyCreated" });
export type ApiKeyCreated = z.infer<typeof ApiKeyCreated>;

/** A key as listed: never the key itself. */
export const ApiKey = z
  .object({
    ...keyFields,
    lastUsedAt: InstantOutput.nullable().meta({
      description: "The start of the hour of the last request the key authenticated (to the hour); null: never used.",
    }),
  })
  .meta({ id: "ApiKey" });
export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeyList = z
  .object({ data: z.array(ApiKey).max(20) })
  .meta({ id: "ApiKeyList", description: "The owner's keys (never a secret), by kind then creation." });

/** The web app's key form (contract section 18): name, kind, read-only, expiry, networks. */
export const AppKeyCreateInput = z
  .strictObject({
    kind: KeyKind,
    name: KeyName.default("default"),
    readOnly: z.boolean().default(false).meta({ description: "A members key with members:read only." }),
    expiresInDays: z
      .literal(KEY_EXPIRY_DAYS)
      .nullable()
      .meta({ description: "7, 30, 90 or 365 days from now; null: never expires." }),
    allowedNetworks: AllowedNetworksInput.default([]),
  })
  .meta({ id: "AppKeyCreateInput" });

/** Repositories an organization analytics key is limited to (none: every repository). */
const RepositoriesInput = z
  .array(z.string().min(1).max(100))
  .max(100)
  .meta({ description: "Analytics keys only: the repositories the key may read (empty: every repository)." });

/** A members key cannot be limited to repositories (400 at `repositories`). */
const analyticsOnlyRepositories = (body: { kind: KeyKind; repositories: string[] }, ctx: z.RefinementCtx): void => {
  if (body.kind !== "analytics" && body.repositories.length > 0) {
    ctx.addIssue({ code: "custom", path: ["repositories"], message: "only an analytics key can be limited to repositories" });
  }
};

/** Control plane: `POST /internal/v1/organizations/{org}/api-keys`. */
export const OrgKeyCreateInput = z
  .strictObject({
    kind: KeyKind,
    name: KeyName,
    scopes: ScopesInput.optional(),
    repositories: RepositoriesInput.default([]),
    expiresAt,
    allowedNetworks: AllowedNetworksInput.default([]),
  })
  .superRefine((body, ctx) => {
    scopesOfKind(body.kind, body.scopes ?? [], ctx);
    analyticsOnlyRepositories(body, ctx);
  })
  .meta({ id: "OrgKeyCreateInput" });

/** The web app's form of an organization key. */
export const AppOrgKeyCreateInput = z
  .strictObject({
    kind: KeyKind,
    name: KeyName,
    readOnly: z.boolean().default(false),
    expiresInDays: z.literal(KEY_EXPIRY_DAYS).nullable(),
    allowedNetworks: AllowedNetworksInput.default([]),
    repositories: RepositoriesInput.default([]),
  })
  .superRefine(analyticsOnlyRepositories)
  .meta({ id: "AppOrgKeyCreateInput" });

const repositories = z.array(z.string().max(100)).max(100).meta({
  description: "The repositories the key is limited to, by folded name (empty: every repository).",
});

export const OrgApiKey = ApiKey.extend({ repositories }).meta({ id: "OrgApiKey" });
export const OrgApiKeyCreated = ApiKeyCreated.extend({ repositories }).meta({ id: "OrgApiKeyCreated" });
export const OrgApiKeyList = z
  .object({ data: z.array(OrgApiKey).max(50) })
  .meta({ id: "OrgApiKeyList", description: "The organization's keys (never a secret), by kind then creation." });
