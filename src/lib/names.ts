/**
 * GitHub logins and repository names are ASCII and case-insensitive. Keys fold ASCII letters only:
 * `String.prototype.toLowerCase` would also fold look-alikes such as the Kelvin sign (U+212A → "k"),
 * so a name GitHub could never issue would alias a real organization. Such a name simply matches
 * nothing (contract section 5).
 */
export const foldName = (name: string): string => name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
