import { env } from "cloudflare:workers";
import type { GithubInstallation } from "../../src/github/client";
import { type GithubApp, githubSync } from "../../src/github/config";
import type { Fault, PullSpec } from "../fake-github/state";

/**
 * Drives the fake GitHub (test/fake-github/) from inside workerd through its `/__fake/...` control
 * API. Each test makes its own installation on its own organization login, so test files running
 * in parallel against the one server never see each other's state.
 */

export interface FakeRequest {
  method: string;
  path: string;
  auth: "jwt" | "token" | "none";
  status: number;
  at: number;
  reset?: number;
  /** `POST /graphql`: the query's cost in GraphQL rate points, as the fake computed it. */
  cost?: number;
}

async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${env.GITHUB_API_URL}/__fake/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`fake GitHub control ${method} ${path}: ${response.status} ${await response.text()}`);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

/** The App as the Worker's bindings configure it (the fake's App, PKCS#1 key). */
export function configuredApp(): GithubApp {
  const sync = githubSync(env);
  if (sync.kind !== "on") throw new Error(`sync is ${sync.kind} in the test bindings`);
  return sync.app;
}

/** Fast 5xx retries for tests: waits of 10, 40, 90 ms instead of 1, 4, 9 s. */
export const TEST_OPTIONS = { retryBaseMs: 10 };

export async function fakeInstallation(
  options: { app?: GithubApp; type?: "Organization" | "User"; tokenLifetimeSeconds?: number; login?: string } = {},
) {
  const app = options.app ?? configuredApp();
  const login = options.login ?? `org-${crypto.randomUUID().slice(0, 8)}`;
  const created = await control<{ installationId: number; accountId: number }>("POST", "installations", {
    appId: Number(app.appId),
    account: { login, type: options.type ?? "Organization" },
    tokenLifetimeSeconds: options.tokenLifetimeSeconds,
  });
  const target: GithubInstallation = { app, installationId: created.installationId, options: TEST_OPTIONS };
  const id = created.installationId;
  return {
    login,
    accountId: created.accountId,
    installationId: id,
    target,
    setMembers: (members: { login: string; role: "admin" | "member"; type?: "User" | "Bot" }[]) =>
      control<{ members: { id: number; login: string; type: string; role: string }[] }>("PUT", `orgs/${login}/members`, {
        members,
      }),
    setUser: (user: string, type: "User" | "Bot" | "Organization") => control<{ id: number }>("PUT", `users/${user}`, { type }),
    setRepo: (
      name: string,
      repo: { private: boolean; collaborators?: { login: string; role?: string; type?: "User" | "Bot" }[] },
    ) => control<{ id: number }>("PUT", `repos/${login}/${name}`, repo),
    deleteRepo: (name: string) => control<void>("DELETE", `repos/${login}/${name}`),
    setPulls: (repo: string, pulls: PullSpec[]) => control<{ ids: number[] }>("PUT", `repos/${login}/${repo}/pulls`, { pulls }),
    inject: (...faults: Fault[]) => control<void>("POST", `installations/${id}/faults`, { faults }),
    /** false: `POST /graphql` answers 404 for this installation, as on a server without GitHub's GraphQL API. */
    setGraphql: (enabled: boolean) => control<void>("PUT", `installations/${id}/graphql`, { enabled }),
    stats: () => control<{ tokensIssued: number; requests: FakeRequest[]; drifts: string[] }>("GET", `installations/${id}`),
  };
}

/** Registers another App with the fake by its public key (SPKI PEM); answers its id. */
export async function registerApp(publicKeyPem: string): Promise<string> {
  const { appId } = await control<{ appId: number }>("POST", "apps", { publicKey: publicKeyPem });
  return String(appId);
}
