import { z } from "zod";
import { GithubLogin, GithubUserId, InstantOutput, LIST_CURSOR, Role } from "./common";
import { KeyKind } from "./key-kind";
import { SeatAssignment } from "./settings";

const State = z.object({ seat: z.boolean(), role: Role });
const SettingsState = z.object({ seatAssignment: SeatAssignment });

export const AuditAction = z.enum([
  "member.added",
  "member.updated",
  "member.removed",
  "settings.updated",
  "key.created",
  "key.regenerated",
  "key.revoked",
]);
export type AuditAction = z.infer<typeof AuditAction>;

export const AuditSource = z.enum(["api", "sync", "github", "automatic"]).meta({
  description:
    "api: a PATCH; sync: the control plane; github: a GitHub webhook; automatic: automatic seat assignment (actor null).",
});
export type AuditSource = z.infer<typeof AuditSource>;

export const AuditActor = z
  .object({ githubUserId: GithubUserId, githubLogin: GithubLogin })
  .meta({ id: "AuditActor", description: "Who made the change; null when no person did (a sync)." });
export type AuditActor = z.infer<typeof AuditActor>;

export const AuditKey = z
  .object({
    id: z
      .string()
      .max(24)
      .regex(/^key_[0-9A-Za-z]{20}$/)
      .meta({ example: "key_4fQ8nW2kLm9Xp3Rt7Vb1" }),
    name: z.string().max(64).meta({ example: "nightly job" }),
    kind: KeyKind.optional().meta({ description: "key.* entries: the organization key's kind." }),
    scopes: z
      .array(z.enum(["analytics:read", "members:read", "members:write"]))
      .max(3)
      .optional()
      .meta({ description: "key.* entries: the organization key's scopes." }),
  })
  .meta({ id: "AuditKey", description: "The key that made an API change; null for a change made otherwise (the app, a sync)." });
export type AuditKey = z.infer<typeof AuditKey>;

/** One entry of `GET /api/v1/organizations/{org}/audit-log` (contract section 8). */
export const AuditEntry = z
  .object({
    id: z.string().max(20).meta({ description: "Unique within the organization; larger is newer.", example: "42" }),
    at: InstantOutput,
    action: AuditAction,
    actor: AuditActor.nullable(),
    source: AuditSource,
    githubUserId: GithubUserId.nullable().meta({
      description: "The member the entry is about; null for settings.updated and key.* entries (about the organization).",
    }),
    before: z.union([State, SettingsState]).nullable().meta({
      description: "null for member.added and key.* entries; the settings ({seatAssignment}) for settings.updated.",
    }),
    after: z.union([State, SettingsState]).nullable().meta({
      description: "null for member.removed and key.* entries; the settings ({seatAssignment}) for settings.updated.",
    }),
    correlationId: z.string().max(128).meta({ description: "The X-Correlation-Id of the request that made the change." }),
    key: AuditKey.nullable(),
    ip: z
      .string()
      .max(64)
      .nullable()
      .meta({ description: "The caller's address (CF-Connecting-IP) for a change made over HTTP; null otherwise." }),
  })
  .meta({ id: "AuditEntry" });
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditPage = z
  .object({
    data: z.array(AuditEntry).max(100),
    nextCursor: z
      .string()
      .max(255)
      .regex(LIST_CURSOR)
      .nullable()
      .meta({ description: "Pass back as cursor with the same filter; null on the last page." }),
  })
  .meta({ id: "AuditPage" });
export type AuditPage = z.infer<typeof AuditPage>;
