import { afterEach, describe, expect, it, vi } from "vitest";
import { errorField, logger, logLine } from "../../src/lib/log";

describe("one JSON line per event: level first, the event, the context, the fields", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("keeps level first (npm start hides the demo load's request lines by it)", () => {
    const line = logLine("info", "request", { correlationId: "c-1" }, { status: 200 });
    expect(line).toBe('{"level":"info","event":"request","correlationId":"c-1","status":200}');
  });

  it("a field never overrides the level or the event", () => {
    expect(JSON.parse(logLine("warn", "webhook ignored", { level: "x" }, { event: "pull_request" }))).toEqual({
      level: "warn",
      event: "webhook ignored",
    });
  });

  it.each([
    ["info", "log"],
    ["warn", "warn"],
    ["error", "error"],
  ] as const)("%s lines go to console.%s, with the context of `with`", (level, method) => {
    const spied = vi.spyOn(console, method).mockImplementation(() => {});
    logger({ correlationId: "c-2" }).with({ installationId: 7 })[level]("something happened", { n: 1 });
    expect(spied).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(spied.mock.calls[0]?.[0]))).toEqual({
      level,
      event: "something happened",
      correlationId: "c-2",
      installationId: 7,
      n: 1,
    });
  });

  it.each([
    [new TypeError("bad"), "TypeError: bad"],
    [new Error("unavailable", { cause: new RangeError("D1 down") }), "Error: unavailable (cause: RangeError: D1 down)"],
    [new Error("outer", { cause: "not an error" }), "Error: outer"],
    ["text", "text"],
    [undefined, undefined],
  ])("errorField(%j)", (error, expected) => {
    expect(errorField(error)).toBe(expected);
  });
});
