// Secrets are not in wrangler.toml, so `wrangler types` cannot see them.
declare namespace Cloudflare {
  interface Env {
    /** Bearer token of the `/internal/` control plane. Unset: the control plane answers 404. */
    ADMIN_TOKEN?: string;
  }
}
interface Env {
  ADMIN_TOKEN?: string;
}
