import { describe, expect, it } from "vitest";
import { call } from "./helpers";

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
