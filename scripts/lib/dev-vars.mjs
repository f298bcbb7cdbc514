import { existsSync, readFileSync } from "node:fs";

/** ADMIN_TOKEN from .dev.vars (wrangler's local secrets file), if there is one. */
export function adminTokenFromDevVars(path = ".dev.vars") {
  if (!existsSync(path)) return undefined;
  const line = readFileSync(path, "utf8")
    .split(/\r?\n/)
    .find((l) => /^\s*ADMIN_TOKEN\s*=/.test(l));
  if (!line) return undefined;
  return (
    line
      .replace(/^\s*ADMIN_TOKEN\s*=\s*/, "")
      .replace(/^["']|["']$/g, "")
      .trim() || undefined
  );
}
