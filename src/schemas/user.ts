import { z } from "zod";
import { GithubLogin, GithubUserId, GithubUserLogin, InstantOutput, instantInput } from "./common";
import { KeyKind } from "./key-kind";

/** Control plane: `PUT /internal/v1/users/{githubUserId}`. */
export const UserInput = z
  .strictObject({ githubLogin: GithubUserLogin, blocked: z.boolean().default(false) })
  .meta({ id: "UserInput" });
export type UserInput = z.output<typeof UserInput>;

export const User = z.object({ githubUserId: GithubUserId, githubLogin: GithubLogin, blocked: z.boolean() }).meta({ id: "User" });
export type User = z.infer<typeof User>;

/** Control plane: `POST /internal/v1/users/{githubUserId}/api-keys`. */
export const ApiKeyCreateInput = z
  .strictObject({
    kind: KeyKind,
    expiresAt: instantInput("2030-12-31T23:59:59.000Z").nullable().default(null).meta({
      description: "When the key stops working: a future date-time, at most 9999-12-31T23:59:59.999Z; null (default) for never.",
      example: "2030-12-31T23:59:59.000Z",
    }),
  })
  .meta({ id: "ApiKeyCreateInput" });
export type ApiKeyCreateInput = z.output<typeof ApiKeyCreateInput>;

export const ApiKeyCreated = z
  .object({
    key: z.string().max(44).meta({ description: "The plaintext key. Shown once; only its SHA-256 hash is stored." }),
    keyId: z.string().max(36).meta({ format: "uuid" }),
    kind: KeyKind,
    createdAt: InstantOutput,
    expiresAt: InstantOutput.nullable(),
  })
  .meta({ id: "ApiKeyCreated" });
export type ApiKeyCreated = z.infer<typeof ApiKeyCreated>;

/** One kind's current key as the app lists it (contract section 13): never the key itself. */
export const ApiKeySummary = z
  .object({
    createdAt: InstantOutput,
    expiresAt: InstantOutput.nullable().meta({ description: "Null: never expires. In the past: expired." }),
    lastUsedAt: InstantOutput.nullable().meta({
      description: "The start of the hour of the last request the key authenticated (to the hour); null: never used.",
    }),
  })
  .meta({ id: "ApiKeySummary" });
export type ApiKeySummary = z.infer<typeof ApiKeySummary>;
