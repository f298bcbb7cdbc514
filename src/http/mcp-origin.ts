import { serviceOrigin } from "../auth/oauth-server";
import { AppError } from "../lib/errors";
import type { RequestContext } from "./route";

/**
 * The Origin rule of `/mcp` (contract section 19; DNS rebinding, as the MCP transport requires): a
 * request without `Origin` (server-side and desktop clients) passes; one with an `Origin` passes
 * only from the service's own origin, a loopback origin, or one listed in `MCP_ALLOWED_ORIGINS`
 * (comma-separated, for browser-based clients). Checked before the credential, so a refused
 * request counts against nothing.
 */

const LOOPBACK = /^https?:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/i;

/** Whether an `Origin` header value may reach `/mcp`. */
export function mcpOriginAllowed(origin: string, own: readonly string[], configured: string | undefined): boolean {
  const normal = origin.trim().toLowerCase();
  if (LOOPBACK.test(normal)) return true;
  if (own.some((o) => o.toLowerCase() === normal)) return true;
  const listed = (configured ?? "")
    .split(",")
    .map((o) => o.trim().toLowerCase().replace(/\/+$/, ""))
    .filter((o) => o !== "");
  return listed.includes(normal);
}

export function requireMcpOrigin(rc: RequestContext): void {
  const origin = rc.request.headers.get("Origin");
  if (origin === null) return;
  const own = [serviceOrigin(rc.env, rc.url), rc.url.origin];
  if (mcpOriginAllowed(origin, own, rc.env.MCP_ALLOWED_ORIGINS)) return;
  throw new AppError(
    "origin_not_allowed",
    `Origin ${origin.slice(0, 200)} may not call /mcp: add it to MCP_ALLOWED_ORIGINS to allow a browser-based client.`,
  );
}
