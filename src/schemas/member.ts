import { z } from "zod";
import { EmailAddress, GithubLogin, GithubUserId, GithubUserLogin, InstantOutput, LIST_CURSOR, Role } from "./common";

/** Control plane: `PUT /internal/v1/organizations/{org}/members/{githubUserId}` (sync, no guards). */
export const MemberInput = z
  .strictObject({
    githubLogin: GithubUserLogin,
    workEmail: EmailAddress,
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
    lastActivityAt: InstantOutput.nullable().meta({
      description:
        "The newest creation, merge or completed review of a pull request the member authored in this organization " +
        "(authors matched by login, case-insensitively); null when none is known. An older event never moves it back.",
    }),
  })
  .meta({ id: "Member" });
export type Member = z.infer<typeof Member>;

const patchShape = {
  seat: z.boolean().optional(),
  expectedSeat: z.boolean().optional().meta({ description: "The seat value of your latest read." }),
  role: Role.optional(),
  expectedRole: Role.optional().meta({ description: "The role value of your latest read." }),
};

type PatchFields = { seat?: boolean; expectedSeat?: boolean; role?: Role; expectedRole?: Role };

/** Section 4's body rules: each pair complete, at least one pair. Paths are relative to the checked object. */
function checkPairs(body: PatchFields, ctx: z.RefinementCtx): void {
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
  if (body.seat === undefined && body.expectedSeat === undefined && body.role === undefined && body.expectedRole === undefined) {
    ctx.addIssue({ code: "custom", path: [], message: "send seat with expectedSeat, role with expectedRole, or both pairs" });
  }
}

type JsonSchema = Record<string, unknown> & { properties?: Record<string, unknown> };

/**
 * The pairing rules above, for the documents: a `oneOf` of three closed objects (the seat pair,
 * the role pair, both pairs), each also naming the other pair's fields as absent (`false`). Code
 * generators turn `required`-only branches into `unknown` (any body compiles); closed branches
 * become a union that refuses a half pair or a stray field at compile time
 * (examples/client/invalid-bodies.ts). `also` are fields every branch carries (the batch's member).
 */
const pairsOverride =
  (also: readonly string[] = []) =>
  ({ jsonSchema }: { jsonSchema: JsonSchema }) => {
    const properties = jsonSchema.properties ?? {};
    const pick = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, properties[name]]));
    const absent = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, false]));
    const branch = (title: string, fields: readonly string[], without: readonly string[]) => ({
      title,
      type: "object",
      properties: { ...pick([...also, ...fields]), ...absent(without) },
      required: [...also, ...fields],
      additionalProperties: false,
    });
    const seatPair = ["seat", "expectedSeat"];
    const rolePair = ["role", "expectedRole"];
    for (const key of Object.keys(jsonSchema)) if (key !== "description" && key !== "id") delete jsonSchema[key];
    jsonSchema.oneOf = [
      branch("Seat change", seatPair, rolePair),
      branch("Role change", rolePair, seatPair),
      branch("Seat and role change", [...seatPair, ...rolePair], []),
    ];
  };

/**
 * `PATCH /api/v1/organizations/{org}/members/{githubUserId}`: one or both guarded pairs.
 * Both pairs in one request are applied atomically.
 */
export const MemberPatch = z.strictObject(patchShape).superRefine(checkPairs).meta({
  id: "MemberPatch",
  description: "seat with expectedSeat, role with expectedRole, or both pairs (applied atomically). No other fields.",
  override: pairsOverride(),
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
      .min(0)
      .meta({ description: "Purchased seats minus members holding one, after the change; never below 0." }),
    purchasedQuantityChanged: z.boolean().meta({ description: "Always false: this operation never buys seats." }),
  })
  .meta({ id: "MemberUpdateResult" });
export type MemberUpdateResult = z.infer<typeof MemberUpdateResult>;

/** The most changes one batch PATCH may carry (contract section 8). */
export const MAX_BATCH_CHANGES = 100;

/** One change of a batch: the single PATCH body plus the member it is for. */
export const BatchChange = z
  .strictObject({ githubUserId: GithubUserId, ...patchShape })
  .superRefine(checkPairs)
  .meta({
    id: "MemberChange",
    description: "githubUserId, and seat with expectedSeat, role with expectedRole, or both pairs. No other fields.",
    override: pairsOverride(["githubUserId"]),
  });

/** `PATCH /api/v1/organizations/{org}/members`: 1 to 100 changes, no member twice, all or nothing. */
export const MemberBatchPatch = z
  .strictObject({
    changes: z
      .array(BatchChange)
      .min(1, "must hold 1 to 100 changes")
      .max(MAX_BATCH_CHANGES, "must hold 1 to 100 changes")
      .meta({ description: "Applied all or nothing, in one transaction; no member twice." }),
  })
  .superRefine((body, ctx) => {
    const seen = new Map<string, number>();
    body.changes.forEach((change, i) => {
      const first = seen.get(change.githubUserId);
      if (first === undefined) seen.set(change.githubUserId, i);
      else
        ctx.addIssue({ code: "custom", path: ["changes", i, "githubUserId"], message: `repeats changes.${first}.githubUserId` });
    });
  })
  .meta({ id: "MemberBatchPatch" });
export type MemberBatchPatch = z.output<typeof MemberBatchPatch>;

export const MemberBatchResult = z
  .object({
    results: z.array(MemberUpdateResult).max(MAX_BATCH_CHANGES).meta({ description: "One result per change, in request order." }),
    availableSeats: z
      .number()
      .int()
      .min(0)
      .meta({ description: "Purchased seats minus members holding one, after the batch; never below 0." }),
  })
  .meta({ id: "MemberBatchResult" });

export const SeatSummary = z
  .object({
    purchased: z.number().int().min(0),
    used: z.number().int().min(0).meta({ description: "Members holding a seat (may exceed purchased after a sync)." }),
    available: z.number().int().min(0).meta({ description: "purchased minus used, never below 0." }),
  })
  .meta({ id: "SeatSummary" });
export type SeatSummary = z.infer<typeof SeatSummary>;

export const MemberPage = z
  .object({
    data: z.array(Member).max(100),
    nextCursor: z
      .string()
      .max(2048)
      .regex(LIST_CURSOR)
      .nullable()
      .meta({ description: "Pass back as cursor with the same filters; null on the last page." }),
    seats: SeatSummary,
  })
  .meta({ id: "MemberPage" });
export type MemberPage = z.infer<typeof MemberPage>;
