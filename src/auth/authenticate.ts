import { callDurable } from "../durable/call";
import { userStub } from "../durable/stubs";
import type { KeyVerdict } from "../durable/user";
import { unauthenticated } from "../http/errors";
import type { User } from "../schemas/user";
import { hashApiKey, KEY_PREFIX, type KeyKind, parseApiKey, parseBearer } from "./api-key";
import { KeyRecord, keyRecordKey } from "./key-record";

const INVALID_KEY = "Invalid, expired or revoked API key.";

/**
 * The authentication step both public interfaces use. Shape and checksum are checked without
 * I/O; KV maps the hash to its record; the owner's Durable Object gives the verdict. Unknown,
 * revoked, regenerated-away, expired and blocked-owner keys all get the same 401.
 */
export async function authenticate(request: Request, env: Env, kind: KeyKind): Promise<User> {
  const bearer = parseBearer(request.headers.get("Authorization"));
  if (bearer.kind === "missing") throw unauthenticated("Missing bearer token: send Authorization: Bearer <key>.");
  if (bearer.kind === "malformed") throw unauthenticated("The Authorization header must use the Bearer scheme.");

  const key = parseApiKey(bearer.token);
  if (key.kind === "malformed") throw unauthenticated(INVALID_KEY);
  if (key.keyKind !== kind) {
    throw unauthenticated(
      `This endpoint needs a ${kind === "analytics" ? "Analytics" : "Members"} API key (${KEY_PREFIX[kind]}...).`,
    );
  }

  const raw = await env.API_KEYS.get(keyRecordKey(await hashApiKey(key.value)), "json");
  const record = KeyRecord.safeParse(raw);
  if (!record.success || record.data.kind !== kind) throw unauthenticated(INVALID_KEY);
  const now = Date.now();
  if (record.data.expiresAt !== null && record.data.expiresAt <= now) throw unauthenticated(INVALID_KEY);

  const { userId, keyId } = record.data;
  const verdict = await callDurable<KeyVerdict>(() => userStub(env, userId).verifyKey(kind, keyId, now), {
    idempotent: true,
  });
  if (!verdict.valid) throw unauthenticated(INVALID_KEY);
  return verdict.user;
}
