import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { checkResponse } from "./openapi-check";
import { FakeGithub } from "./state";

/**
 * The fake GitHub as an HTTP server on 127.0.0.1 (a free port). Paths may carry the GHES prefix
 * `/api/v3`. `/__fake/...` is the control API (state.ts); `/login/oauth/...` the OAuth web flow (oauth.ts). Every API answer is checked against
 * GitHub's description before it is sent (openapi-check.ts); one that does not match is recorded
 * against its installation and answered 500 with the drift in the message, so the test that
 * caused it fails with the reason. `port` 0 (the tests) takes a free one; a benchmark names its own.
 * Loaded by the tests' globalSetup and by `scripts/bench-sync.mjs` (Node strips the types).
 */
export async function startFakeGithub(
  fake = new FakeGithub(),
  port = 0,
): Promise<{ url: string; fake: FakeGithub; server: Server }> {
  const server = createServer((req, res) => {
    handle(fake, req)
      .then(({ status, headers, body }) => {
        res.writeHead(status, {
          ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
          ...headers,
        });
        res.end(body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body));
      })
      .catch((error: unknown) => {
        res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify({ message: `fake GitHub failed: ${String(error)}` }));
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const address = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${address.port}`, fake, server };
}

async function handle(fake: FakeGithub, req: IncomingMessage) {
  const method = req.method ?? "GET";
  const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
  const raw = await readBody(req);

  if (url.pathname.startsWith("/__fake/")) {
    const segments = url.pathname.slice("/__fake/".length).split("/").map(decodeURIComponent);
    return fake.control(method, segments, raw ? JSON.parse(raw) : {});
  }

  // The OAuth web flow (oauth.ts): not in GitHub's REST description, so not checked against it.
  if (method === "GET" && url.pathname === "/login/oauth/authorize") return fake.oauth.authorize(url);
  if (method === "POST" && url.pathname === "/login/oauth/access_token") {
    return fake.oauth.accessToken(raw, { accept: req.headers.accept, authorization: req.headers.authorization });
  }

  // GitHub's GraphQL API (graphql.ts): `/graphql`, or `/api/graphql` on a GHES. Its answers are shaped
  // by GitHub's published schema during execution, not checked against the REST description.
  if (method === "POST" && (url.pathname === "/graphql" || url.pathname === "/api/graphql")) {
    const at = Date.now();
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return { status: 400, headers: {}, body: { message: "Problems parsing JSON" } };
    }
    const { answer, installation, auth, cost } = await fake.graphql(body, req.headers.authorization);
    const logged = { method, path: "/graphql", auth, status: answer.status, at, ...(cost === undefined ? {} : { cost }) };
    const reset = answer.headers?.["x-ratelimit-remaining"] === "0" ? Number(answer.headers["x-ratelimit-reset"]) : undefined;
    installation?.requests.push(reset === undefined ? logged : { ...logged, reset });
    return { status: answer.status, headers: answer.headers ?? {}, body: answer.body };
  }

  const prefix = url.pathname.startsWith("/api/v3/") ? "/api/v3" : "";
  const apiUrl = new URL(url.href);
  apiUrl.pathname = url.pathname.slice(prefix.length);
  const base = `${url.origin}${prefix}`;
  const asUser = method === "GET" && apiUrl.pathname === "/user" ? fake.oauth.user(req.headers.authorization, base) : undefined;
  if (asUser) {
    try {
      checkResponse(method, apiUrl.pathname, asUser.status, asUser.body);
    } catch (error) {
      return { status: 500, headers: {}, body: { message: `fake GitHub drifted from GitHub's description: ${String(error)}` } };
    }
    return { status: asUser.status, headers: asUser.headers ?? {}, body: asUser.body };
  }
  const at = Date.now();
  const { answer, installation, auth } = fake.api(method, apiUrl, base, req.headers.authorization);
  const logged = { method, path: `${apiUrl.pathname}${apiUrl.search}`, auth, status: answer.status, at };
  const reset = answer.headers?.["x-ratelimit-remaining"] === "0" ? Number(answer.headers["x-ratelimit-reset"]) : undefined;
  installation?.requests.push(reset === undefined ? logged : { ...logged, reset });
  try {
    checkResponse(method, apiUrl.pathname, answer.status, answer.body);
  } catch (error) {
    fake.recordDrift(installation?.id, String(error));
    return { status: 500, headers: {}, body: { message: `fake GitHub drifted from GitHub's description: ${String(error)}` } };
  }
  return { status: answer.status, headers: answer.headers ?? {}, body: answer.body };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
