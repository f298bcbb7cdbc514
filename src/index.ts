import { codedErrorEnvelope } from "./http/envelopes";
import { dispatch } from "./http/pipeline";
import { Registry } from "./http/registry";
import { INTERFACES } from "./interfaces";
import { healMoves } from "./moves/heal";
import { reconcileAll } from "./sync/reconcile";
import { handleQueue } from "./webhooks/consumer";

export { SignInAttemptObject } from "./auth/sign-in-attempt-object";
export { UserObject } from "./auth/user-object";
// Moves of an organization between analytics shards, one Workflow instance per move (docs/architecture.md, "Shards").
export { MoveWorkflow } from "./moves/workflow";
export { OrganizationObject } from "./organization/object";
// The installation sync with GitHub's API, one Workflow instance per sync (docs/architecture.md).
export { SyncWorkflow } from "./sync/workflow";

const registry = new Registry(INTERFACES);

export default {
  // Paths outside every interface answer in the members envelope (contract section 1).
  fetch: (request, env, ctx) => dispatch(registry, codedErrorEnvelope, request, env, ctx),
  // GitHub webhook deliveries (and the dead-letter queue): see webhooks/consumer.ts.
  queue: (batch, env) => handleQueue(batch, env),
  // The daily reconciliation with GitHub (`[triggers]` in wrangler.toml): see sync/reconcile.ts;
  // and every move between shards looked at, so that none stays stuck (moves/heal.ts).
  scheduled: async (controller, env) => {
    await reconcileAll(env, controller.scheduledTime);
    await healMoves(env, controller.scheduledTime);
  },
} satisfies ExportedHandler<Env>;
