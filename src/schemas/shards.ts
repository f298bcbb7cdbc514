import { z } from "zod";

/** Analytics shards (contract section 16): `GET /internal/v1/shards` and an organization's move. */

const ShardName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, "must be a D1 binding name")
  .meta({ description: "A D1 binding listed in ANALYTICS_SHARDS.", example: "ANALYTICS_2", override: { maxLength: 63 } });

export const ShardList = z
  .object({
    shards: z
      .array(
        z.object({
          shard: ShardName,
          organizations: z.number().int().min(0).meta({ description: "Organizations placed on the shard." }),
          pullRequests: z.number().int().min(0).meta({ description: "Pull request rows the shard stores." }),
        }),
      )
      .max(1024),
  })
  .meta({ id: "ShardList" });

export const MoveInput = z.strictObject({ shard: ShardName }).meta({ id: "MoveInput" });

export const MoveStatus = z
  .object({
    shard: ShardName.meta({ description: "The shard the organization's analytics are read from now." }),
    move: z
      .object({
        org: z.string().max(39),
        from: ShardName,
        to: ShardName,
        state: z.enum(["copying", "catching_up", "switched", "done", "failed"]),
        rowsCopied: z.number().int().min(0),
        lastError: z
          .string()
          .max(500)
          .nullable()
          .meta({ description: 'Why it failed ("cancelled" for a cancel), or what healed it; null when nothing happened.' }),
      })
      .nullable()
      .meta({ description: "The running or last move; null when none ever ran." }),
  })
  .meta({ id: "MoveStatus" });
