/**
 * Who a request acts as, as one string the objects take where they take a caller's GitHub user id:
 * a person (their id: digits only) or an organization key (contract section 18), which acts in its
 * own organization only: `orgkey:<home key>:<key id>`. An organization's object recognises its own
 * keys by the home key and finds the key in its own storage; every other object finds no member.
 */

const ORG_KEY = "orgkey:";

export const orgKeyPrincipal = (home: string, keyId: string): string => `${ORG_KEY}${home}:${keyId}`;

/** The organization key a principal names, or null for a person. */
export function parseOrgKeyPrincipal(principal: string): { home: string; keyId: string } | null {
  if (!principal.startsWith(ORG_KEY)) return null;
  const rest = principal.slice(ORG_KEY.length);
  const colon = rest.lastIndexOf(":");
  if (colon <= 0) return null;
  return { home: rest.slice(0, colon), keyId: rest.slice(colon + 1) };
}
