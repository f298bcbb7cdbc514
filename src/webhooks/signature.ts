/**
 * GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
 * Web Crypto only (no dependency): the HMAC is computed with each configured secret and compared
 * with `crypto.subtle.timingSafeEqual`, so neither the comparison nor the choice of secret leaks
 * timing about the expected value.
 */

const HEADER = /^sha256=([0-9a-f]{64})$/;

export type SignatureHeader = { kind: "missing" } | { kind: "malformed" } | { kind: "signature"; bytes: Uint8Array };

/** Parses the header without I/O; GitHub sends lower-case hex. */
export function parseSignatureHeader(value: string | null): SignatureHeader {
  if (value === null || value === "") return { kind: "missing" };
  const match = HEADER.exec(value.trim().toLowerCase());
  if (!match?.[1]) return { kind: "malformed" };
  return { kind: "signature", bytes: hexToBytes(match[1]) };
}

/** Whether `signature` is the HMAC-SHA256 of `body` under any of `secrets` (each one is tried, always all of them). */
export async function verifySignature(secrets: readonly string[], body: Uint8Array, signature: Uint8Array): Promise<boolean> {
  let matched = false;
  for (const secret of secrets) {
    const expected = await hmacSha256(secret, body);
    if (expected.byteLength === signature.byteLength && crypto.subtle.timingSafeEqual(expected, signature)) matched = true;
  }
  return matched;
}

/** `sha256=<hex>` for a body: what GitHub sends (also used by tests and the benchmark). */
export async function signatureHeader(secret: string, body: Uint8Array | string): Promise<string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return `sha256=${bytesToHex(await hmacSha256(secret, bytes))}`;
}

async function hmacSha256(secret: string, body: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, body));
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

const bytesToHex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
