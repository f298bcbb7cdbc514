import { z } from "zod";
import { AppError } from "../lib/errors";
import type { KeyKind } from "../schemas/key-kind";
import { SCOPES, type Scope } from "./scopes";

/**
 * Which scopes a key of each kind may carry (contract section 18), and the one check of a scope,
 * used by the REST routes (each declares the scope it needs) and by the MCP tools (the scopes pick
 * the tools listed and run).
 */

export const ScopeSchema = z.enum(SCOPES).meta({
  id: "Scope",
  description:
    "analytics:read (analytics keys); members:read (read members, organizations, the audit log) and members:write " +
    "(PATCH, batch PATCH) for members keys.",
});

/** The scopes a key of `kind` may carry. */
export const KIND_SCOPES: Record<KeyKind, readonly Scope[]> = {
  analytics: ["analytics:read"],
  members: ["members:read", "members:write"],
};

/** A key's scopes when none are sent: everything its kind allows. */
export const defaultScopes = (kind: KeyKind): Scope[] => [...KIND_SCOPES[kind]];

/** A members key made read-only: `members:read` alone. */
export const readOnlyScopes = (kind: KeyKind): Scope[] => (kind === "members" ? ["members:read"] : defaultScopes(kind));

/** Scopes in the order of SCOPES, each once. */
export const sortScopes = (scopes: readonly Scope[]): Scope[] => SCOPES.filter((s) => scopes.includes(s));

/** 403 `insufficient_scope` unless the caller's scopes include `needed` (answered after 401, the network check and the quota). */
export function requireScope(scopes: readonly Scope[], needed: Scope): void {
  if (!scopes.includes(needed)) {
    throw new AppError("insufficient_scope", `This key lacks the ${needed} scope: it was created read-only.`);
  }
}
