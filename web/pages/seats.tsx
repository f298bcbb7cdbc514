import { useEffect, useState } from "preact/hooks";
import { type Answer, ApiError, api, explain, formatDate } from "../api";
import { Notice } from "../layout";

/**
 * The members page's seat tools for admins (contract section 20): the seat assignment setting, the
 * waiting list, and freeing the seats of members inactive for N days (a preview, then one guarded
 * batch PATCH with the values the preview showed).
 */

type Page = Answer<"/app/api/orgs/{org}/members", "GET">;
type SeatHolder = Page["data"][number];
type SeatRequest = Answer<"/app/api/orgs/{org}/seat-requests", "GET">["data"][number];
type SeatAssignment = Answer<"/app/api/orgs/{org}/settings", "GET">["seatAssignment"];

/** The most seats one batch PATCH frees (contract section 8: 1 to 100 changes). */
const BATCH_MAX = 100;

/** "2026-11-02" or "never": a member's last activity, to the day. */
export const lastActivity = (iso: string | null): string => (iso === null ? "never" : formatDate(iso).slice(0, 10));

export function SeatTools({ org, canManage, changed }: { org: string; canManage: boolean; changed: () => void }) {
  const path = { org };
  const [mode, setMode] = useState<SeatAssignment | null>(null);
  const [waiting, setWaiting] = useState<SeatRequest[] | null>(null);
  const [days, setDays] = useState("90");
  const [preview, setPreview] = useState<{ days: number; members: SeatHolder[]; more: boolean } | null>(null);
  const [message, setMessage] = useState<{ kind: "error" | "ok"; text: string }>({ kind: "ok", text: "" });

  const loadWaiting = () =>
    api("GET", "/app/api/orgs/{org}/seat-requests", { path }).then(
      (r) => setWaiting(r.data),
      (e) => setMessage({ kind: "error", text: explain(e) }),
    );
  useEffect(() => {
    api("GET", "/app/api/orgs/{org}/settings", { path }).then(
      (s) => setMode(s.seatAssignment),
      (e) => setMessage({ kind: "error", text: explain(e) }),
    );
    loadWaiting();
  }, []);

  /** The guarded settings PATCH with the value shown; a stale one says what it is now. */
  const switchMode = async (shown: SeatAssignment) => {
    const next: SeatAssignment = shown === "manual" ? "automatic" : "manual";
    try {
      const r = await api("PATCH", "/app/api/orgs/{org}/settings", {
        path,
        body: { seatAssignment: next, expectedSeatAssignment: shown },
      });
      setMode(r.after.seatAssignment);
      setMessage({ kind: "ok", text: `Seat assignment is now ${r.after.seatAssignment}.` });
    } catch (e) {
      const fresh = await api("GET", "/app/api/orgs/{org}/settings", { path }).catch(() => null);
      if (fresh) setMode(fresh.seatAssignment);
      const stale = e instanceof ApiError && e.code === "expected_value_mismatch";
      setMessage({
        kind: "error",
        text: stale
          ? `Someone changed the seat assignment meanwhile: it is ${fresh?.seatAssignment ?? "different"} now. Nothing was changed.`
          : explain(e),
      });
    }
  };

  /** Every seat holder inactive for `n` days, walking the pages (up to one batch). */
  const showPreview = async (e: Event) => {
    e.preventDefault();
    setMessage({ kind: "ok", text: "" });
    const n = Number(days);
    if (!/^\d+$/.test(days) || n < 1 || n > 3650) {
      setMessage({ kind: "error", text: "Enter a whole number of days from 1 to 3650." });
      return;
    }
    const members: SeatHolder[] = [];
    let cursor: string | null = null;
    try {
      do {
        const q = new URLSearchParams({ seat: "true", inactiveDays: String(n), limit: "100" });
        if (cursor) q.set("cursor", cursor);
        const page: Page = await api("GET", "/app/api/orgs/{org}/members", { path, query: q });
        members.push(...page.data);
        cursor = page.nextCursor;
      } while (cursor !== null && members.length <= BATCH_MAX);
    } catch (error) {
      setMessage({ kind: "error", text: explain(error) });
      return;
    }
    setPreview({ days: n, members: members.slice(0, BATCH_MAX), more: members.length > BATCH_MAX || cursor !== null });
  };

  /** One batch PATCH, all or nothing, guarded by the seats the preview showed. */
  const free = async () => {
    if (!preview) return;
    const changes = preview.members.map((m) => ({ githubUserId: m.githubUserId, seat: false, expectedSeat: m.seat }));
    try {
      const r = await api("PATCH", "/app/api/orgs/{org}/members", { path, body: { changes } });
      setMessage({
        kind: "ok",
        text: `Freed ${changes.length} seat${changes.length === 1 ? "" : "s"}; ${r.availableSeats} available now.`,
      });
    } catch (e) {
      setMessage({ kind: "error", text: batchRefusal(e, preview.members) });
    }
    setPreview(null);
    changed();
    loadWaiting();
  };

  return (
    <section class="seat-tools" aria-labelledby="seat-tools-title">
      <h2 id="seat-tools-title">Seats</h2>
      <Notice kind={message.kind} text={message.text} />
      {mode && (
        <p>
          Seat assignment: <strong data-testid="seat-assignment">{mode}</strong>.{" "}
          {mode === "automatic"
            ? "A member's first new pull request gets them a seat while one is free; otherwise they wait below."
            : "Only admins turn seats on."}{" "}
          {canManage && (
            <button type="button" class="secondary" onClick={() => switchMode(mode)}>
              {mode === "manual" ? "Assign seats automatically" : "Assign seats manually"}
            </button>
          )}
        </p>
      )}
      <h3>Waiting for a seat</h3>
      {waiting === null ? null : waiting.length === 0 ? (
        <p class="muted">Nobody is waiting.</p>
      ) : (
        <ul aria-label="Waiting list">
          {waiting.map((w) => (
            <li key={w.githubUserId}>
              {w.githubLogin} <span class="muted">since {formatDate(w.since)}</span>
            </li>
          ))}
        </ul>
      )}
      {canManage && (
        <>
          <h3>Free idle seats</h3>
          <form class="filters" onSubmit={showPreview}>
            <label>
              Idle for (days)
              <input
                type="text"
                inputMode="numeric"
                pattern="[0-9]*"
                maxLength={4}
                value={days}
                onInput={(e) => setDays(e.currentTarget.value.trim())}
              />
            </label>
            <button type="submit" class="secondary">
              Preview
            </button>
          </form>
          {preview && (
            <section class="confirm" aria-label="Seats to free">
              {preview.members.length === 0 ? (
                <p>No seat holder has been inactive for {preview.days} days.</p>
              ) : (
                <>
                  <p>
                    {preview.members.length === 1 ? "This seat holder has" : `These ${preview.members.length} seat holders have`}{" "}
                    had no pull request activity for {preview.days} days
                    {preview.more ? ` (the first ${BATCH_MAX}; free them, then preview again for the rest)` : ""}:
                  </p>
                  <ul>
                    {preview.members.map((m) => (
                      <li key={m.githubUserId}>
                        {m.githubLogin} <span class="muted">last active {lastActivity(m.lastActivityAt)}</span>
                      </li>
                    ))}
                  </ul>
                  <button type="button" class="danger" onClick={free}>
                    Free {preview.members.length} seat{preview.members.length === 1 ? "" : "s"}
                  </button>
                </>
              )}
              <button type="button" class="secondary" onClick={() => setPreview(null)}>
                Cancel
              </button>
            </section>
          )}
        </>
      )}
    </section>
  );
}

/** A refused batch in words: a stale guard names who changed (`changes.3.expectedSeat`). */
function batchRefusal(error: unknown, shown: readonly SeatHolder[]): string {
  if (!(error instanceof ApiError) || error.code !== "expected_value_mismatch") return explain(error);
  const who = error.details
    .map((d) => /^changes\.(\d+)\./.exec(d.path)?.[1])
    .map((i) => (i === undefined ? undefined : shown[Number(i)]?.githubLogin))
    .filter((login): login is string => login !== undefined);
  const names = who.length > 0 ? who.join(", ") : "a member shown";
  return `Nothing was changed: someone changed the seat of ${names} since the preview. Preview again to see the current seats.`;
}
