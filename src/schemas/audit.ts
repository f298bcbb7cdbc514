import { z } from "zod";
import { GithubLogin, GithubUserId, InstantOutput, LIST_CURSOR, Role } from "./common";

const State = z.object({ seat: z.boolean(), role: Role });

export const AuditAction = z.enum(["member.added", "member.updated", "member.removed"]);
export type AuditAction = z.infer<typeof AuditAction>;

export const AuditSource = z
  .enum(["api", "sync", "github"])
  .meta({ description: "api: a member PATCH; sync: the control plane; github: a GitHub webhook." });
export type AuditSource = z.infer<typeof AuditSource>;

export const AuditActor = z
  .object({ githubUserId: GithubUserId, githubLogin: GithubLogin })
  .meta({ id: "AuditActor", description: "Who made the change; null when no person did (a sync)." });
export type AuditActor = z.infer<typeof AuditActor>;

/** One entry of `GET /api/v1/organizations/{org}/audit-log` (contract section 8). */
export const AuditEntry = z
  .object({
    id: z.string().max(20).meta({ description: "Unique within the organization; larger is newer.", example: "42" }),
    at: InstantOutput,
    action: AuditAction,
    actor: AuditActor.nullable(),
    source: AuditSource,
    githubUserId: GithubUserId.meta({ description: "The member the entry is about." }),
    githubLogin: GithubLogin.nullable().meta({
      description: "That member's login as the organization knows it now; null once the member has left the organization.",
    }),
    before: State.nullable().meta({ description: "null for member.added." }),
    after: State.nullable().meta({ description: "null for member.removed." }),
    correlationId: z.string().max(128).meta({ description: "The X-Correlation-Id of the request that made the change." }),
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
      .meta({ description: "Pass back as cursor with the same filters (it is bound to them); null on the last page." }),
  })
  .meta({ id: "AuditPage" });
export type AuditPage = z.infer<typeof AuditPage>;
