import { AppError, isAppError } from "../lib/errors";

/**
 * Requests that fail authentication (and starts of a sign-in) count against nobody's quota; they are throttled per client
 * address (an IPv6 address by its /64) with the Workers Rate Limiting binding `AUTH_FAILURES` (approximate and per location by
 * design, see docs/api.md). Once the binding says an address is over, this isolate refuses that
 * address for the rest of the period before any key lookup, so a flood of forged keys cannot buy
 * unlimited KV reads.
 */
const FLOOD_PERIOD_MS = 60_000;
const throttled = new Map<string, number>();

const clientAddress = (request: Request): string => throttleKey(request.headers.get("CF-Connecting-IP") ?? "unknown");

/**
 * Whom a failure counts against: an IPv4 address, or an IPv6 address's /64 (one subscriber gets a
 * whole /64 and can rotate through it at will). Anything unparsable counts as itself.
 */
export function throttleKey(address: string): string {
  const bare = address.trim().split("%")[0]?.toLowerCase() ?? "";
  if (!bare.includes(":")) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(bare);
  if (mapped?.[1]) return mapped[1];
  const halves = bare.split("::");
  if (halves.length > 2) return address;
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return address;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return address;
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

const tooMany = (retryAfterSeconds: number, what = "failed authentications") =>
  new AppError("rate_limited", `Too many ${what} from this address. Retry later.`, {
    headers: { "Retry-After": String(Math.max(1, retryAfterSeconds)) },
  });

/** 429 at once for an address this isolate already knows to be flooding. */
export function refuseThrottledClient(request: Request, now: number): void {
  const until = throttled.get(clientAddress(request));
  if (until === undefined) return;
  if (until > now) throw tooMany(Math.ceil((until - now) / 1000));
  throttled.delete(clientAddress(request));
}

/** Counts one request against its address; false when the address is over its limit (and is then refused here for the period). */
async function allowedOnce(request: Request, env: Env, now: number): Promise<boolean> {
  const address = clientAddress(request);
  let allowed = true;
  try {
    allowed = (await env.AUTH_FAILURES.limit({ key: address })).success;
  } catch {
    // The limiter is a defence, not a dependency: if it fails, the request stands.
  }
  if (allowed) return true;
  if (throttled.size > 10_000) throttled.clear();
  throttled.set(address, now + FLOOD_PERIOD_MS);
  return false;
}

/** Records one failed authentication; the 401 becomes a 429 when the address is over its limit. */
export async function countFailedAuthentication(request: Request, env: Env, failure: unknown, now: number): Promise<never> {
  // Only a refused credential counts; a store that failed is not the client's doing.
  if (!isAppError(failure) || failure.code !== "unauthenticated") throw failure;
  if (await allowedOnce(request, env, now)) throw failure;
  throw tooMany(FLOOD_PERIOD_MS / 1000);
}

/**
 * Starting a sign-in stores an attempt before anyone is known (contract section 13): each start
 * counts against its address exactly as a failed authentication does, so a flood of starts cannot
 * fill storage. Throws the 429 (`rate_limited`, `Retry-After`) when the address is over.
 */
export async function countSignInStart(request: Request, env: Env, now: number): Promise<void> {
  refuseThrottledClient(request, now);
  if (!(await allowedOnce(request, env, now))) throw tooMany(FLOOD_PERIOD_MS / 1000, "sign-in attempts");
}
