import { createSign, generateKeyPairSync } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { checkResponse, OpenApiDrift, templateOf } from "../fake-github/openapi-check";
import { simpleUser } from "../fake-github/shapes";
import { type Answer, FakeGithub, type Fault } from "../fake-github/state";

/**
 * The fake GitHub's check is itself under test: every kind of answer the fake can give is built
 * through its state (no server) and validated against GitHub's description, and wrong shapes are
 * refused. The worker tests then rely on the same check for every answer they receive.
 */

const BASE = "http://127.0.0.1:9";
const { publicKey, privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  publicKeyEncoding: { type: "spki", format: "pem" },
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
});

function jwt(appId: number, claims: Partial<{ iat: number; exp: number; alg: string }> = {}, key = privateKey) {
  const now = Math.floor(Date.now() / 1000);
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const body = `${part({ alg: claims.alg ?? "RS256", typ: "JWT" })}.${part({ iat: claims.iat ?? now - 30, exp: claims.exp ?? now + 540, iss: appId })}`;
  return `${body}.${createSign("RSA-SHA256").update(body).sign(key, "base64url")}`;
}

let fake: FakeGithub;
let appId: number;
let installationId: number;
let token: string;
const org = `acme-${process.pid}`;

function call(method: string, path: string, authorization: string | undefined): Answer {
  const url = new URL(`${BASE}${path}`);
  const { answer } = fake.api(method, url, BASE, authorization);
  checkResponse(method, url.pathname, answer.status, answer.body);
  return answer;
}

beforeAll(() => {
  fake = new FakeGithub();
  appId = fake.addApp(publicKey);
  const made = fake.control("POST", ["installations"], { appId, account: { login: org, type: "Organization" } }).body as {
    installationId: number;
  };
  installationId = made.installationId;
  fake.control("PUT", ["orgs", org, "members"], {
    members: [
      { login: "ada", role: "admin" },
      { login: "review-bot", role: "member", type: "Bot" },
    ],
  });
  fake.control("PUT", ["repos", org, "api"], {
    private: true,
    collaborators: [
      { login: "ada", role: "admin" },
      { login: "eve", role: "read" },
    ],
  });
  fake.control("PUT", ["repos", org, "api", "pulls"], {
    pulls: [
      {
        number: 1,
        author: "ada",
        createdAt: "2026-01-01T00:00:00Z",
        updatedAt: "2026-01-03T00:00:00Z",
        mergedAt: "2026-01-02T00:00:00Z",
        additions: 5,
        deletions: 2,
      },
      {
        number: 2,
        author: null,
        createdAt: "2026-01-01T00:00:00Z",
        updatedAt: "2026-01-02T00:00:00Z",
        mergedAt: null,
        closedAt: "2026-01-02T00:00:00Z",
      },
      {
        number: 3,
        author: "eve",
        createdAt: "2026-01-01T00:00:00Z",
        updatedAt: "2026-01-01T00:00:00Z",
        mergedAt: null,
        closedAt: null,
      },
    ],
  });
  const issued = call("POST", `/app/installations/${installationId}/access_tokens`, `Bearer ${jwt(appId)}`);
  expect(issued.status).toBe(201);
  token = (issued.body as { token: string }).token;
});

describe("every answer the fake GitHub gives validates against GitHub's OpenAPI description", () => {
  it.each([
    ["GET", "/installation/repositories?per_page=1"],
    ["GET", "/orgs/{org}/members?role=admin"],
    ["GET", "/orgs/{org}/members?role=member"],
    ["GET", "/users/ada"],
    ["GET", "/users/review-bot"],
    ["GET", "/users/{org}"],
    ["GET", "/repos/{org}/api/collaborators?affiliation=all"],
    ["GET", "/repos/{org}/api/pulls?state=closed&sort=updated&direction=desc"],
    ["GET", "/repos/{org}/api/pulls?state=open"],
    ["GET", "/repos/{org}/api/pulls/1"],
    ["GET", "/repos/{org}/api/pulls/2"],
    ["GET", "/repos/{org}/api/pulls/3"],
    ["GET", "/users/nobody-at-all"],
    ["GET", "/orgs/no-such-org/members"],
    ["GET", "/repos/{org}/no-such-repo/collaborators"],
    ["GET", "/orgs/{org}/memberships/ada"],
    ["GET", "/orgs/{org}/memberships/review-bot"],
    ["GET", "/orgs/{org}/memberships/eve"],
  ])("%s %s (installation token)", (method, template) => {
    const answer = call(method, template.replaceAll("{org}", org), `token ${token}`);
    expect([200, 404]).toContain(answer.status);
  });

  it("GET /app/installations/{id} and a second token (App JWT)", () => {
    expect(call("GET", `/app/installations/${installationId}`, `Bearer ${jwt(appId)}`).status).toBe(200);
    expect(call("POST", `/app/installations/${installationId}/access_tokens`, `Bearer ${jwt(appId)}`).status).toBe(201);
    expect(call("GET", "/app/installations/1", `Bearer ${jwt(appId)}`).status).toBe(404);
  });

  it.each([
    ["alg none", () => `Bearer ${jwt(appId, { alg: "none" })}`],
    ["exp more than 10 minutes after iat", () => `Bearer ${jwt(appId, { exp: Math.floor(Date.now() / 1000) + 900 })}`],
    ["expired", () => `Bearer ${jwt(appId, { iat: 1_000, exp: 1_500 })}`],
    [
      "signed by another key",
      () =>
        `Bearer ${jwt(appId, {}, generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString())}`,
    ],
    ["an unknown app", () => `Bearer ${jwt(appId + 1000)}`],
    ["no JWT", () => undefined],
  ])("a JWT refused (%s) is a documented 401", (_name, auth) => {
    expect(call("POST", `/app/installations/${installationId}/access_tokens`, auth()).status).toBe(401);
  });

  it("an unknown installation token is 401 Bad credentials", () => {
    expect(call("GET", "/installation/repositories", "token ghs_unknown").status).toBe(401);
  });

  it.each<Fault>([
    { kind: "secondary", status: 403, retryAfter: 1 },
    { kind: "secondary", status: 429, retryAfter: 0 },
    { kind: "primary" },
    { kind: "server", status: 500 },
    { kind: "server", status: 502 },
    { kind: "server", status: 503 },
  ])("an injected fault (%o) is an answer GitHub may give", (fault) => {
    fake.control("POST", ["installations", String(installationId), "faults"], { faults: [fault] });
    const answer = call("GET", `/orgs/${org}/members?role=admin`, `token ${token}`);
    expect(answer.status).toBe(fault.kind === "primary" ? 403 : fault.status);
    if (fault.kind === "secondary") expect(answer.headers?.["retry-after"]).toBe(String(fault.retryAfter));
    if (fault.kind === "primary") expect(answer.headers?.["x-ratelimit-remaining"]).toBe("0");
  });
});

describe("the check refuses what GitHub would never send", () => {
  const user = simpleUser(BASE, { id: 7, login: "ada", type: "User" });

  it.each([
    ["a member without login", "/orgs/acme/members", 200, [{ ...user, login: undefined }]],
    ["an id as a string", "/orgs/acme/members", 200, [{ ...user, id: "7" }]],
    ["a list answered as an object", "/orgs/acme/members", 200, { members: [user] }],
    ["a public user with a field GitHub does not have", "/users/ada", 200, { ...user, extra: true }],
    ["a pull request without line counts", "/repos/acme/api/pulls/1", 200, { number: 1 }],
    ["a status the operation cannot answer", "/orgs/acme/members", 418, { message: "teapot" }],
    ["a path GitHub does not have", "/orgs/acme/people", 200, []],
  ])("%s", (_name, path, status, body) => {
    expect(() => checkResponse("GET", path, status, body)).toThrow(OpenApiDrift);
  });

  it("finds the documented template for a concrete path (a literal segment wins)", () => {
    expect(templateOf("GET", "/repos/a/b/pulls/12")).toBe("/repos/{owner}/{repo}/pulls/{pull_number}");
    expect(templateOf("GET", "/installation/repositories")).toBe("/installation/repositories");
    expect(templateOf("POST", "/app/installations/5/access_tokens")).toBe("/app/installations/{installation_id}/access_tokens");
  });
});
