import { foldName } from "../lib/names";
import { decideAutomaticSeats } from "../rules/seats";
import { learnPullRequests, raiseActivity } from "./store/activity";
import { appendAudit } from "./store/audit-log";
import type { Db } from "./store/db";
import { getInstallation } from "./store/installation";
import { membersByLoginKeys, seatsUsed, setMemberState } from "./store/members";
import { addSeatRequest, waitingAmong } from "./store/seat-requests";
import { seatAssignment } from "./store/settings";

/**
 * What the event write path reports of one pull request after storing it (`storage/activity.ts`):
 * D1's id, the author's folded login, the newest of its creation, merge and last completed review
 * (epoch ms), and whether the batch carried the pull request itself (only that teaches its author;
 * a review alone names no author the service did not know).
 */
export interface PullRequestActivity {
  prId: number;
  authorKey: string;
  at: number;
  learned: boolean;
}

/** How the report came: whether a new pull request may assign a seat (events, webhooks) or not (a sync's import). */
export interface ActivityOrigin {
  assign: boolean;
  correlationId: string;
}

/**
 * Inside the caller's transaction: raises the authors' activity, records the pull requests learned
 * for the first time, and in automatic mode gives their authors seats while any remain, else puts
 * them on the waiting list (`rules/seats.ts`), each seat audited once (`source: "automatic"`).
 * A replay finds every pull request known and changes nothing but activity, which only rises.
 */
export function recordActivity(
  db: Db,
  items: readonly PullRequestActivity[],
  origin: ActivityOrigin,
  now: number,
): { assigned: string[]; waiting: string[] } {
  const newest = new Map<string, number>();
  for (const { authorKey, at } of items) newest.set(authorKey, Math.max(at, newest.get(authorKey) ?? at));
  for (const [loginKey, at] of newest) raiseActivity(db, loginKey, at);

  const fresh = new Set(
    learnPullRequests(
      db,
      items.filter((i) => i.learned).map((i) => i.prId),
    ),
  );
  if (!origin.assign || fresh.size === 0) return { assigned: [], waiting: [] };
  const installation = getInstallation(db);
  const mode = seatAssignment(db);
  if (!installation || mode !== "automatic") return { assigned: [], waiting: [] };

  const authorKeys = [...new Set(items.filter((i) => fresh.has(i.prId)).map((i) => i.authorKey))];
  const byKey = new Map(membersByLoginKeys(db, authorKeys).map((m) => [foldName(m.githubLogin), m]));
  const authors = authorKeys.flatMap((key) => {
    const member = byKey.get(key);
    return member ? [member] : [];
  });
  const waiting = waitingAmong(
    db,
    authors.map((m) => m.githubUserId),
  );
  const decision = decideAutomaticSeats(
    {
      mode,
      active: installation.installed && !installation.blocked,
      purchasedSeats: installation.purchasedSeats,
      seatsUsed: seatsUsed(db),
    },
    authors.map((m) => ({ githubUserId: m.githubUserId, seat: m.seat, isBot: m.isBot, waiting: waiting.has(m.githubUserId) })),
  );
  const byId = new Map(authors.map((m) => [m.githubUserId, m]));
  const entries = decision.assign.flatMap((githubUserId) => {
    const member = byId.get(githubUserId);
    if (!member) return [];
    setMemberState(db, githubUserId, { seat: true, role: member.role });
    const before = { seat: false, role: member.role };
    return [{ action: "member.updated" as const, githubUserId, before, after: { ...before, seat: true } }];
  });
  if (entries.length > 0)
    appendAudit(db, now, { source: "automatic", correlationId: origin.correlationId, actor: null }, entries);
  for (const githubUserId of decision.wait) addSeatRequest(db, githubUserId, now);
  return { assigned: decision.assign, waiting: decision.wait };
}
