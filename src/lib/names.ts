/**
 * GitHub logins and repository names are ASCII and case-insensitive. Keys fold ASCII letters only:
 * `String.prototype.toLowerCase` would also fold look-alikes such as the Kelvin sign (U+212A → "k"),
 * so a name GitHub could never issue would alias a real organization. Such a name simply matches
 * nothing (contract section 5).
 */
export const foldName = (name: string): string => name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());

/**
 * The key of a repository by name, wherever one is stored or looked up (the organization's object,
 * D1's rows, the export's access): GitHub's repository names are case-insensitive, and every name
 * reaching a key has been checked against `GithubRepoName` (ASCII), so the fold is `foldName`'s.
 */
export const repoKey = (name: string): string => foldName(name);

/** Keys of a list of names (contract section 21's `repo` and `author` lists): folded, each once, sorted, so equal lists compare equal. */
export const nameKeyList = (names: readonly string[]): string[] => [...new Set(names.map(foldName))].sort();

/** The keys of a list of repository names (`repoKey` of each), each once, sorted. */
export const repoKeyList = (names: readonly string[]): string[] => [...new Set(names.map(repoKey))].sort();
