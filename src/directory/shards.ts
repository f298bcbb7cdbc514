import { callDurable } from "../lib/durable-call";

/**
 * Analytics shards (contract section 16): the one place that names a D1 binding for analytics.
 *
 * The shards are the D1 bindings listed, in order, in the `ANALYTICS_SHARDS` var (wrangler.toml).
 * `DB` is the main database: it holds the organization directory, the placements and moves below,
 * and parked deliveries, and it is also the first shard (an existing deployment keeps its rows
 * where they are). A shard's position in the list is its index, part of every pull request id it
 * allocates (`storage/events.ts`): the list is append-only.
 *
 * Each organization's analytics rows live in one shard, by home key (`resolve.ts`: stable across
 * renames and reinstalls), recorded in `analytics_placements` in `DB` and in the organization's
 * object. An organization is placed the first time anything names its home (an event, a delivery,
 * its registration): on the shard storing the fewest pull requests, which each shard counts itself
 * (`shard_counters`, kept by triggers: one row read per shard, no count over millions of rows).
 */

export interface Shard {
  /** The binding's name, as listed. */
  name: string;
  /** Its position in the list (0 to 1023). */
  index: number;
  db: D1Database;
}

/** The main database: directory, placements, moves, parked deliveries (not analytics rows of its own choosing). */
export const mainDatabase = (env: Env): D1Database => env.DB;

/** A misconfigured `ANALYTICS_SHARDS`: named in the error, thrown at the first request that needs a shard. */
export class ShardConfigError extends Error {
  override name = "ShardConfigError";
}

/**
 * The binding names of a shard list, or what is wrong with it: empty, a duplicate, a name that is
 * not a D1 binding, more than 1024, or a first shard other than DB. Pure: `isD1` says which names
 * are D1 bindings.
 */
export function parseShardList(value: string, isD1: (name: string) => boolean): string[] {
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  if (names.length === 0) throw new ShardConfigError('ANALYTICS_SHARDS lists no shard (expected e.g. "DB,ANALYTICS_2")');
  if (names.length > 1024) throw new ShardConfigError("ANALYTICS_SHARDS lists more than 1024 shards");
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new ShardConfigError(`ANALYTICS_SHARDS lists ${name} twice`);
    seen.add(name);
    if (!isD1(name)) throw new ShardConfigError(`ANALYTICS_SHARDS names ${name}, which is not a D1 binding of this Worker`);
  }
  if (names[0] !== "DB")
    throw new ShardConfigError("ANALYTICS_SHARDS must list DB first (organizations stored before shards live there)");
  return names;
}

const parsed = new WeakMap<object, Shard[]>();

/** The shards of this Worker, in order (checked once per `env`). */
export function analyticsShards(env: Env): Shard[] {
  const known = parsed.get(env);
  if (known) return known;
  const bindings = env as unknown as Record<string, unknown>;
  const isD1 = (name: string) => {
    const b = bindings[name] as { prepare?: unknown; batch?: unknown } | undefined;
    return typeof b === "object" && b !== null && typeof b.prepare === "function" && typeof b.batch === "function";
  };
  const names = parseShardList(String(env.ANALYTICS_SHARDS ?? ""), isD1);
  const shards = names.map((name, index) => ({ name, index, db: bindings[name] as D1Database }));
  parsed.set(env, shards);
  return shards;
}

/** The first shard (the main database). */
export const firstShard = (env: Env): Shard => analyticsShards(env)[0] as Shard;

/** The shard of this name, or undefined when it is not one. */
export const shardNamed = (env: Env, name: string): Shard | undefined => analyticsShards(env).find((s) => s.name === name);

/** The shard of a recorded name; a name no longer listed is a configuration error (never silently another shard). */
export function shardOf(env: Env, name: string): Shard {
  const shard = shardNamed(env, name);
  if (!shard) throw new ShardConfigError(`an organization is placed on ${name}, which ANALYTICS_SHARDS no longer lists`);
  return shard;
}

/** Where an organization's rows are: its shard, and the shard a running move copies them to. */
export interface Placement {
  home: string;
  shard: string;
  movingTo: string | null;
}

/** The placements of these homes, placing those never seen (`placeHomes`). */
export async function placementsOf(env: Env, homes: Iterable<string>): Promise<Map<string, Placement>> {
  const keys = [...new Set(homes)];
  const found = await readPlacements(env, keys);
  const missing = keys.filter((k) => !found.has(k));
  if (missing.length === 0) return found;
  await placeHomes(env, missing);
  for (const [home, p] of await readPlacements(env, missing)) found.set(home, p);
  return found;
}

/** One home's placement (placing it when never seen). */
export async function placementOf(env: Env, home: string): Promise<Placement> {
  const placement = (await placementsOf(env, [home])).get(home);
  if (!placement) throw new Error(`no placement recorded for ${home}`);
  return placement;
}

/** The placements recorded for these homes (none placed). */
export async function readPlacements(env: Env, homes: string[]): Promise<Map<string, Placement>> {
  const result = new Map<string, Placement>();
  if (homes.length === 0) return result;
  const { results } = await mainDatabase(env)
    .prepare("SELECT home_key, shard, moving_to FROM analytics_placements WHERE home_key IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(homes))
    .all<{ home_key: string; shard: string; moving_to: string | null }>();
  for (const r of results) result.set(r.home_key, { home: r.home_key, shard: r.shard, movingTo: r.moving_to });
  return result;
}

/**
 * First sight: the homes go to the shard storing the fewest pull requests; among equals the one
 * with the fewest organizations (new organizations registered before any event spread out), then
 * the first in list order. Concurrent first sights of one home agree on whichever insert came first.
 */
async function placeHomes(env: Env, homes: string[]): Promise<void> {
  const least = leastFilled(await shardLoads(env));
  await mainDatabase(env)
    .prepare(
      `INSERT INTO analytics_placements (home_key, shard) SELECT value, ?2 FROM json_each(?1) WHERE true
       ON CONFLICT (home_key) DO NOTHING`,
    )
    .bind(JSON.stringify(homes), least.shard)
    .run();
}

/** The shard placement picks (`placeHomes`): fewest pull requests, then fewest organizations, then list order. */
export const leastFilled = (loads: readonly ShardLoad[]): ShardLoad =>
  loads.reduce((a, b) =>
    b.pullRequests < a.pullRequests || (b.pullRequests === a.pullRequests && b.organizations < a.organizations) ? b : a,
  );

/** What each shard stores (`GET /internal/v1/shards`): organizations placed there, pull request rows. */
export interface ShardLoad {
  shard: string;
  organizations: number;
  pullRequests: number;
}

/** Every shard's load, in list order: one row read per shard (in parallel) and one grouped count of placements. */
export async function shardLoads(env: Env): Promise<ShardLoad[]> {
  const shards = analyticsShards(env);
  const [organizations, ...counts] = await Promise.all([
    mainDatabase(env)
      .prepare("SELECT shard, count(*) AS n FROM analytics_placements GROUP BY shard")
      .all<{ shard: string; n: number }>(),
    ...shards.map((s) =>
      s.db.prepare("SELECT pull_requests FROM shard_counters WHERE one = 1").first<{ pull_requests: number }>(),
    ),
  ]);
  const orgs = new Map(organizations.results.map((r) => [r.shard, r.n]));
  return shards.map((s, i) => ({
    shard: s.name,
    organizations: orgs.get(s.name) ?? 0,
    pullRequests: counts[i]?.pull_requests ?? 0,
  }));
}

/** `/readyz`: every shard answers `SELECT 1` (the main database is the first). */
export async function everyShardAnswers(env: Env): Promise<void> {
  await Promise.all(analyticsShards(env).map((s) => s.db.prepare("SELECT 1").first()));
}

/**
 * The shard to read an organization's analytics from, given what its object knows (`known`: the
 * shard it recorded, or null when it has none yet). Only an object that never learned its shard
 * costs a directory read (once: the object is told).
 */
export async function readShard(env: Env, home: string, known: string | null): Promise<Shard> {
  if (known !== null) return shardOf(env, known);
  const placement = await placementOf(env, home);
  await callDurable(() => env.ORGANIZATIONS.getByName(home).placeShard(placement.shard, null), { idempotent: true });
  return shardOf(env, placement.shard);
}

/** Tells an organization's object its shard after its registration (its first sight at the latest). */
export async function tellShard(env: Env, home: string): Promise<void> {
  const placement = await placementOf(env, home);
  await callDurable(() => env.ORGANIZATIONS.getByName(home).placeShard(placement.shard, null), { idempotent: true });
}
