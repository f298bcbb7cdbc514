import { type Answer, ApiError, api, explain } from "../api";

/**
 * The members page's bulk seat change (contract sections 8 and 21): the members selected on the
 * shown page get or lose their seats in one batch PATCH, each change guarded by the seat the page
 * showed. The batch is all or nothing: one stale member refuses it whole, and the page says who
 * and why, in words.
 */

type Member = Answer<"/app/api/orgs/{org}/members", "GET">["data"][number];

export type Outcome = { kind: "ok" | "error"; text: string; reload?: boolean };

/** Gives (`seat` true) or takes the seats of `selected`, as the page showed them; members already so are left out. */
export async function changeSeats(org: string, selected: readonly Member[], seat: boolean): Promise<Outcome> {
  const targets = selected.filter((m) => m.seat !== seat);
  const already = selected.length - targets.length;
  const verb = seat ? "given" : "taken";
  if (targets.length === 0) {
    return { kind: "error", text: `Nothing to do: every member selected ${seat ? "already has" : "has no"} seat.` };
  }
  const changes = targets.map((m) => ({ githubUserId: m.githubUserId, seat, expectedSeat: m.seat }));
  try {
    const r = await api("PATCH", "/app/api/orgs/{org}/members", { path: { org }, body: { changes } });
    const names = targets.map((m) => m.githubLogin).join(", ");
    const skipped =
      already > 0
        ? ` (${already} selected ${already === 1 ? "member" : "members"} already ${seat ? "had" : "had no"} seat.)`
        : "";
    return {
      kind: "ok",
      text: `Seats ${verb}: ${names}. ${r.availableSeats} ${r.availableSeats === 1 ? "seat" : "seats"} available now.${skipped}`,
    };
  } catch (e) {
    return { kind: "error", text: batchRefusal(e, targets, seat), reload: e instanceof ApiError && e.status === 409 };
  }
}

/** Which member of the batch a `details` path names (`changes.3.expectedSeat`). */
const memberAt = (path: string, members: readonly Member[]) => {
  const i = /^changes\.(\d+)\./.exec(path)?.[1];
  return i === undefined ? undefined : members[Number(i)];
};

/** A refused batch in words: who, why, and that nothing changed. */
export function batchRefusal(error: unknown, members: readonly Member[], seat: boolean): string {
  const nothing = `Nothing was changed: no seat was ${seat ? "given" : "taken"}.`;
  if (!(error instanceof ApiError)) return `${explain(error)} ${nothing}`;
  if (error.code === "expected_value_mismatch") {
    const stale = error.details.flatMap((d) => {
      const m = memberAt(d.path, members);
      if (m === undefined) return [];
      const now = / is (true|false)$/.exec(d.message)?.[1];
      const shown = m.seat ? "on" : "off";
      const current = now === undefined ? "different" : now === "true" ? "on" : "off";
      return [`${m.githubLogin}'s seat is ${current} now, but this page showed it ${shown}`];
    });
    const who = stale.length > 0 ? stale.join("; ") : "a member selected changed";
    return `${nothing} Someone changed a member meanwhile: ${who}. The batch applies only to what you saw, so it was refused whole. Reload the list and choose again.`;
  }
  const named = error.details.map((d) => memberAt(d.path, members)?.githubLogin).filter((n) => n !== undefined);
  return `${nothing} ${explain(error)}${named.length > 0 ? ` (${named.join(", ")})` : ""}`;
}
