import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { leastFilled, parseShardList } from "../../src/directory/shards";
import { DERIVED_TABLES, MOVE_TABLES, ORGANIZATION_TABLES } from "../../src/storage/copy";
import * as schema from "../../src/storage/d1-schema";

const d1 = new Set(["DB", "ANALYTICS_2", "ANALYTICS_3"]);
const isD1 = (name: string) => d1.has(name);

describe("ANALYTICS_SHARDS: checked with a clear error (contract section 16)", () => {
  it("lists D1 bindings in order, DB first, spaces ignored", () => {
    expect(parseShardList("DB,ANALYTICS_2", isD1)).toEqual(["DB", "ANALYTICS_2"]);
    expect(parseShardList(" DB , ANALYTICS_3 ,ANALYTICS_2", isD1)).toEqual(["DB", "ANALYTICS_3", "ANALYTICS_2"]);
    expect(parseShardList("DB", isD1)).toEqual(["DB"]);
  });

  it.each([
    ["", /lists no shard/],
    [" , ", /lists no shard/],
    ["DB,ANALYTICS_2,DB", /lists DB twice/],
    ["DB,ANALYTICS_9", /ANALYTICS_9, which is not a D1 binding/],
    ["ANALYTICS_2,DB", /must list DB first/],
  ])("%j is refused", (value, message) => {
    expect(() => parseShardList(value, isD1)).toThrow(message);
  });
});

describe("routing lives in one place", () => {
  /** Every .ts file under src/. */
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
    });

  it("no module but directory/shards.ts names a D1 binding (env.DB, env.ANALYTICS_…)", () => {
    const naming = files("src")
      .filter((f) => f !== join("src", "directory", "shards.ts"))
      .filter((f) => /\benv\s*\.\s*(DB|ANALYTICS_\w+)\b|\benv\s*\[\s*["'`](DB|ANALYTICS_)/.test(readFileSync(f, "utf8")));
    expect(naming).toEqual([]);
  });

  it("the move's copy and delete know every table keyed by org_key", () => {
    const keyed = (Object.values(schema) as unknown[])
      .filter((t): t is SQLiteTable => typeof t === "object" && t !== null && "getSQL" in t)
      .map((t) => getTableConfig(t))
      .filter((c) => c.columns.some((col) => col.name === "org_key"))
      .map((c) => c.name);
    expect([...keyed].sort()).toEqual([...ORGANIZATION_TABLES, ...DERIVED_TABLES, ...MOVE_TABLES].sort());
  });
});

describe("placement picks the least-filled shard", () => {
  const load = (shard: string, pullRequests: number, organizations: number) => ({ shard, pullRequests, organizations });
  it("fewest pull requests first, then fewest organizations, then list order", () => {
    expect(leastFilled([load("DB", 10, 1), load("ANALYTICS_2", 9, 5)]).shard).toBe("ANALYTICS_2");
    expect(leastFilled([load("DB", 0, 1), load("ANALYTICS_2", 0, 0)]).shard).toBe("ANALYTICS_2");
    expect(leastFilled([load("DB", 0, 0), load("ANALYTICS_2", 0, 0)]).shard).toBe("DB");
    expect(leastFilled([load("DB", 5, 0), load("ANALYTICS_2", 3, 2), load("ANALYTICS_3", 3, 1)]).shard).toBe("ANALYTICS_3");
  });
});
