import { describe, expect, it, vi } from "vitest";
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
    expect(res.headers.get("Allow")).toBe("GET, PATCH");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  });

  it("405 with Allow in the analytics envelope", async () => {
    const res = await call("/api/analytics/v1/prs", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET");
    expect(await res.json()).toEqual({ error: expect.stringContaining("POST") });
  });

  it("405 on /healthz for POST", async () => {
    const res = await call("/healthz", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET");
  });

  it("405 with Allow inside the control plane once authenticated", async () => {
    const res = await admin("GET", "/internal/v1/events");
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
  });
});

describe("unexpected failures", () => {
  const brokenDb = {
    prepare() {
      throw new Error("D1_ERROR: no such table: secret_internal_table");
    },
    batch() {
      throw new Error("D1_ERROR: no such table: secret_internal_table");
    },
  } as unknown as D1Database;

  it("answer 500 with a generic message and never leak internals", async () => {
    const request = new Request("https://service.test/internal/v1/events", {
      method: "POST",
      headers: { Authorization: "Bearer test-admin-token", "Content-Type": "application/json", "X-Correlation-Id": "trace-500" },
      body: JSON.stringify({
        events: [
          { type: "ai_authorship", org: "x", repo: "y", prNumber: 1, sourceId: "s", lines: 1, updatedAt: "2026-10-01T00:00:00Z" },
        ],
      }),
    });
    const res = await fetchWithEnv(request, { DB: brokenDb });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret_internal_table");
    expect(text).not.toContain("D1_ERROR");
    expect(JSON.parse(text)).toEqual({
      error: {
        code: "internal_error",
        message: "An unexpected error occurred.",
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
          msg: "answered unavailable",
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
  it("serves the generated document at /openapi.json", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/internal/v1/events");
  });
});
