import { foldName } from "../lib/names";

/**
 * Where each organization's Durable Object lives: named by the lower-cased login (GitHub logins
 * are case-insensitive).
 */
export const orgKey = (login: string): string => foldName(login);

export const organizationStub = (env: Env, login: string) => env.ORGANIZATIONS.getByName(orgKey(login));
