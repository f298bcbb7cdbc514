/**
 * Where each Durable Object lives: organizations by lower-cased login (GitHub logins are
 * case-insensitive), users by GitHub user id.
 */
export const orgKey = (login: string): string => login.toLowerCase();

export const organizationStub = (env: Env, login: string) => env.ORGANIZATIONS.getByName(orgKey(login));

export const userStub = (env: Env, githubUserId: string) => env.USERS.getByName(githubUserId);
