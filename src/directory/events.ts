import { foldName } from "../lib/names";
import type { Event } from "../schemas/events";
import type { StoredActivity } from "../storage/activity";
import { copyRecords, recordKeys } from "../storage/copy";
import { type StoredEvents, writeEvents } from "../storage/events";
import { defaultHome } from "./identity";
import { gatherStrayRows } from "./learn";
import { mainDatabase, type Placement, placementsOf, shardOf } from "./shards";
import { homesOf } from "./store";

/** Where a batch goes: each folded login's home, and each home's placement (its shard, and a move's target). */
interface Route {
  homes: ReadonlyMap<string, string>;
  placements: ReadonlyMap<string, Placement>;
}

/**
 * Stores a validated event batch (the control plane's `POST /internal/v1/events`) at the homes of
 * the organizations its events name, on their shards: one read of the directory resolves the
 * batch's distinct logins (a login the directory does not name is its own home) and one the
 * placements of their homes (placing those never seen, `shards.ts`).
 *
 * Then write, read the route again, and write again where it changed: the batch is acknowledged
 * only once a read of the route after its last write found nothing new. So a rename's directory
 * write that came in between (after which the consumer gathers the rows under the new login's
 * folded key once) is followed here: the rows this batch left under the old key are gathered again
 * and the batch is stored at the new home. And a move that started or switched in between finds
 * the batch on its target too (`moves.ts`: that is what keeps a move exact).
 */
export async function storeEvents(env: Env, events: readonly Event[]): Promise<StoredEvents> {
  const logins = [...new Set(events.map((e) => e.org))];
  const route = async (): Promise<Route> => {
    const homes = await homesOf(mainDatabase(env), logins);
    return { homes, placements: await placementsOf(env, homes.values()) };
  };
  return storeRouted(env, events, route, async (before, after) => {
    for (const login of logins) {
      const key = foldName(login);
      const [was, is] = [before.homes.get(key), after.homes.get(key)];
      if (was !== undefined && is !== undefined && was !== is) await gatherStrayRows(env, is, login);
    }
  });
}

/**
 * Stores events of one organization whose home the caller resolved by asking its object (the
 * webhook consumer, `resolve.ts` `deliveryHomes`; the installation sync): no directory read, only
 * its placement (before and after, as `storeEvents`).
 */
export function storeEventsAtHome(
  env: Env,
  events: readonly Event[],
  at: { login: string; home: string },
): Promise<StoredEvents> {
  const homes = new Map([[defaultHome(at.login), at.home]]);
  return storeRouted(env, events, async () => ({ homes, placements: await placementsOf(env, [at.home]) }));
}

/** How often a batch follows a changed route before it gives up (a failure: the caller retries it whole). */
const MAX_ROUNDS = 5;

/**
 * Writes each home's events to every shard its placement names that it was not yet written to;
 * repeats after a fresh route until nothing is missing. The events go to a home's first shard;
 * any further shard (a move's target) gets the records they name as the first shard stored them,
 * with its pull request ids (`storage/copy.ts` `copyRecords`): one record, one state and one id
 * everywhere, whatever order the move's copy and this write reach the target in.
 */
async function storeRouted(
  env: Env,
  events: readonly Event[],
  route: () => Promise<Route>,
  onHomesChanged?: (before: Route, after: Route) => Promise<void>,
): Promise<StoredEvents> {
  let rowsWritten = 0;
  // Of the first shards' writes (a further shard holds copies of the same records).
  const activity: StoredActivity[] = [];
  /** Per home: the shards written, the first one first. */
  const written = new Map<string, string[]>();
  let current = await route();
  for (let round = 1; ; round++) {
    const missing = missingWrites(current, written);
    if (missing.length === 0) return { rowsWritten, activity };
    if (round > MAX_ROUNDS) throw new Error("the placement of a batch's organizations kept changing; not acknowledged");
    // First shards (a home never written yet: its placement's shard), in parallel; then the
    // further shards (a move's target, or a shard the home was not on before) with the first's ids.
    const firsts = missing.filter(({ home, shard }) => !written.has(home) && current.placements.get(home)?.shard === shard);
    for (const further of [false, true]) {
      const byShard = new Map<string, string[]>();
      for (const pair of missing) {
        if (firsts.includes(pair) === further) continue;
        byShard.set(pair.shard, [...(byShard.get(pair.shard) ?? []), pair.home]);
      }
      const results = await Promise.all(
        [...byShard].map(async ([name, homes]) => {
          const shard = shardOf(env, name);
          let rows = 0;
          if (!further) {
            const batch = events.filter((e) => homes.includes(homeOf(current, e)));
            const stored = await writeEvents(shard.db, batch, current.homes, { shardIndex: shard.index });
            rows = stored.rowsWritten;
            activity.push(...stored.activity);
          } else {
            // The records as the home's first shard stored them, ids and all (`storage/copy.ts`).
            for (const home of homes) {
              const first = shardOf(env, written.get(home)?.[0] ?? name);
              const batch = events.filter((e) => homeOf(current, e) === home);
              const target = { db: shard.db, orgKey: home, shardIndex: shard.index };
              rows += await copyRecords({ db: first.db, orgKey: home }, target, recordKeys(batch));
            }
          }
          for (const home of homes) written.set(home, [...(written.get(home) ?? []), name]);
          return rows;
        }),
      );
      rowsWritten += results.reduce((a, b) => a + b, 0);
    }
    const next = await route();
    if (onHomesChanged) await onHomesChanged(current, next);
    current = next;
  }
}

const homeOf = (route: Route, e: Event): string => {
  const key = foldName(e.org);
  return route.homes.get(key) ?? key;
};

/** The (home, shard) pairs the route names that were not written yet. */
function missingWrites(route: Route, written: ReadonlyMap<string, string[]>): { home: string; shard: string }[] {
  const missing: { home: string; shard: string }[] = [];
  for (const home of new Set(route.homes.values())) {
    const placement = route.placements.get(home);
    if (!placement) throw new Error(`no placement for ${home}`);
    for (const shard of [placement.shard, placement.movingTo]) {
      if (shard !== null && !written.get(home)?.includes(shard)) missing.push({ home, shard });
    }
  }
  return missing;
}
