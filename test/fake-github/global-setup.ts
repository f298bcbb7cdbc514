import { generateKeyPairSync } from "node:crypto";
import type { TestProject } from "vitest/node";
import { startFakeGithub } from "./server";

/**
 * Starts the fake GitHub for the worker project (vitest.config.ts hands its URL and the App's
 * credentials to the Worker as bindings). The App's key pair is made here, for this run only, and
 * the Worker gets the private key as GitHub hands it out: PKCS#1 (`BEGIN RSA PRIVATE KEY`).
 */
export default async function setup(project: TestProject) {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  const { url, fake, server } = await startFakeGithub();
  const appId = fake.addApp(publicKey);
  project.provide("fakeGithubUrl", url);
  project.provide("fakeGithubAppId", String(appId));
  project.provide("fakeGithubPrivateKey", privateKey);
  // The App's OAuth client, for the web app's GitHub sign-in.
  const client = fake.oauth.addClient();
  project.provide("fakeGithubClientId", client.clientId);
  project.provide("fakeGithubClientSecret", client.clientSecret);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      // workerd keeps connections alive; without this, close waits for them to time out.
      server.closeAllConnections();
    });
}

declare module "vitest" {
  export interface ProvidedContext {
    fakeGithubUrl: string;
    fakeGithubAppId: string;
    fakeGithubPrivateKey: string;
    fakeGithubClientId: string;
    fakeGithubClientSecret: string;
  }
}
