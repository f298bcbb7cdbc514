import { callDurable } from "../lib/durable-call";
import type { StoredActivity } from "../storage/activity";
import { organizationAt } from "./resolve";

/**
 * How a batch of stored events reached the service (contract section 20): the reviewer's events
 * and GitHub's webhooks may assign seats automatically; an installation sync's import only records
 * activity and the pull requests learned. The correlation id goes into the audit entries.
 */
export interface ActivityOrigin {
  assign: boolean;
  correlationId: string;
}

/**
 * Tells each organization's object the activity of the pull requests a batch stored
 * (`storage/activity.ts`), one call per home, in parallel. The object's ledger of pull requests
 * learned makes a retry (of the call, or of the whole batch) change nothing twice.
 */
export async function reportActivity(env: Env, activity: readonly StoredActivity[], origin: ActivityOrigin): Promise<void> {
  const byHome = new Map<string, { prId: number; authorKey: string; at: number; learned: boolean }[]>();
  for (const { orgKey, prId, author, at, learned } of activity) {
    const items = byHome.get(orgKey) ?? [];
    // Event authors are validated GitHub logins (ASCII): the fold is SQLite's lower().
    items.push({ prId, authorKey: author.toLowerCase(), at, learned });
    byHome.set(orgKey, items);
  }
  await Promise.all(
    [...byHome].map(([home, items]) =>
      callDurable(() => organizationAt(env, home).recordActivity(items, origin), { idempotent: true }),
    ),
  );
}
