/**
 * An outside review (of 701474d, pending renames as a log) found two webhook consumers of one
 * organization replaying the log out of order: consumer 1 applies old→New and receives the pending
 * list [old→New]; before it moves any row, consumer 2 applies New→old, receives [old→New, New→old],
 * follows both and clears both; consumer 1 then followed its stale entry old→New. The shard now
 * records the last entry followed (`renames_followed`, migration 0018) and checks it in the move of
 * rows' own transaction, so the stale entry changes nothing. Contract section 9: rows follow the
 * repository to its current name ("old").
 */
import { describe, expect, it } from "vitest";
import { placementOf } from "../../src/directory/shards";
import { WEBHOOK_QUEUE } from "../../src/webhooks/queues";
import { env } from "./helpers";
import { consume, example, exported, messageOf, prs, repoId, world } from "./webhook-helpers";

describe("review: a stale pending-rename list followed after a newer consumer", () => {
  it("old→New then New→old, followed concurrently: the rows end under old", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "old", private: false };
    const { org, admin } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    const home = org.toLowerCase();
    const { shard } = await placementOf(env, home);

    const rename = (from: string, to: string) => {
      const payload = example("repository", "renamed", org);
      Object.assign(payload.repository as object, { id: repo.id, name: to, private: false });
      payload.changes = { repository: { name: { from } } };
      return messageOf("repository", payload);
    };
    const first = rename("old", "New");
    const second = rename("New", "old");

    // Consumer 1's shard database: consumer 2 runs entirely just before consumer 1's first move of rows.
    const real = (env as unknown as Record<string, D1Database>)[shard] as D1Database;
    let sawMove = false;
    let fired = false;
    const wrapped = new Proxy(real, {
      get(target, p) {
        if (p === "prepare")
          return (sql: string) => {
            if (sql.includes("JOIN pull_requests AS t ON")) sawMove = true;
            return target.prepare(sql);
          };
        if (p === "batch")
          return async (statements: D1PreparedStatement[]) => {
            if (sawMove && !fired) {
              fired = true;
              const r2 = await consume(WEBHOOK_QUEUE, [second]);
              expect(r2.result.explicitAcks).toEqual(r2.ids);
            }
            return target.batch(statements);
          };
        const v = Reflect.get(target, p);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const r1 = await consume(WEBHOOK_QUEUE, [first], { [shard]: wrapped });
    expect(fired).toBe(true);
    expect(r1.result.explicitAcks).toEqual(r1.ids);

    // The repository is named "old" again (the later rename); its pull request must be found there.
    expect((await exported(org, admin)).map((r) => `${r.repo}#${r.prNumber}`)).toEqual(["old#1"]);
  });
});
