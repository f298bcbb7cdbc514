import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toPkcs8Pem } from "../../src/github/private-key";

// Node's own conversion (OpenSSL) is the independent reference for the envelope written by hand.
const pair = (modulusLength: number) =>
  generateKeyPairSync("rsa", {
    modulusLength,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });

describe("GitHub App private key: PKCS#1 as GitHub hands it out becomes PKCS#8", () => {
  it.each([1024, 2048, 4096])("a %d-bit PKCS#1 key gives the bytes OpenSSL gives", (bits) => {
    const { privateKey } = pair(bits);
    const expected = createPrivateKey(privateKey).export({ type: "pkcs8", format: "pem" }).toString();
    expect(toPkcs8Pem(privateKey)).toEqual({ kind: "ok", pkcs8: expected });
  });

  it("a PKCS#8 key is kept (re-wrapped at 64 columns)", () => {
    const pkcs8 = createPrivateKey(pair(2048).privateKey).export({ type: "pkcs8", format: "pem" }).toString();
    expect(toPkcs8Pem(pkcs8)).toEqual({ kind: "ok", pkcs8 });
  });

  it("a key pasted on one line with \\n escapes is accepted", () => {
    const { privateKey } = pair(2048);
    const expected = createPrivateKey(privateKey).export({ type: "pkcs8", format: "pem" }).toString();
    expect(toPkcs8Pem(privateKey.replace(/\n/g, "\\n"))).toEqual({ kind: "ok", pkcs8: expected });
  });

  it.each([
    ["empty", ""],
    ["a public key", pair(1024).publicKey],
    ["a body that is not base64", "-----BEGIN RSA PRIVATE KEY-----\n!!!\n-----END RSA PRIVATE KEY-----"],
  ])("%s is refused with a reason", (_name, pem) => {
    expect(toPkcs8Pem(pem).kind).toBe("invalid");
  });
});
