/**
 * Repository renames whose D1 rows wait (`pending_renames` in the organization's object, an outbox)
 * are followed by the webhook consumer in the order the object applied them. While an organization
 * moves between shards no rename's rows move (`MoveRunning`), so renames pile up: a chain old→New,
 * New→old, old→New must reach D1 in its order, and the rows end under New (contract section 9:
 * rows follow the repository to its new name; the old name matches nothing). An outside review
 * found them under old when the outbox kept one row per old name, the latest target overwriting
 * it in place (organization migration 0011 made it a log).
 */
import { describe, expect, it } from "vitest";
import { WEBHOOK_QUEUE } from "../../src/webhooks/queues";
import { consume, endMove, exported, markMoving, messageOf, prs, repoId, repositoryRenamed, world } from "./webhook-helpers";

describe("renames that waited for a move, followed in the order they were applied", () => {
  it("old→New, New→old, old→New: the rows end under New", { timeout: 60_000 }, async () => {
    const repo = { id: repoId(), name: "old", private: false };
    const { org, admin } = await world([repo]);
    await prs(org, admin, [[repo, 1]]);
    const home = org.toLowerCase();
    await markMoving(home);
    const rename = (from: string, to: string) => messageOf("repository", repositoryRenamed(org, repo, from, to));
    const resent: unknown[] = [];
    const queue = { send: async (b: unknown) => void resent.push(b), sendBatch: async () => {} };
    for (const body of [rename("old", "New"), rename("New", "old"), rename("old", "New")]) {
      const r = await consume(WEBHOOK_QUEUE, [body], { WEBHOOKS: queue });
      expect(r.result.explicitAcks).toEqual(r.ids); // waits for the move: sent again
    }
    expect(resent).toHaveLength(3);

    // The move ends; the waiting messages apply.
    await endMove(home);
    for (const body of resent) {
      const r = await consume(WEBHOOK_QUEUE, [body]);
      expect(r.result.explicitAcks).toEqual(r.ids);
    }
    expect((await exported(org, admin)).map((r) => `${r.repo}#${r.prNumber}`)).toEqual(["New#1"]);
  });
});
