import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
 * Verified while the body streams in (node:crypto's incremental HMAC; Web Crypto has none), under
 * every configured secret (the current one and, during a rotation, the previous one), so an
 * unauthenticated body is never held twice and never waits for a second pass.
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

/** The HMAC of a body under each secret, fed chunk by chunk as the body arrives. */
export class SignatureVerifier {
  readonly #hmacs;

  constructor(secrets: readonly string[]) {
    this.#hmacs = secrets.map((secret) => createHmac("sha256", secret));
  }

  update(chunk: Uint8Array): void {
    for (const hmac of this.#hmacs) hmac.update(chunk);
  }

  /**
   * Whether `signature` is the HMAC under any secret. Every secret's digest is compared, in
   * constant time, so neither the comparison nor which secret matched leaks through timing.
   */
  matches(signature: Uint8Array): boolean {
    let matched = false;
    for (const hmac of this.#hmacs) {
      const expected = new Uint8Array(hmac.digest());
      if (expected.byteLength === signature.byteLength && timingSafeEqual(expected, signature)) matched = true;
    }
    return matched;
  }
}

/** `sha256=<hex>` for a body: what GitHub sends (used by tests and the benchmark). */
export async function signatureHeader(secret: string, body: Uint8Array | string): Promise<string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return `sha256=${bytesToHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes)))}`;
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

const bytesToHex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
