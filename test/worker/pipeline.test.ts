import { describe, expect, it, vi } from "vitest";
import { readJsonObject } from "../../src/http/body";
import { isCanonicalPath } from "../../src/http/request";
import { admin, call, fetchWithEnv } from "./helpers";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("every response", () => {
  it.each([
    ["/healthz", 200],
    ["/nope", 404],
    ["/api/analytics/v1/prs", 401],
    ["/api/v1/organizations/acme/members/1", 401],
  ])("%s carries Cache-Control: no-store, a correlation id and a JSON content type", async (path, status) => {
    const res = await call(path);
    expect(res.status).toBe(status);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("X-Correlation-Id")).toMatch(UUID);
    expect(res.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
  });
});

describe("correlation ids", () => {
  it("echoes a well-formed client id, also inside member error bodies", async () => {
    const res = await call("/api/v1/organizations/acme/members/1", { headers: { "X-Correlation-Id": "req-42.a:b_c" } });
    expect(res.headers.get("X-Correlation-Id")).toBe("req-42.a:b_c");
    const body = (await res.json()) as { error: { correlationId: string } };
    expect(body.error.correlationId).toBe("req-42.a:b_c");
  });

  it.each(["has space", "x".repeat(129), "semi;colon", ""])(
    "replaces a malformed client id (%j) with a new UUID",
    async (sent) => {
      const res = await call("/healthz", { headers: { "X-Correlation-Id": sent } });
      expect(res.headers.get("X-Correlation-Id")).toMatch(UUID);
    },
  );

  it("generates a different id for each request", async () => {
    const [a, b] = await Promise.all([call("/healthz"), call("/healthz")]);
    expect(a.headers.get("X-Correlation-Id")).not.toBe(b.headers.get("X-Correlation-Id"));
  });
});

describe("canonical paths", () => {
  it.each([
    "/api/v1//organizations/acme/members/1",
    "//healthz",
    "/api/v1/organizations/ac%2Fme/members/1",
    "/api/v1/organizations/ac%2fme/members/1",
    "/api/v1/organizations/ac%5Cme/members/1",
    "/api/v1/organizations/%2E%2E/members/1",
    "/api/analytics/v1/prs/",
    "/healthz/",
  ])("%s never reaches a handler: 404", async (path) => {
    const res = await call(path);
    expect(res.status).toBe(404);
  });

  it.each(["/a/./b", "/a/../b", "/a/.", "/..", "/a/%2e%2E/b", "/a/%2e/b", "/a%00"])(
    "the guard refuses %s (dot segments the URL parser would otherwise resolve)",
    (path) => {
      expect(isCanonicalPath(path)).toBe(false);
    },
  );

  it.each(["/", "/healthz", "/api/v1/organizations/acme/members/12", "/internal/v1/organizations/a.b/repositories/c-d_e"])(
    "the guard lets %s through",
    (path) => {
      expect(isCanonicalPath(path)).toBe(true);
    },
  );

  it("answers 404 in the analytics envelope under /api/analytics/", async () => {
    const res = await call("/api/analytics/v1//prs");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: expect.any(String) });
  });

  it("answers 404 in the members envelope elsewhere", async () => {
    const res = await call("/api/v1/organizations/ac%2Fme/members/1");
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: "not_found", retriable: false, details: [] });
  });
});

describe("unknown paths and methods", () => {
  it("404 for an unknown path", async () => {
    const res = await call("/api/v2/whatever");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("405 with Allow for a known path and another method (members envelope)", async () => {
    const res = await call("/api/v1/organizations/acme/members/1", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, HEAD, PATCH");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  });

  it("405 with Allow in the analytics envelope", async () => {
    const res = await call("/api/analytics/v1/prs", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, HEAD");
    expect(await res.json()).toEqual({ error: expect.stringContaining("POST") });
  });

  it("405 on /healthz for POST", async () => {
    const res = await call("/healthz", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET, HEAD");
  });

  it("405 with Allow inside the control plane once authenticated", async () => {
    const res = await admin("GET", "/internal/v1/events");
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
  });
});

describe("details", () => {
  it("hold at most 20 entries; the 20th says how many more problems were found", async () => {
    const body = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`unknown${i}`, i]));
    const res = await admin("PUT", "/internal/v1/users/4242", { githubLogin: "x", ...body });
    expect(res.status).toBe(400);
    const { details } = ((await res.json()) as { error: { details: { path: string; message: string }[] } }).error;
    expect(details).toHaveLength(20);
    expect(details.slice(0, 19).every((d) => d.path.startsWith("unknown"))).toBe(true);
    expect(details[19]).toEqual({ path: "", message: "11 more problems not listed" });
  });

  it("exactly 20 problems are all listed", async () => {
    const body = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`unknown${i}`, i]));
    const res = await admin("PUT", "/internal/v1/users/4243", { githubLogin: "x", ...body });
    const { details } = ((await res.json()) as { error: { details: { path: string }[] } }).error;
    expect(details.map((d) => d.path)).toEqual(Array.from({ length: 20 }, (_, i) => `unknown${i}`));
  });
});

describe("a client that breaks off its request body", () => {
  const brokenBody = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"githubLogin": "half'));
        controller.error(new Error("client disconnected"));
      },
    });

  it("is answered 400 and logged as nothing worse (no 500, no error line)", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = await call("/internal/v1/users/4244", {
        method: "PUT",
        headers: { Authorization: "Bearer test-admin-token-0123456789abcdef", "Content-Type": "application/json" },
        body: brokenBody(),
        duplex: "half",
      } as RequestInit);
      // Through the runtime the body arrives cut short: a 400 for what did arrive.
      expect(res.status).toBe(400);
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it("a read that fails midway is the client's 400, not a server error", async () => {
    const request = new Request("https://service.test/x", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: brokenBody(),
      duplex: "half",
    } as RequestInit);
    await expect(readJsonObject(request, 1024)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/closed the connection/),
    });
  });

  it("is not waited for past the read deadline", async () => {
    const never = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{"));
      },
    });
    const request = new Request("https://service.test/x", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: never,
      duplex: "half",
    } as RequestInit);
    await expect(readJsonObject(request, 1024, 50)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/did not arrive/),
    });
  });
});

describe("unexpected failures", () => {
  const brokenDb = {
    prepare() {
      throw new Error("D1_ERROR: no such table: secret_internal_table [expected-fault]");
    },
    batch() {
      throw new Error("D1_ERROR: no such table: secret_internal_table [expected-fault]");
    },
  } as unknown as D1Database;

  it("a storage failure answers 503 unavailable (retriable) with one message, and never leaks internals", async () => {
    const request = new Request("https://service.test/internal/v1/events", {
      method: "POST",
      headers: {
        Authorization: "Bearer test-admin-token-0123456789abcdef",
        "Content-Type": "application/json",
        "X-Correlation-Id": "trace-500",
      },
      body: JSON.stringify({
        events: [
          { type: "ai_authorship", org: "x", repo: "y", prNumber: 1, sourceId: "s", lines: 1, updatedAt: "2026-10-01T00:00:00Z" },
        ],
      }),
    });
    const res = await fetchWithEnv(request, { DB: brokenDb });
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toContain("secret_internal_table");
    expect(text).not.toContain("D1_ERROR");
    expect(JSON.parse(text)).toEqual({
      error: {
        code: "unavailable",
        message: "The service is temporarily unavailable. Retry with the same request.",
        retriable: true,
        correlationId: "trace-500",
        details: [],
      },
    });
  });

  it("logs each server-side failure once with the correlation id and the cause, which the response never shows", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const request = new Request("https://service.test/readyz", { headers: { "X-Correlation-Id": "trace-503" } });
      const res = await fetchWithEnv(request, { DB: brokenDb });
      expect(res.status).toBe(503);
      expect(await res.text()).not.toContain("secret_internal_table");
      const lines = logged.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>);
      expect(lines).toEqual([
        expect.objectContaining({
          level: "error",
          correlationId: "trace-503",
          event: "storage failure: D1",
          error: expect.stringContaining("secret_internal_table"),
        }),
      ]);
    } finally {
      logged.mockRestore();
    }
  });

  it("/healthz does not touch storage: it answers 200 even when D1 fails", async () => {
    const res = await fetchWithEnv(new Request("https://service.test/healthz"), { DB: brokenDb });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("/readyz answers 503 when D1 fails", async () => {
    const res = await fetchWithEnv(new Request("https://service.test/readyz"), { DB: brokenDb });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string; retriable: boolean } }).error).toMatchObject({
      code: "unavailable",
      retriable: true,
    });
  });
});

describe("OpenAPI", () => {
  it("serves the public document at /openapi.json: the public interfaces only", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/api/analytics/v1/prs");
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/internal"))).toEqual([]);
  });

  it("serves the internal document (control plane, webhook endpoint, web app) at /internal/v1/openapi.json, with the admin token only", async () => {
    expect((await call("/internal/v1/openapi.json")).status).toBe(401);
    const res = await admin("GET", "/internal/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain("/internal/v1/events");
    // Contract section 11: the internal document describes the control plane and the webhook endpoint;
    // section 13 adds the web app's pages and routes to it (never to the public one), section 19
    // the OAuth server's endpoints (its discovery documents are in the public one).
    const others = Object.keys(doc.paths).filter((p) => !p.startsWith("/internal"));
    expect(others.filter((p) => !/^\/($|app\/|auth\/|oauth\/)/.test(p))).toEqual(["/webhooks/github"]);
    expect(others).toEqual(expect.arrayContaining(["/", "/app/keys", "/app/api/keys", "/auth/sign-out"]));
    expect(others).toEqual(
      expect.arrayContaining(["/oauth/authorize", "/oauth/token", "/oauth/register", "/app/api/oauth/apps"]),
    );
  });
});
