import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ev, postEventsOk, shardDb, unique } from "./helpers";

/**
 * Contract sections 5 and 17: a batch stores what its events sent one at a time would, whatever
 * the stored row, under the version rule and the merge rule (an equal version changes nothing; a
 * merge beats an unmerged state of the same version; an older merge merges a newer unmerged state
 * and changes nothing else of it). The events of one pull request are applied one by one by the
 * upsert (`storage/events.ts`): a fold of the batch in memory replaced the stored state's fields
 * with an equal version's when an older merge came with it (an outside review's attack, the first
 * case below).
 */

const V = (hour: number) => `2026-10-05T${String(hour).padStart(2, "0")}:00:00.000Z`;

/** One state of pull request 1: its version, merge and two data fields. */
const state = fc.record({
  hour: fc.integer({ min: 8, max: 11 }),
  merged: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  author: fc.constantFrom<string>("a", "b", "c", "d"),
  lines: fc.integer({ min: 0, max: 50 }),
});
type State = typeof state extends fc.Arbitrary<infer T> ? T : never;

const eventOf = (org: string, s: State) =>
  ev.pr(org, 1, {
    author: s.author,
    linesAdded: s.lines,
    mergedAt: s.merged === null ? null : `2026-10-0${s.merged}T08:30:00.000Z`,
    updatedAt: V(s.hour),
  });

async function row(org: string) {
  const key = org.toLowerCase();
  return (await shardDb(key))
    .prepare("SELECT author, lines_added, merged_at, updated_at FROM pull_requests WHERE org_key = ?1 AND pr_number = 1")
    .bind(key)
    .first();
}

/** The same states: the stored ones one by one, then the rest one by one in one organization and as one batch in another. */
async function bothWays(stored: State[], batch: State[]) {
  const [oneByOne, oneBatch] = [unique("order1"), unique("order2")];
  for (const org of [oneByOne, oneBatch]) for (const s of stored) await postEventsOk([eventOf(org, s)]);
  for (const s of batch) await postEventsOk([eventOf(oneByOne, s)]);
  await postEventsOk(batch.map((s) => eventOf(oneBatch, s)));
  return { oneByOne: await row(oneByOne), oneBatch: await row(oneBatch) };
}

describe("one batch stores what its events sent one at a time would", () => {
  it("an equal version and an older merge in one batch leave the stored state's fields", async () => {
    const { oneByOne, oneBatch } = await bothWays(
      [{ hour: 10, merged: null, author: "stored", lines: 10 }],
      [
        { hour: 10, merged: null, author: "tie", lines: 20 },
        { hour: 9, merged: 2, author: "old", lines: 30 },
      ],
    );
    const expected = {
      author: "stored",
      lines_added: 10,
      merged_at: Date.parse("2026-10-02T08:30:00.000Z"),
      updated_at: Date.parse(V(10)),
    };
    expect(oneByOne).toEqual(expected);
    expect(oneBatch).toEqual(expected);
  });

  it("whatever the states, versions and merges, and the row stored before", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(state, { maxLength: 2 }),
        fc.array(state, { minLength: 1, maxLength: 5 }),
        async (stored, batch) => {
          const { oneByOne, oneBatch } = await bothWays(stored, batch);
          expect(oneBatch).toEqual(oneByOne);
        },
      ),
      { numRuns: 60 },
    );
  });
});
