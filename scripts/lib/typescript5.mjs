/**
 * `node --import ./scripts/lib/typescript5.mjs`: tools that parse TypeScript with its compiler API
 * (dependency-cruiser) get TypeScript 5 (installed as `typescript5`). The project's TypeScript 7
 * is the native compiler, which has no JavaScript API for them to load.
 */
import { registerHooks } from "node:module";

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === "typescript" || specifier.startsWith("typescript/")) {
      return nextResolve(specifier.replace(/^typescript/, "typescript5"), context);
    }
    return nextResolve(specifier, context);
  },
});
