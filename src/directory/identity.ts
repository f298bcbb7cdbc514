import { foldName } from "../lib/names";

/**
 * Organization identity as plain functions (facts in, decision out): the home keys a login may
 * live under, whether an organization's object is the one a call names, and where a chain of
 * renames ends. The object loads the facts and applies the decision in its transaction;
 * `resolve.ts` has the whole design. No `cloudflare:*` import: the unit tests run it on Node.
 */

/** An organization as a call names it: the object (home key) and the login the caller used. */
export interface OrgAddress {
  home: string;
  login: string;
}

/** The home of a login the directory does not name: the folded login. */
export const defaultHome = (login: string): string => foldName(login);

/**
 * The home of a login re-used while its folded key is another organization's home (`~` never
 * occurs in a GitHub login, so it is no login's default home).
 */
export const allocatedHome = (login: string, installationId: number): string => `${defaultHome(login)}~${installationId}`;

/**
 * Where the stray rows of a login an organization left wait until it gathers them (`held_logins`):
 * a key of the organization's own (`>` never occurs in a login or a home), so that no later owner
 * of the login can store rows there.
 */
export const heldKey = (loginKey: string, home: string): string => `${loginKey}>${home}`;

/** A login an organization left by a rename (`held_logins`): its stray rows to set apart (`to_hold`) or to gather (`held`). */
export interface Hold {
  seq: number;
  loginKey: string;
  /** The rename delivery that recorded it (its ledger key): only its consumer sets the rows apart. */
  deliveryKey: string;
  state: "to_hold" | "holding" | "held" | "done";
}

/** What an object knows of whom it belongs to: its installation row, if any. */
export interface Identity {
  login: string;
  accountId: number | null;
}

/**
 * What an object reports of its identity for the directory in D1 (`store.ts` `recordHome`): its
 * home, login, account id and installation, and `version`, the membership clock, raised by every
 * change of identity. The object's answers are checked against this shape where they are read.
 */
export type ReportedIdentity = Identity & { home: string; installationId: number; version: number };

/** The installation row's facts `claimOf` weighs: the identity, and which installation it holds. */
export interface Registration extends Identity {
  installationId: number;
  installed: boolean;
}

/**
 * Who a GitHub delivery says it comes from: the owner's account id and the installation that sent
 * it (the payload's `installation.id`, or an installation event's own id). Either is null in
 * messages queued before it was carried.
 */
export interface DeliveryOwner {
  accountId: number | null;
  installationId: number | null;
}

/**
 * Whose object this is, for a call naming `logins` (the requested login; a rename also names its
 * `from`) and, for a GitHub delivery, who sent it (`owner`):
 * - `absent`: no installation was ever registered here;
 * - `own`: the same account (when both ids are known), else the same login (case-insensitively)
 *   and, for a delivery naming an account id, the installation this object holds;
 * - `other`: another organization's (another account, another login, another installation).
 *
 * With the account id unknown here (registered by the control plane only, or installed before
 * account ids were kept) the login alone cannot tell this organization from another one holding
 * the login now (it took the login after this one was renamed away, the rename not applied yet):
 * taking its delivery would teach this object the other account id, give its admins this
 * organization's data and park this organization's own deliveries. The installation tells them
 * apart: GitHub names the sending installation in every delivery and an organization has one
 * installation at a time, so a delivery naming an account id is this organization's only when it
 * comes from the installation held here (which then teaches the account id); any other waits
 * (retried, then parked) or, an installation, gets a home of its own. A reinstall comes after the
 * old installation's deletion, which came from that installation and taught the account id.
 * Deliveries naming no account id (queued before account ids were carried) are decided by login,
 * and an installation of another id while this one is installed is another organization's.
 */
export function claimOf(identity: Registration | undefined, logins: readonly string[], owner: DeliveryOwner | null = null) {
  if (!identity) return "absent" as const;
  const accountId = owner?.accountId ?? null;
  const installationId = owner?.installationId ?? null;
  if (accountId !== null && identity.accountId !== null)
    return identity.accountId === accountId ? ("own" as const) : ("other" as const);
  const key = foldName(identity.login);
  if (!logins.some((login) => foldName(login) === key)) return "other" as const;
  if (accountId !== null) return installationId === identity.installationId ? ("own" as const) : ("other" as const);
  if (installationId !== null && identity.installed && identity.installationId !== installationId) return "other" as const;
  return "own" as const;
}

/** A rename that arrived but has not been applied: its `from` was not the current login then. */
export interface WaitingRename {
  id: number;
  fromKey: string;
  toLogin: string;
}

/**
 * Where a chain of renames leads from `login`: repeatedly the oldest waiting rename whose `from` is
 * the current login. Returns the final login and the renames used (each once).
 *
 * Why this converges: GitHub sends a rename only while the app is installed, so every rename of an
 * organization starts from a login it held after its installation. Seen as a walk over logins, the
 * renames are the edges of one trail starting at the installed login; whatever order they arrive
 * in, following unused edges from the current login can only stop at the trail's end once every
 * edge has arrived (every other login has as many renames out as in). Until then it stops at the
 * last login it can reach: the organization answers under a login it really had, never a later
 * one skipped over.
 */
export function followRenames(login: string, waiting: readonly WaitingRename[]): { login: string; used: number[] } {
  const left = [...waiting].sort((a, b) => a.id - b.id);
  const used: number[] = [];
  let current = login;
  for (;;) {
    const i = left.findIndex((w) => w.fromKey === foldName(current));
    if (i < 0) return { login: current, used };
    const [next] = left.splice(i, 1);
    if (!next) return { login: current, used };
    used.push(next.id);
    current = next.toLogin;
  }
}
