import type { KeyKind } from "../schemas/key-kind";
import type { Scope } from "./scopes";

/** The scopes a key of each kind carries (contract section 18): analytics reads, or member reads and writes. */
export const scopesOfKeyKind = (kind: KeyKind): Scope[] =>
  kind === "analytics" ? ["analytics:read"] : ["members:read", "members:write"];
