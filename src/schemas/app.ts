import { z } from "zod";
import { GithubLogin, GithubUserId } from "./common";
import { KeyKind } from "./key-kind";
import { ApiKeySummary } from "./user";

/** The web app's own bodies (contract section 13); the member and organization ones are the public API's. */

/** The expiries the app offers for a new key, in days (null: never). */
export const KEY_EXPIRY_DAYS = [7, 30, 90, 365] as const;
export type KeyExpiryDays = (typeof KEY_EXPIRY_DAYS)[number];

export const SessionInfo = z
  .object({
    user: z.object({ githubUserId: GithubUserId, githubLogin: GithubLogin }),
    csrfToken: z.string().max(64).meta({ description: "Send it back in X-CSRF-Token on every state-changing request." }),
  })
  .meta({ id: "SessionInfo" });

export const ApiKeyList = z
  .object({ analytics: ApiKeySummary.nullable(), members: ApiKeySummary.nullable() })
  .meta({ id: "ApiKeyList", description: "Each kind's current key (never the key itself), or null when there is none." });

export const AppKeyCreateInput = z
  .strictObject({
    kind: KeyKind,
    expiresInDays: z
      .literal(KEY_EXPIRY_DAYS)
      .nullable()
      .meta({ description: "7, 30, 90 or 365 days from now; null: never expires." }),
  })
  .meta({ id: "AppKeyCreateInput" });

export const KindPath = z.object({ kind: KeyKind });

export const DevUser = z.object({ githubUserId: GithubUserId, githubLogin: GithubLogin });

export const SignInOptions = z
  .object({
    devSignIn: z.boolean().meta({ description: "Whether local sign-in (DEV_SIGN_IN) is on." }),
    devUsers: z.array(DevUser).max(20).meta({ description: "The demo users local sign-in offers (empty when it is off)." }),
    github: z
      .boolean()
      .meta({ description: "Whether GitHub sign-in is configured (GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET and APP_URL)." }),
    githubSetup: z
      .string()
      .max(400)
      .nullable()
      .meta({ description: "What to set before GitHub sign-in works here, in words; null when it is configured." }),
  })
  .meta({ id: "SignInOptions" });

export const DevSignInInput = z.strictObject({ githubUserId: GithubUserId }).meta({ id: "DevSignInInput" });
