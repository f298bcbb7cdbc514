/** Each user's Durable Object (the key authority) is named by the GitHub user id. */
export const userStub = (env: Env, githubUserId: string) => env.USERS.getByName(githubUserId);
