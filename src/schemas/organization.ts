import { z } from "zod";
import { InstantInput, InstantOutput, OrgLogin } from "./common";

export const Plan = z.enum(["free", "team", "pro"]);
export const SubscriptionStatus = z.enum(["active", "past_due", "canceled", "none"]);

const Subscription = z.strictObject({
  status: SubscriptionStatus,
  billedThroughService: z.boolean(),
  purchasedSeats: z.number().int().min(0).max(1_000_000),
});

/** Control plane: `PUT /internal/v1/organizations/{org}`. */
export const OrganizationInput = z
  .strictObject({
    installationId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    installedAt: InstantInput,
    blocked: z.boolean().default(false),
    plan: Plan,
    subscription: Subscription,
  })
  .meta({ id: "OrganizationInput" });
export type OrganizationInput = z.output<typeof OrganizationInput>;

export const Organization = z
  .object({
    login: OrgLogin,
    installationId: z.number().int(),
    installedAt: InstantOutput,
    blocked: z.boolean(),
    plan: Plan,
    subscription: z.object({
      status: SubscriptionStatus,
      billedThroughService: z.boolean(),
      purchasedSeats: z.number().int(),
    }),
  })
  .meta({ id: "Organization" });
export type Organization = z.infer<typeof Organization>;
