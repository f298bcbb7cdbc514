/**
 * Stands in for every `cloudflare:*` module when `npm run openapi` loads the Worker's modules on
 * Node. Building the OpenAPI documents only needs those modules to load: classes are extended,
 * never instantiated, and `env` is never read at import time. A named import missing here fails
 * the build with esbuild's "No matching export" message: add the name.
 */
const unavailable = (name) => () => {
  throw new Error(`cloudflare:* stub: ${name} is not available when generating the OpenAPI documents`);
};

export class DurableObject {}
export class WorkerEntrypoint {}
export class WorkflowEntrypoint {}
export class WorkflowStep {}
export class RpcTarget {}
export class RpcStub {}
export class NonRetryableError extends Error {}
export class EmailMessage {}
export const env = {};
export const exports = {};
export const cache = {};
export const tracing = {};
export const waitUntil = unavailable("waitUntil");
export const withEnv = unavailable("withEnv");
export const withExports = unavailable("withExports");
export const withEnvAndExports = unavailable("withEnvAndExports");
export const connect = unavailable("connect");
