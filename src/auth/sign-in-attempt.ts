/**
 * A GitHub sign-in attempt, from the routes' side: the attempt's object (`sign-in-attempt-object.ts`)
 * keeps the PKCE verifier between the redirect and the callback, and gives it back at most once.
 * (The class is apart so that this module loads outside workerd, for the OpenAPI generation.)
 */

/** How long a person has at GitHub before the attempt expires. */
export const SIGN_IN_ATTEMPT_MS = 10 * 60 * 1000;

const attemptStub = (env: Env, state: string) => env.SIGN_IN_ATTEMPTS.getByName(state);

/** Starts an attempt for `state`, keeping its PKCE verifier until the callback. */
export const beginSignInAttempt = (env: Env, state: string, verifier: string, now: number): Promise<void> =>
  attemptStub(env, state).begin(verifier, now);

/** The attempt's verifier, at most once per state. */
export const consumeSignInAttempt = (env: Env, state: string, now: number): Promise<string | null> =>
  attemptStub(env, state).consume(now);
