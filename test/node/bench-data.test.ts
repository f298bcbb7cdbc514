import { describe, expect, it } from "vitest";
import { reviewerBatch } from "../../scripts/lib/bench-data.mjs";
import { EventBatch } from "../../src/schemas/events";

const now = Date.parse("2026-11-21T12:00:00Z");
const TIME_FIELDS = ["createdAt", "mergedAt", "completedAt", "updatedAt"];

describe("benchmark event batch", () => {
  const batch = reviewerBatch({ org: "events-bench", now, version: now - 86_400_000 }) as Record<string, unknown>[];

  it("is exactly what validation makes of the same events on the wire", () => {
    const wire = batch.map((e) =>
      Object.fromEntries(
        Object.entries(e).map(([k, v]) => [k, TIME_FIELDS.includes(k) && typeof v === "number" ? new Date(v).toISOString() : v]),
      ),
    );
    const parsed = EventBatch.safeParse({ events: wire });
    expect(parsed.success, JSON.stringify(parsed.error?.issues.slice(0, 3))).toBe(true);
    expect(parsed.data?.events).toEqual(batch);
  });

  it("has 1,000 events of every type, every one with the given version; the same arguments give the same batch", () => {
    expect(batch).toHaveLength(1000);
    expect(new Set(batch.map((e) => e.type))).toEqual(new Set(["pull_request", "review", "finding", "ai_authorship"]));
    expect(batch.every((e) => e.updatedAt === now - 86_400_000)).toBe(true);
    expect(reviewerBatch({ org: "events-bench", now, version: now - 86_400_000 })).toEqual(batch);
  });
});
