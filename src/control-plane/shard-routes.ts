import { z } from "zod";
import { type Move, RUNNING } from "../directory/moves";
import { atOrganization } from "../directory/resolve";
import { placementOf, shardLoads, shardNamed } from "../directory/shards";
import { json } from "../http/envelopes";
import { routesFor } from "../http/route";
import { unwrap } from "../lib/durable-call";
import { AppError, badRequest, inStore } from "../lib/errors";
import { cancelMove, healMove } from "../moves/heal";
import { startMove } from "../moves/start";
import { GithubOrgName } from "../schemas/common";
import { MoveInput, MoveStatus, ShardList } from "../schemas/shards";

/**
 * `GET /internal/v1/shards` and `GET`/`POST`/`DELETE /internal/v1/organizations/{org}/move`
 * (contract section 16). Each look at a move heals it first (`moves/heal.ts`: a move never stays stuck).
 */

const adminRoute = routesFor("adminToken");

const OrgPath = z.object({ org: GithubOrgName });

export const listShards = adminRoute({
  method: "GET",
  path: "/internal/v1/shards",
  operationId: "listShards",
  summary: "The analytics shards, in order, with the organizations placed on each and the pull requests each stores",
  responses: {
    200: {
      description: "Every shard of ANALYTICS_SHARDS.",
      body: ShardList,
      example: {
        shards: [
          { shard: "DB", organizations: 120, pullRequests: 3_400_000 },
          { shard: "ANALYTICS_2", organizations: 118, pullRequests: 3_100_000 },
        ],
      },
    },
  },
  errors: [],
  handler: async (_args, { env }) => ({ shards: await inStore("D1", () => shardLoads(env)) }),
});

const MOVE_EXAMPLE = {
  shard: "DB",
  move: { org: "acme", from: "DB", to: "ANALYTICS_2", state: "copying", rowsCopied: 0, lastError: null },
};

/** The organization's home key, when it has an installation (its object answers for the login). */
async function homeOf(env: Env, org: string): Promise<{ home: string; login: string }> {
  let found: { home: string; login: string } | null = null;
  unwrap(
    await atOrganization(env, org, async (stub, at) => {
      const answer = await stub.readSync(at.login);
      if (answer.ok) found = at;
      return answer;
    }),
  );
  if (found === null) throw new AppError("org_not_found", "The organization cannot be resolved to an installation.");
  return found;
}

const present = (shard: string, move: Move | null) => ({
  shard,
  move: move && {
    org: move.org,
    from: move.from,
    to: move.to,
    state: move.state,
    rowsCopied: move.rowsCopied,
    lastError: move.error,
  },
});

export const readOrganizationMove = adminRoute({
  method: "GET",
  path: "/internal/v1/organizations/{org}/move",
  operationId: "getOrganizationMove",
  summary: "The organization's analytics shard and its running or last move between shards",
  request: { params: OrgPath },
  responses: {
    200: { description: "The shard and the move (null when none ever ran).", body: MoveStatus, example: MOVE_EXAMPLE },
  },
  errors: ["org_not_found"],
  handler: async ({ params }, { env }) => {
    const { home } = await homeOf(env, params.org);
    const move = await inStore("D1", () => healMove(env, home, Date.now()));
    return present((await inStore("D1", () => placementOf(env, home))).shard, move);
  },
});

export const moveOrganization = adminRoute({
  method: "POST",
  path: "/internal/v1/organizations/{org}/move",
  operationId: "moveOrganization",
  summary: "Move the organization's analytics to another shard, online",
  description:
    "Copies the organization's rows in batches, catches up with the writes that arrived meanwhile, switches reads and writes atomically, then deletes the source rows. Events, webhooks and syncs keep being applied meanwhile; the export answers exactly throughout. A durable background job (a Cloudflare Workflow): follow it with GET.",
  // The control plane's body limit (1 MiB, routes.ts); this body is a few bytes.
  request: { params: OrgPath, body: { schema: MoveInput, maxBytes: 1024 * 1024, example: { shard: "ANALYTICS_2" } } },
  responses: {
    202: { description: "Started; it runs in the background.", body: MoveStatus, example: MOVE_EXAMPLE },
    200: {
      description: "The organization is on that shard already: nothing to do (the last move, if any).",
      body: MoveStatus,
      example: { shard: "ANALYTICS_2", move: null },
    },
  },
  errors: ["org_not_found", "move_in_progress"],
  handler: async ({ params, body }, { env }) => {
    const at = await homeOf(env, params.org);
    if (!shardNamed(env, body.shard)) {
      throw badRequest("Invalid request body.", [{ path: "shard", message: "is not one of the shards in ANALYTICS_SHARDS" }]);
    }
    const now = Date.now();
    // A stuck move is resumed (then still running: 409) or failed (then a fresh move starts).
    const last = await inStore("D1", () => healMove(env, at.home, now));
    const placement = await inStore("D1", () => placementOf(env, at.home));
    const running = last !== null && RUNNING.includes(last.state);
    if (!running && placement.shard === body.shard) return present(placement.shard, last);
    const started = await inStore("D1", () => startMove(env, at, placement.shard, body.shard, now));
    if (started.kind === "in_progress") {
      throw new AppError(
        "move_in_progress",
        started.move.state === "failed"
          ? `The failed move of this organization to ${started.move.to} is still being undone; try again in a moment.`
          : `A move of this organization to ${started.move.to} is still running.`,
      );
    }
    return json(present(placement.shard, started.move), 202);
  },
});

export const cancelOrganizationMove = adminRoute({
  method: "DELETE",
  path: "/internal/v1/organizations/{org}/move",
  operationId: "cancelOrganizationMove",
  summary: "Cancel the organization's running move before its switch",
  description:
    'Before the switch the move ends failed with lastError "cancelled": the organization stays on its shard, untouched, and the partial copy on the target is deleted. After the switch a move can no longer be cancelled: it finishes.',
  request: { params: OrgPath },
  responses: {
    200: {
      description: "Cancelled: the move is failed, the organization on its source shard.",
      body: MoveStatus,
      example: {
        shard: "DB",
        move: { org: "acme", from: "DB", to: "ANALYTICS_2", state: "failed", rowsCopied: 1500, lastError: "cancelled" },
      },
    },
  },
  errors: ["org_not_found", "not_found", "move_switched"],
  handler: async ({ params }, { env }) => {
    const { home } = await homeOf(env, params.org);
    const cancelled = await inStore("D1", () => cancelMove(env, home));
    if (cancelled.kind === "none") throw new AppError("not_found", "No move of this organization is running.");
    if (cancelled.kind === "switched") {
      throw new AppError(
        "move_switched",
        "The move has switched to its target shard: it finishes and can no longer be cancelled.",
      );
    }
    return present((await inStore("D1", () => placementOf(env, home))).shard, cancelled.move);
  },
});
