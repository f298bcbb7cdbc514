/**
 * Installation tokens, kept per isolate across requests (an Octokit built per request would ask
 * GitHub for a new token every time). Handed to `@octokit/auth-app` as its `cache`.
 *
 * Why a module-level map is safe: an isolate runs only this Worker's code, so nothing of another
 * account can read it; a token is a bearer secret valid for one installation for one hour and is
 * never written to storage or logs; the key holds the API URL, the App id and auth-app's own key
 * (installation id, plus any repository or permission scoping), so two Apps, two GitHub hosts or
 * two installations never share a token. Losing the map (a new isolate) only costs one token request.
 */

/** A token is not handed out when it expires within this margin, so no call starts with a dying token. */
export const TOKEN_EXPIRY_MARGIN_MS = 5 * 60_000;
/** auth-app's own default lifetime, used when the stored value carries no readable expiry. */
const FALLBACK_LIFETIME_MS = 59 * 60_000;
const MAX_ENTRIES = 1000;

const tokens = new Map<string, { value: string; expiresAt: number }>();

/** auth-app's cache interface; its `get` may answer nothing (the type says otherwise). */
export interface TokenCache {
  get(key: string): string;
  set(key: string, value: string): void;
}

/** The cache of one App on one GitHub host; `now` is injectable for tests of the expiry rule. */
export function tokenCache(scope: string, now: () => number = Date.now): TokenCache {
  return {
    get(key) {
      const entry = tokens.get(`${scope}|${key}`);
      if (entry && now() < entry.expiresAt - TOKEN_EXPIRY_MARGIN_MS) return entry.value;
      if (entry) tokens.delete(`${scope}|${key}`);
      return undefined as unknown as string;
    },
    set(key, value) {
      // auth-app stores "token|createdAt|expiresAt|…"; GitHub's expires_at is the truth.
      const expiresAt = Date.parse(value.split("|")[2] ?? "");
      if (tokens.size >= MAX_ENTRIES) {
        const oldest = tokens.keys().next().value;
        if (oldest !== undefined) tokens.delete(oldest);
      }
      tokens.set(`${scope}|${key}`, { value, expiresAt: Number.isFinite(expiresAt) ? expiresAt : now() + FALLBACK_LIFETIME_MS });
    },
  };
}
