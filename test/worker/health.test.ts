import { describe, expect, it } from "vitest";
import { call, env, fetchWithEnv } from "./helpers";

describe("liveness and readiness", () => {
  it("GET /healthz answers ok without a key", async () => {
    const res = await call("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("GET /readyz answers ok after asking D1", async () => {
    const res = await call("/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });
});

describe("readiness checks every shard (contract section 16)", () => {
  const failing = {
    prepare() {
      throw new Error("D1_ERROR: shard unreachable [expected-fault]");
    },
    batch() {
      throw new Error("D1_ERROR: shard unreachable [expected-fault]");
    },
  } as unknown as D1Database;

  it.each(["DB", "ANALYTICS_2"])("503 when %s fails, naming no shard", async (binding) => {
    const res = await fetchWithEnv(new Request("https://service.test/readyz"), { [binding]: failing });
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toMatch(/ANALYTICS_2|\bDB\b|shard unreachable/);
  });

  it("both shards answering: 200 (the other shard's binding untouched)", async () => {
    const res = await fetchWithEnv(new Request("https://service.test/readyz"), { ANALYTICS_2: env.ANALYTICS_2 });
    expect(res.status).toBe(200);
  });
});
