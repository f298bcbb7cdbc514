/**
 * API key format (contract section 2): `cak_` or `cbk_`, then 40 base62 characters from a CSPRNG,
 * the last 6 of which are a CRC32 checksum of everything before them (GitHub-style). A typo or a
 * truncated paste is refused by the checksum before any storage is touched.
 */

import type { KeyKind } from "../schemas/key-kind";

export type { KeyKind } from "../schemas/key-kind";

export const KEY_PREFIX: Record<KeyKind, string> = { analytics: "cak_", members: "cbk_" };

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_LENGTH = 40;
const CHECKSUM_LENGTH = 6;
const RANDOM_LENGTH = BODY_LENGTH - CHECKSUM_LENGTH;
const KEY_PATTERN = /^(cak|cbk)_([0-9A-Za-z]{40})$/;

export type ParsedKey = { kind: "malformed" } | { kind: "key"; keyKind: KeyKind; value: string };

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) {
    crc = (CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(value: number, width: number): string {
  let out = "";
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, "0");
}

const checksum = (prefixAndRandom: string): string => base62(crc32(prefixAndRandom), CHECKSUM_LENGTH);

/** Uniform base62 characters from the CSPRNG (rejection sampling avoids modulo bias). */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const byte of bytes) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new key of the given kind; its plaintext leaves the service once, in the creation response. */
export function generateApiKey(kind: KeyKind): string {
  const head = KEY_PREFIX[kind] + randomBase62(RANDOM_LENGTH);
  return head + checksum(head);
}

/** A key's id (contract section 18): `key_` and 20 base62 characters; not a secret. */
export const generateKeyId = (): string => `key_${randomBase62(20)}`;

/** What tells a person's keys apart: the prefix and the last 4 characters (`cak_…a1B9`). */
export const keyHint = (key: string): string => `${key.slice(0, 4)}…${key.slice(-4)}`;

/** Checks shape and checksum. Never throws: any input is either a key or `malformed`. */
export function parseApiKey(input: unknown): ParsedKey {
  if (typeof input !== "string") return { kind: "malformed" };
  const m = KEY_PATTERN.exec(input);
  if (!m) return { kind: "malformed" };
  const head = input.slice(0, input.length - CHECKSUM_LENGTH);
  if (checksum(head) !== input.slice(-CHECKSUM_LENGTH)) return { kind: "malformed" };
  return { kind: "key", keyKind: m[1] === "cak" ? "analytics" : "members", value: input };
}

/** Keys are stored and looked up only by this hash (hex SHA-256). */
export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export type BearerParse = { kind: "missing" } | { kind: "malformed" } | { kind: "token"; token: string };

/** `Authorization: Bearer <token>`, scheme name case-insensitive. */
export function parseBearer(header: string | null): BearerParse {
  if (header === null || header.trim() === "") return { kind: "missing" };
  const m = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(header);
  if (m?.[1]?.toLowerCase() !== "bearer" || !m[2]) return { kind: "malformed" };
  return { kind: "token", token: m[2] };
}
