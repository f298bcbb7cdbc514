import { z } from "zod";
import { GithubLogin, GithubUserId, Role } from "./common";

/** Control plane: `PUT /internal/v1/organizations/{org}/members/{githubUserId}` (sync, no guards). */
export const MemberInput = z
  .strictObject({
    githubLogin: GithubLogin,
    workEmail: z
      .string()
      .min(3)
      .max(320)
      .regex(/^[^\s@]+@[^\s@]+$/, "must be an e-mail address"),
    role: Role,
    seat: z.boolean(),
    isBot: z.boolean(),
  })
  .meta({ id: "MemberInput" });
export type MemberInput = z.output<typeof MemberInput>;

export const Member = z
  .object({
    githubUserId: GithubUserId,
    githubLogin: GithubLogin,
    workEmail: z.string().max(320).optional().meta({
      format: "email",
      description:
        "Work e-mail address of the member. Omitted while unknown: a member GitHub announced (webhook) has none until a sync provides it.",
    }),
    role: Role,
    seat: z.boolean(),
    isBot: z.boolean(),
  })
  .meta({ id: "Member" });
export type Member = z.infer<typeof Member>;

/**
 * `PATCH /api/v1/organizations/{org}/members/{githubUserId}`: one or both guarded pairs.
 * Both pairs in one request are applied atomically.
 */
export const MemberPatch = z
  .strictObject({
    seat: z.boolean().optional(),
    expectedSeat: z.boolean().optional().meta({ description: "The seat value of your latest read." }),
    role: Role.optional(),
    expectedRole: Role.optional().meta({ description: "The role value of your latest read." }),
  })
  .superRefine((body, ctx) => {
    const pair = (field: "seat" | "role", guard: "expectedSeat" | "expectedRole") => {
      if (body[field] !== undefined && body[guard] === undefined) {
        ctx.addIssue({ code: "custom", path: [guard], message: `is required with ${field}` });
      }
      if (body[guard] !== undefined && body[field] === undefined) {
        ctx.addIssue({ code: "custom", path: [field], message: `is required with ${guard}` });
      }
    };
    pair("seat", "expectedSeat");
    pair("role", "expectedRole");
    if (
      body.seat === undefined &&
      body.expectedSeat === undefined &&
      body.role === undefined &&
      body.expectedRole === undefined
    ) {
      ctx.addIssue({ code: "custom", path: [], message: "send seat with expectedSeat, role with expectedRole, or both pairs" });
    }
  })
  .meta({
    id: "MemberPatch",
    description: "seat with expectedSeat, role with expectedRole, or both pairs (applied atomically). No other fields.",
    // The pairing rules above, for the document: each pair complete, at least one pair.
    override: {
      dependentRequired: { seat: ["expectedSeat"], expectedSeat: ["seat"], role: ["expectedRole"], expectedRole: ["role"] },
      anyOf: [{ required: ["seat", "expectedSeat"] }, { required: ["role", "expectedRole"] }],
    },
  });
export type MemberPatch = z.output<typeof MemberPatch>;

const MemberState = z.object({ seat: z.boolean(), role: Role });

export const MemberUpdateResult = z
  .object({
    githubUserId: GithubUserId,
    before: MemberState,
    after: MemberState,
    changed: z.boolean(),
    availableSeats: z
      .number()
      .int()
      .meta({ description: "Purchased seats minus members holding one, after the change; never below 0." }),
    purchasedQuantityChanged: z.boolean().meta({ description: "Always false: this operation never buys seats." }),
  })
  .meta({ id: "MemberUpdateResult" });
export type MemberUpdateResult = z.infer<typeof MemberUpdateResult>;
