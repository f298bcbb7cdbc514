import { readFileSync } from "node:fs";

/**
 * The analytics shards wrangler.toml lists (`ANALYTICS_SHARDS`, contract section 16), in order:
 * the D1 bindings every local script migrates (`npm start`, the benchmarks). DB alone when the
 * var is missing (a configuration from before shards).
 */
export function analyticsShardBindings(configPath = "wrangler.toml") {
  const toml = readFileSync(configPath, "utf8");
  const value = /^\s*ANALYTICS_SHARDS\s*=\s*"([^"]*)"/m.exec(toml)?.[1] ?? "DB";
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
