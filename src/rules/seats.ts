import type { z } from "zod";
import type { ErrorDetail } from "../lib/errors";
import type { SeatAssignment as SeatAssignmentSchema } from "../schemas/settings";
import type { Refusal } from "./members";

/**
 * Automatic seat assignment and the organization's settings (contract section 20) as plain
 * functions: the organization's object loads the facts, asks these and writes the outcome in the
 * same transaction as every other seat rule.
 */

export type SeatAssignment = z.infer<typeof SeatAssignmentSchema>;

/** What automatic assignment needs to know of one author of a newly learned pull request. */
export interface AuthorFacts {
  githubUserId: string;
  seat: boolean;
  isBot: boolean;
  /** Already on the waiting list. */
  waiting: boolean;
}

export interface SeatFacts {
  mode: SeatAssignment;
  /** Installed and not blocked: a blocked organization changes nothing until unblocked. */
  active: boolean;
  purchasedSeats: number;
  seatsUsed: number;
}

/** The members whose seat turns on, and those who join the waiting list. */
export interface SeatDecision {
  assign: string[];
  wait: string[];
}

/**
 * The authors (members, in the order their pull requests were learned; each once) of pull requests
 * the organization learned of for the first time. In `automatic` mode, a member without a seat who
 * is not a bot gets one while seats remain (purchased minus used: never above the purchased number,
 * also when a sync left more seats in use than bought); the others join the waiting list unless
 * they are on it. `manual` (and an inactive organization) decides nothing.
 */
export function decideAutomaticSeats(facts: SeatFacts, authors: readonly AuthorFacts[]): SeatDecision {
  const decision: SeatDecision = { assign: [], wait: [] };
  if (facts.mode !== "automatic" || !facts.active) return decision;
  let free = Math.max(0, facts.purchasedSeats - facts.seatsUsed);
  const seen = new Set<string>();
  for (const author of authors) {
    if (author.seat || author.isBot || seen.has(author.githubUserId)) continue;
    seen.add(author.githubUserId);
    if (free > 0) {
      decision.assign.push(author.githubUserId);
      free -= 1;
    } else if (!author.waiting) {
      decision.wait.push(author.githubUserId);
    }
  }
  return decision;
}

/** `PATCH .../settings`: the guard against the current value, answered like a member guard. */
export function decideSettingsChange(
  current: SeatAssignment,
  change: { seatAssignment: SeatAssignment; expectedSeatAssignment: SeatAssignment },
): { ok: true; before: SeatAssignment; after: SeatAssignment; changed: boolean } | Refusal {
  if (change.expectedSeatAssignment !== current) {
    const details: ErrorDetail[] = [{ path: "expectedSeatAssignment", message: `current value is ${current}` }];
    return {
      ok: false,
      code: "expected_value_mismatch",
      message: "The settings changed since you read them. Read them again and retry with the current values.",
      details,
    };
  }
  return { ok: true, before: current, after: change.seatAssignment, changed: current !== change.seatAssignment };
}
