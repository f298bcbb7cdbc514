import { notFound, unauthenticated } from "../lib/errors";
import { log } from "../lib/log";
import { parseBearer } from "./api-key";

/** A shorter ADMIN_TOKEN is refused: the control plane can create keys for anyone. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

const sha256 = async (text: string) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));

/**
 * The configured ADMIN_TOKEN. The `/internal/` tree exists only with one of at least 32
 * characters: 404 otherwise, with an error line naming the cause when it is too short.
 */
export function configuredAdminToken(env: Env): string {
  const expected = env.ADMIN_TOKEN;
  if (typeof expected !== "string" || expected === "") throw notFound();
  if (expected.length < ADMIN_TOKEN_MIN_LENGTH) {
    log.error(
      `ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters: /internal answers 404 until a longer one is set`,
    );
    throw notFound();
  }
  return expected;
}

/** The bearer token must equal `expected`, compared in constant time over fixed-length digests; 401 otherwise. */
export async function checkAdminToken(request: Request, expected: string): Promise<void> {
  const bearer = parseBearer(request.headers.get("Authorization"));
  if (bearer.kind !== "token") throw unauthenticated("An admin token is required: Authorization: Bearer <ADMIN_TOKEN>.");
  const [sent, wanted] = await Promise.all([sha256(bearer.token), sha256(expected)]);
  if (!crypto.subtle.timingSafeEqual(sent, wanted)) throw unauthenticated("Invalid admin token.");
}
