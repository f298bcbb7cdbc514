// Node stand-in for `cloudflare:workers`, so modules that define Durable Objects can be imported
// by tooling tests (the OpenAPI documents); nothing here runs a Durable Object.
export class DurableObject {}
export const env = {};
