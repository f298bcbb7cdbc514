// Secrets and benchmark-only variables are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Bearer token of the `/internal/` control plane. Unset: the control plane answers 404. */
    ADMIN_TOKEN?: string;
    /** The GitHub App's webhook secret. Unset: `POST /webhooks/github` answers 404. */
    GITHUB_WEBHOOK_SECRET?: string;
    /** The previous webhook secret, accepted too while a rotation is under way. */
    GITHUB_WEBHOOK_SECRET_PREVIOUS?: string;
    /** The GitHub App's private key (PEM, PKCS#1 or PKCS#8). Unset: sync with GitHub's API is off. */
    GITHUB_APP_PRIVATE_KEY?: string;
    /** "true" adds `X-Debug-Rows-Read` to analytics pages; set only by `npm run bench:analytics`. */
    DEBUG_ROWS_READ?: string;
    /** Test-only: a lower bound on the candidate pull requests one summary may read (default and ceiling 8,000,000; `analytics/summary.ts`). */
    SUMMARY_MAX_ROWS?: string;
    /** "true" offers "sign in as" the demo users (web app); set only by `npm start` and the browser tests, never in wrangler.toml. */
    DEV_SIGN_IN?: string;
    /** The GitHub App's OAuth client id and secret (web app sign-in). Unset: the sign-in button says what to configure. */
    GITHUB_CLIENT_ID?: string;
    GITHUB_CLIENT_SECRET?: string;
    /** The service's public origin (`https://HOST`): GitHub sign-in's `redirect_uri` is built from it, never from `Host`. */
    APP_URL?: string;
  }
}
interface Env {
  ADMIN_TOKEN?: string;
  GITHUB_WEBHOOK_SECRET?: string;
  GITHUB_WEBHOOK_SECRET_PREVIOUS?: string;
  GITHUB_APP_PRIVATE_KEY?: string;
  DEBUG_ROWS_READ?: string;
  SUMMARY_MAX_ROWS?: string;
  DEV_SIGN_IN?: string;
  GITHUB_CLIENT_ID?: string;
  GITHUB_CLIENT_SECRET?: string;
  APP_URL?: string;
}

/** Bottleneck's build without clustering, which the throttling plugin uses (`client.ts`); its types are the full build's. */
declare module "bottleneck/light.js" {
  import Bottleneck from "bottleneck";
  export default Bottleneck;
}
