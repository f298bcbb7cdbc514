import { describe, expect, it } from "vitest";
import { isRequestLog, quietWhileLoading } from "../../scripts/lib/dev-output.mjs";

describe("npm start keeps the demo load quiet: per-request log lines are recognised, everything else is kept", () => {
  it.each([
    [
      '{"level":"info","event":"request","correlationId":"x","method":"PUT","path":"/internal/v1/users/1001","status":200,"ms":3}',
    ],
    ["[wrangler:info] PUT /internal/v1/organizations/acme 200 OK (12ms)"],
    ["\u001b[32m[wrangler:info]\u001b[39m POST /internal/v1/events 200 OK (250ms)"],
    ["[wrangler:inf] GET /healthz 200 OK (3ms)"],
    ["  [wrangler:info] GET /readyz 503 Service Unavailable (2ms)"],
  ])("a request line: %j", (line) => {
    expect(isRequestLog(line)).toBe(true);
  });

  it.each([
    ['{"level":"error","event":"storage failure: D1","correlationId":"x"}'],
    ['{"level":"warn","event":"parked"}'],
    ['{"level":"info","event":"reconciliation started","started":2}'],
    ["[wrangler:info] Ready on http://127.0.0.1:8951"],
    ["Your Worker has access to the following bindings:"],
    ["✘ [ERROR] Could not resolve"],
    [""],
  ])("not a request line: %j", (line) => {
    expect(isRequestLog(line)).toBe(false);
  });
});

describe("quietWhileLoading: request lines hidden until the load's last request has passed through", () => {
  const worker = (id: string, path = "/internal/v1/events") =>
    `{"level":"info","event":"request","correlationId":"${id}","method":"GET","path":"${path}","status":200,"ms":1}`;
  const wrangler = (path: string) => `[wrangler:info] GET ${path} 200 OK (1ms)`;

  it("hides the load's lines and the marker's two, shows everything after, and says when it caught up", async () => {
    const filter = quietWhileLoading("npm-start-abc");
    let caught = false;
    filter.caughtUp.then(() => {
      caught = true;
    });
    const lines = [
      "Ready on http://127.0.0.1:8951",
      worker("a"),
      wrangler("/internal/v1/events"),
      '{"level":"error","event":"storage failure"}',
      worker("npm-start-abc", "/healthz"),
      wrangler("/healthz"),
      worker("b", "/api/v1/organizations"),
      wrangler("/api/v1/organizations"),
    ];
    const shown = lines.filter((line) => filter.show(line));
    await Promise.resolve();
    expect(caught).toBe(true);
    expect(shown).toEqual([
      "Ready on http://127.0.0.1:8951",
      '{"level":"error","event":"storage failure"}',
      worker("b", "/api/v1/organizations"),
      wrangler("/api/v1/organizations"),
    ]);
  });

  it("has not caught up while the marker has not come through", async () => {
    const filter = quietWhileLoading("npm-start-xyz");
    let caught = false;
    filter.caughtUp.then(() => {
      caught = true;
    });
    for (const line of [worker("a"), wrangler("/x"), worker("npm-start-other")]) expect(filter.show(line)).toBe(false);
    await Promise.resolve();
    expect(caught).toBe(false);
  });
});
