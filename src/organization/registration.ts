import { claimOf } from "../directory/identity";
import type { OrganizationInput } from "../schemas/organization";
import type { InstallationRow } from "./schema";

/**
 * The control plane's registration of an installation, plan and subscription as a plain function.
 * The installation this object holds is its own whatever login the call names: billing and
 * subscription change, the login does not (only GitHub's renames change it; a call naming an old
 * login, or a new one not applied yet, must neither move it nor copy the organization). An
 * installation registered for another login is `taken` (left alone); with none, the organization
 * is created only when `create` says the caller checked the directory (else `absent`).
 */
export type Registration = { kind: "store"; row: InstallationRow } | { kind: "absent" } | { kind: "taken" };

export function decideRegistration(
  existing: InstallationRow | undefined,
  at: { login: string; home: string },
  input: OrganizationInput,
  create: boolean,
): Registration {
  const same = existing !== undefined && existing.installationId === input.installationId;
  const claim = same ? "own" : claimOf(existing, [at.login]);
  if (claim === "other") return { kind: "taken" };
  if (claim === "absent" && !create) return { kind: "absent" };
  return {
    kind: "store",
    row: {
      id: 1,
      login: same ? existing.login : at.login,
      homeKey: existing?.homeKey ?? at.home,
      accountId: existing?.accountId ?? null,
      installationId: input.installationId,
      installedAt: input.installedAt,
      blocked: input.blocked,
      plan: input.plan,
      subscriptionStatus: input.subscription.status,
      billedThroughService: input.subscription.billedThroughService,
      purchasedSeats: input.subscription.purchasedSeats,
      installed: true,
      // GitHub's suspensions keep their order across a registration by billing.
      suspensionVersion: existing?.suspensionVersion ?? null,
    },
  };
}
