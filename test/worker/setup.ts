import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// The same migrations production and `npm start` apply; never a hand-built schema.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
