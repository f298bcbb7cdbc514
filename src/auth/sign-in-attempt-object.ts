import { DurableObject } from "cloudflare:workers";
import { SIGN_IN_ATTEMPT_MS } from "./sign-in-attempt";

/**
 * One GitHub sign-in attempt between the redirect to GitHub and the callback (contract section 13):
 * the PKCE verifier, kept on the server, and used at most once. One object per attempt, named by
 * the attempt's `state`, so a replayed callback (same state, same or another code) finds nothing:
 * the object is the strongly consistent "already used" answer that a cookie alone cannot give.
 * Storage is the object's synchronous KV (no table, no migration); an alarm removes attempts nobody
 * came back from.
 */

interface Attempt {
  verifier: string;
  expiresAt: number;
}

export class SignInAttemptObject extends DurableObject<Env> {
  /** Records the attempt's verifier; a second `begin` for the same state keeps the first. */
  async begin(verifier: string, now: number): Promise<void> {
    if (this.ctx.storage.kv.get<Attempt>("attempt") !== undefined) return;
    this.ctx.storage.kv.put<Attempt>("attempt", { verifier, expiresAt: now + SIGN_IN_ATTEMPT_MS });
    await this.ctx.storage.setAlarm(now + SIGN_IN_ATTEMPT_MS);
  }

  /** The verifier, once: the attempt is gone afterwards. Null when it was used, expired, or never made. */
  async consume(now: number): Promise<string | null> {
    const attempt = this.ctx.storage.kv.get<Attempt>("attempt");
    if (attempt === undefined) return null;
    await this.ctx.storage.deleteAll();
    return attempt.expiresAt > now ? attempt.verifier : null;
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
