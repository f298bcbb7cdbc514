import { DAY_MS } from "../lib/time";

/** The review window, inclusive at both ends, epoch ms. */
export interface ReviewWindow {
  start: number;
  end: number;
}

/**
 * Contract section 3: with neither bound, the last 30 days, 7 days or 24 hours, chosen from how
 * long the installation has existed; only startDate ends now; only endDate starts at the
 * installation (an endDate before the installation simply matches nothing).
 */
export function resolveWindow(start: number | null, end: number | null, installedAt: number, now: number): ReviewWindow {
  if (start === null && end === null) {
    const history = now - installedAt;
    const span = history >= 30 * DAY_MS ? 30 * DAY_MS : history >= 7 * DAY_MS ? 7 * DAY_MS : DAY_MS;
    return { start: now - span, end: now };
  }
  return { start: start ?? installedAt, end: end ?? now };
}
