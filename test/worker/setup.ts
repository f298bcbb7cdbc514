import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { analyticsShards } from "../../src/directory/shards";

// The same migrations production and `npm start` apply, to every shard (DB, the main database, is
// the first); never a hand-built schema.
for (const shard of analyticsShards(env)) await applyD1Migrations(shard.db, env.TEST_MIGRATIONS);
