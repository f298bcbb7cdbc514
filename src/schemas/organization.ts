import { z } from "zod";
import { InstantInput, InstantOutput, LIST_CURSOR, OrgLogin, Role } from "./common";

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
    installationId: z.number().int().min(1),
    installedAt: InstantOutput,
    blocked: z.boolean(),
    plan: Plan,
    subscription: z.object({
      status: SubscriptionStatus,
      billedThroughService: z.boolean(),
      purchasedSeats: z.number().int().min(0),
    }),
  })
  .meta({ id: "Organization" });
export type Organization = z.infer<typeof Organization>;

/** One entry of `GET /api/v1/organizations` (contract section 8). */
export const OrganizationEntry = z
  .object({
    org: OrgLogin.meta({ description: "The organization's login as registered." }),
    plan: Plan,
    role: Role,
    seat: z.boolean(),
    canManageSeats: z.boolean().meta({
      description: "An admin of an unblocked organization with an active Team or Pro subscription billed through the service.",
    }),
    canManageRoles: z.boolean().meta({ description: "Same condition as canManageSeats." }),
    canExportAnalytics: z.boolean().meta({ description: "A member of an unblocked Pro organization." }),
  })
  .meta({ id: "OrganizationEntry" });
export type OrganizationEntry = z.infer<typeof OrganizationEntry>;

export const OrganizationPage = z
  .object({
    data: z.array(OrganizationEntry).max(100),
    nextCursor: z
      .string()
      .max(255)
      .regex(LIST_CURSOR)
      .nullable()
      .meta({ description: "Pass back as cursor; null on the last page." }),
  })
  .meta({ id: "OrganizationPage" });
export type OrganizationPage = z.infer<typeof OrganizationPage>;
