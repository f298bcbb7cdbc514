import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { analyticsShards } from "../../src/directory/shards";
import { setDefaultTurnInterval } from "../../src/storage/taking-turns";

// The same migrations production and `npm start` apply, to every shard (DB, the main database, is
// the first); never a hand-built schema.
for (const shard of analyticsShards(env)) await applyD1Migrations(shard.db, env.TEST_MIGRATIONS);

// A timer costs about 1.2 ms here (nothing measurable under `wrangler dev`): the summary's
// statements take their turns at most every 4 ms of statements, as they did before the Worker's
// default became 0 (`storage/taking-turns.ts`); `summary-taking-turns.test.ts` tests 0 itself.
setDefaultTurnInterval(4);
