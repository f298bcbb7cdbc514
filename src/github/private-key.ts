/**
 * GitHub hands out App private keys as PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`); Web Crypto's
 * `importKey` (and so `universal-github-app-jwt` in workerd, which refuses PKCS#1 outright) takes
 * PKCS#8 only. A PKCS#1 key becomes PKCS#8 by wrapping its DER, unchanged, in the PKCS#8 envelope:
 *
 *   PrivateKeyInfo ::= SEQUENCE { version INTEGER 0,
 *                                 algorithm SEQUENCE { rsaEncryption OID, NULL },
 *                                 privateKey OCTET STRING (the PKCS#1 DER) }
 *
 * Pure (no Web Crypto, no Node): the same bytes as `openssl pkcs8 -topk8 -nocrypt`.
 */

export type PrivateKeyParse = { kind: "ok"; pkcs8: string } | { kind: "invalid"; reason: string };

const PKCS1 = /-----BEGIN RSA PRIVATE KEY-----([\s\S]*?)-----END RSA PRIVATE KEY-----/;
const PKCS8 = /-----BEGIN PRIVATE KEY-----([\s\S]*?)-----END PRIVATE KEY-----/;
// SEQUENCE { OID 1.2.840.113549.1.1.1 (rsaEncryption), NULL }
const RSA_ALGORITHM = [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
const VERSION_0 = [0x02, 0x01, 0x00];

/** A PEM private key (PKCS#1 or PKCS#8) as PKCS#8 PEM. Secrets pasted with `\n` escapes are accepted. */
export function toPkcs8Pem(pem: string): PrivateKeyParse {
  // A secret set from a one-line environment variable often carries `\n` instead of line breaks.
  const text = pem.includes("\n") ? pem : pem.replace(/\\n/g, "\n");
  const pkcs8 = PKCS8.exec(text);
  if (pkcs8) {
    const der = base64Body(pkcs8[1] ?? "");
    if (!der) return { kind: "invalid", reason: "the PKCS#8 key's body is not base64" };
    return { kind: "ok", pkcs8: pemOf(der) };
  }
  const pkcs1 = PKCS1.exec(text);
  if (!pkcs1) {
    return { kind: "invalid", reason: "not a PEM private key (BEGIN RSA PRIVATE KEY or BEGIN PRIVATE KEY)" };
  }
  const der = base64Body(pkcs1[1] ?? "");
  if (der?.[0] !== 0x30) return { kind: "invalid", reason: "the PKCS#1 key's body is not a DER sequence" };
  const inner = [...VERSION_0, ...RSA_ALGORITHM, 0x04, ...derLength(der.length), ...der];
  return { kind: "ok", pkcs8: pemOf(Uint8Array.from([0x30, ...derLength(inner.length), ...inner])) };
}

/** DER definite length: short form below 128, else 0x80 | count of big-endian length bytes. */
function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return [0x80 | bytes.length, ...bytes];
}

function base64Body(body: string): Uint8Array | null {
  const compact = body.replace(/\s+/g, "");
  if (compact === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return null;
  const binary = atob(compact);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function pemOf(der: Uint8Array): string {
  let binary = "";
  for (const byte of der) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`;
}
