import { parseBearer } from "../auth/api-key";
import { notFound, unauthenticated } from "../lib/errors";

const sha256 = async (text: string) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));

/**
 * Guards the whole `/internal/` tree. Without an ADMIN_TOKEN secret the tree does not exist (404);
 * otherwise the bearer token must equal it, compared in constant time over fixed-length digests.
 */
export async function requireAdmin(request: Request, env: Env): Promise<void> {
  const expected = env.ADMIN_TOKEN;
  if (typeof expected !== "string" || expected === "") throw notFound();
  const bearer = parseBearer(request.headers.get("Authorization"));
  if (bearer.kind !== "token") throw unauthenticated("An admin token is required: Authorization: Bearer <ADMIN_TOKEN>.");
  const [sent, wanted] = await Promise.all([sha256(bearer.token), sha256(expected)]);
  if (!crypto.subtle.timingSafeEqual(sent, wanted)) throw unauthenticated("Invalid admin token.");
}
