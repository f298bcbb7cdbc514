/**
 * `node --import ./scripts/lib/resolve-ts.mjs`: lets the scripts load the Worker's TypeScript
 * modules (Node strips the types), whose relative imports omit the `.ts` extension as the bundler
 * allows. Only a relative import from a `.ts` file that does not resolve as written is retried
 * with `.ts`.
 */
import { registerHooks } from "node:module";

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const retry = error?.code === "ERR_MODULE_NOT_FOUND" && specifier.startsWith(".") && context.parentURL?.endsWith(".ts");
      if (!retry) throw error;
      return nextResolve(`${specifier}.ts`, context);
    }
  },
});
