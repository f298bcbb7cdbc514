import { describe, expect, it } from "vitest";
import { setNewest } from "../../src/lib/newest";

describe("setNewest", () => {
  it("keeps the newest entries up to the capacity, a key set again counting as new", () => {
    const map = new Map<string, number>();
    for (const [key, value] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ] as const)
      setNewest(map, key, value, 2);
    expect([...map]).toEqual([
      ["b", 2],
      ["c", 3],
    ]);
    setNewest(map, "b", 20, 2);
    setNewest(map, "d", 4, 2);
    expect([...map]).toEqual([
      ["b", 20],
      ["d", 4],
    ]);
  });

  it("trims a map already over a smaller capacity, and a capacity of 0 keeps nothing", () => {
    const map = new Map([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    setNewest(map, "d", 4, 1);
    expect([...map]).toEqual([["d", 4]]);
    setNewest(map, "e", 5, 0);
    expect(map.size).toBe(0);
  });
});
