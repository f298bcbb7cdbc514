import { describe, expect, it } from "vitest";
import { addMember, admin, call, createKey, createOrg, createUser } from "./helpers";

/** The headers that differ between two answers by nature: a fresh correlation id, the counted quota. */
const VARYING = new Set(["x-correlation-id", "x-ratelimit-remaining", "x-ratelimit-used", "ratelimit", "x-ratelimit-reset"]);
const stableHeaders = (res: Response) => [...res.headers].filter(([name]) => !VARYING.has(name));

async function memberSetup() {
  const org = await createOrg();
  const user = await createUser();
  await addMember(org, user, "admin");
  const { key } = await createKey(user, "members");
  return { org, user, auth: { Authorization: `Bearer ${key}` } };
}

describe("HEAD is answered wherever GET is: the GET's status and headers, no body (contract section 1)", () => {
  it("health, readiness and the document", async () => {
    for (const path of ["/healthz", "/readyz", "/openapi.json"]) {
      const get = await call(path);
      const head = await call(path, { method: "HEAD" });
      expect(head.status, path).toBe(get.status);
      expect(stableHeaders(head), path).toEqual(stableHeaders(get));
      expect(head.headers.get("X-Correlation-Id"), path).toBeTruthy();
      expect(await head.text(), path).toBe("");
    }
  });

  it("a member read with a key: 200 with the quota headers, counted like the GET", async () => {
    const { org, user, auth } = await memberSetup();
    const path = `/api/v1/organizations/${org}/members/${user}`;
    const get = await call(path, { headers: auth });
    const head = await call(path, { method: "HEAD", headers: auth });
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(stableHeaders(head)).toEqual(stableHeaders(get));
    expect(Number(head.headers.get("X-RateLimit-Used"))).toBe(Number(get.headers.get("X-RateLimit-Used")) + 1);
    expect(await head.text()).toBe("");
  });

  it("errors keep their status and headers and lose their body: 401 with WWW-Authenticate, 404", async () => {
    const { org, auth } = await memberSetup();
    const unauthenticated = await call(`/api/v1/organizations/${org}/members/1`, { method: "HEAD" });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("WWW-Authenticate")).toBe("Bearer");
    expect(await unauthenticated.text()).toBe("");
    const missing = await call(`/api/v1/organizations/${org}/members/999999999`, { method: "HEAD", headers: auth });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(await missing.text()).toBe("");
  });

  it("a 405's Allow lists HEAD where GET is allowed, and only there", async () => {
    expect((await call("/healthz", { method: "POST" })).headers.get("Allow")).toBe("GET, HEAD");
    expect((await call("/api/v1/organizations/acme/members/1", { method: "DELETE" })).headers.get("Allow")).toBe(
      "GET, HEAD, PATCH",
    );
    const noGet = await admin("HEAD", "/internal/v1/events");
    expect(noGet.status).toBe(405);
    expect(noGet.headers.get("Allow")).toBe("POST");
  });
});
