// Secrets and benchmark-only variables are not in wrangler.jsonc, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Bearer token of the `/internal/` control plane. Unset: the control plane answers 404. */
    ADMIN_TOKEN?: string;
    /** "true" adds `X-Debug-Rows-Read` to analytics pages; set only by `npm run bench:analytics`. */
    DEBUG_ROWS_READ?: string;
  }
}
interface Env {
  ADMIN_TOKEN?: string;
  DEBUG_ROWS_READ?: string;
}
