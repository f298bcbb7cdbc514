import { useEffect, useState } from "preact/hooks";
import { type Answer, ApiError, api, downloadCsvPages, explain, type RequestBody, type SessionInfo } from "../api";
import { Layout, Notice, Pager, TableWrap } from "../layout";
import { changeSeats, type Outcome } from "./members-bulk";
import { findOrg, type OrgEntry } from "./orgs";
import { lastActivity, SeatTools } from "./seats";

type MemberPage = Answer<"/app/api/orgs/{org}/members", "GET">;
type Member = MemberPage["data"][number];
type MemberChange = RequestBody<"/app/api/orgs/{org}/members/{githubUserId}", "PATCH">;
interface Filters {
  role: string;
  seat: string;
  search: string;
  inactiveDays: string;
}
const ROLES = ["member", "admin", "viewer"] as const;

/**
 * `/app/orgs/{org}/members`: the list with filters, search and pages; admins turn seats on and off
 * and change roles in place, each change the guarded PATCH with the values the page showed.
 */
export function MembersPage({ session, org }: { session: SessionInfo; org: string }) {
  const [entry, setEntry] = useState<OrgEntry | null>(null);
  const [page, setPage] = useState<MemberPage | null>(null);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [filters, setFilters] = useState<Filters>({ role: "", seat: "", search: "", inactiveDays: "" });
  const [draft, setDraft] = useState<Filters>(filters);
  const [message, setMessage] = useState<Outcome>({ kind: "ok", text: "" });
  /** The members selected on the shown page (by id); a new page or filter clears it. */
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  /** A batch is on its way: its buttons wait (a second click would send the same guards again). */
  const [sending, setSending] = useState(false);

  const load = async (cursor: string | null, f: Filters) => {
    const q = new URLSearchParams();
    if (f.role) q.set("role", f.role);
    if (f.seat) q.set("seat", f.seat);
    if (f.search) q.set("search", f.search);
    if (f.inactiveDays) q.set("inactiveDays", f.inactiveDays);
    if (cursor) q.set("cursor", cursor);
    try {
      setPage(await api("GET", "/app/api/orgs/{org}/members", { path: { org }, query: q }));
      setSelected(new Set());
    } catch (e) {
      setMessage({ kind: "error", text: explain(e) });
    }
  };
  const downloadCsv = async () => {
    const q = new URLSearchParams();
    if (filters.role) q.set("role", filters.role);
    if (filters.seat) q.set("seat", filters.seat);
    if (filters.search) q.set("search", filters.search);
    try {
      await downloadCsvPages(`/app/api/orgs/${encodeURIComponent(org)}/members`, q, `${org}-members.csv`);
    } catch (e) {
      setMessage({ kind: "error", text: explain(e) });
    }
  };
  useEffect(() => {
    findOrg(org).then(setEntry, () => setEntry(null));
    load(null, filters);
  }, []);

  const cursor = cursors[cursors.length - 1] ?? null;
  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(draft);
    setCursors([null]);
    load(null, draft);
  };

  /**
   * A guarded change; on a refusal the row is read again and the reason said in words. The message
   * comes once the list shows the state it speaks of.
   */
  const change = async (m: Member, body: MemberChange, done: string) => {
    setMessage({ kind: "ok", text: "" });
    let outcome: { kind: "error" | "ok"; text: string } = { kind: "ok", text: done };
    const path = { org, githubUserId: m.githubUserId };
    try {
      await api("PATCH", "/app/api/orgs/{org}/members/{githubUserId}", { path, body });
    } catch (e) {
      let text = explain(e);
      if (e instanceof ApiError && e.code === "expected_value_mismatch") {
        const now = await api("GET", "/app/api/orgs/{org}/members/{githubUserId}", { path }).catch(() => null);
        if (now) text += ` ${now.githubLogin} now has role ${now.role} and seat ${now.seat ? "on" : "off"}.`;
      }
      outcome = { kind: "error", text };
    }
    await load(cursor, filters);
    setMessage(outcome);
  };

  /** One guarded batch PATCH for the selected members, with the seats the page showed. */
  const bulk = async (seat: boolean) => {
    if (!page || sending) return;
    setSending(true);
    setMessage({ kind: "ok", text: "" });
    const outcome = await changeSeats(
      org,
      page.data.filter((m) => selected.has(m.githubUserId)),
      seat,
    );
    // A refused batch leaves the page as it was (the person reads why, then reloads); a done one shows the new seats.
    if (!outcome.reload) await load(cursor, filters);
    setMessage(outcome);
    setSending(false);
  };
  const reload = async () => {
    await load(cursor, filters);
    setMessage({ kind: "ok", text: "The list shows the current seats and roles." });
  };
  const pick = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };

  const canSeats = entry?.canManageSeats ?? false;
  const canRoles = entry?.canManageRoles ?? false;
  const everyShown = page !== null && page.data.length > 0 && page.data.every((m) => selected.has(m.githubUserId));
  return (
    <Layout session={session} title={`Members of ${org}`}>
      <p>
        <a href="/app/orgs">All organizations</a>
        {" · "}
        <a href={`/app/orgs/${encodeURIComponent(org)}/analytics`}>Analytics</a>
        {entry?.role === "admin" && (
          <>
            {" · "}
            <a href={`/app/orgs/${encodeURIComponent(org)}/audit-log`}>Audit log</a>
            {" · "}
            <a href={`/app/orgs/${encodeURIComponent(org)}/keys`}>Keys</a>
          </>
        )}
      </p>
      {page && (
        <p class="seats" aria-live="polite">
          Seats: {page.seats.used} of {page.seats.purchased} used, {page.seats.available} available.
        </p>
      )}
      {entry && !canSeats && !canRoles && (
        <p class="muted">
          {entry.role === "admin"
            ? "Seats and roles can be changed only with an active Team or Pro subscription billed through the service."
            : "Only admins can change seats and roles."}
        </p>
      )}
      <form class="filters" onSubmit={apply}>
        <label>
          Role
          <select value={draft.role} onChange={(e) => setDraft({ ...draft, role: e.currentTarget.value })}>
            <option value="">any</option>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          Seat
          <select value={draft.seat} onChange={(e) => setDraft({ ...draft, seat: e.currentTarget.value })}>
            <option value="">any</option>
            <option value="true">on</option>
            <option value="false">off</option>
          </select>
        </label>
        <label>
          Search
          <input
            type="search"
            maxLength={100}
            value={draft.search}
            placeholder="login or email"
            onInput={(e) => setDraft({ ...draft, search: e.currentTarget.value })}
          />
        </label>
        <label>
          Inactive for (days)
          <input
            type="text"
            inputMode="numeric"
            pattern="[0-9]*"
            maxLength={4}
            value={draft.inactiveDays}
            placeholder="any"
            onInput={(e) => setDraft({ ...draft, inactiveDays: e.currentTarget.value.trim() })}
          />
        </label>
        <button type="submit">Filter</button>
      </form>
      <p>
        <button type="button" class="secondary" onClick={downloadCsv}>
          Download CSV (every member of this filter)
        </button>
      </p>
      <Notice kind={message.kind} text={message.text} />
      {message.reload && (
        <p>
          <button type="button" onClick={reload}>
            Reload the list
          </button>
        </p>
      )}
      {canSeats && page && page.data.length > 0 && (
        <section class="bulk" aria-label="Selected members">
          <span aria-live="polite">
            {selected.size === 0 ? "Select members to give or take several seats at once." : `${selected.size} selected.`}
          </span>
          {selected.size > 0 && (
            <>
              <button type="button" disabled={sending} onClick={() => bulk(true)}>
                Give seats
              </button>
              <button type="button" class="danger" disabled={sending} onClick={() => bulk(false)}>
                Take seats
              </button>
              <button type="button" class="secondary" onClick={() => setSelected(new Set())}>
                Clear selection
              </button>
            </>
          )}
        </section>
      )}
      {page === null ? null : page.data.length === 0 ? (
        <p>No member matches.</p>
      ) : (
        <TableWrap label="Members">
          <table>
            <caption>Members{page.nextCursor || cursors.length > 1 ? ` (page ${cursors.length})` : ""}</caption>
            <thead>
              <tr>
                {canSeats && (
                  <th scope="col" class="select">
                    <label>
                      <input
                        type="checkbox"
                        checked={everyShown}
                        onChange={(e) =>
                          setSelected(e.currentTarget.checked ? new Set(page.data.map((m) => m.githubUserId)) : new Set())
                        }
                      />
                      <span class="sr-only">Select every member shown</span>
                    </label>
                  </th>
                )}
                <th scope="col">Login</th>
                <th scope="col" class="wide-only">
                  Work email
                </th>
                <th scope="col">Role</th>
                <th scope="col">Seat</th>
                <th scope="col">Last activity</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((m) => (
                <tr key={m.githubUserId}>
                  {canSeats && (
                    <td class="select">
                      <label>
                        <input
                          type="checkbox"
                          checked={selected.has(m.githubUserId)}
                          onChange={(e) => pick(m.githubUserId, e.currentTarget.checked)}
                        />
                        <span class="sr-only">Select {m.githubLogin}</span>
                      </label>
                    </td>
                  )}
                  <th scope="row">
                    {m.githubLogin}
                    {m.isBot && <span class="tag">bot</span>}
                  </th>
                  <td class="wide-only">{m.workEmail ?? "—"}</td>
                  <td>
                    {canRoles ? (
                      <select
                        aria-label={`Role of ${m.githubLogin}`}
                        value={m.role}
                        onChange={(e) =>
                          change(
                            m,
                            { role: e.currentTarget.value as Member["role"], expectedRole: m.role },
                            `${m.githubLogin} is now ${e.currentTarget.value}.`,
                          )
                        }
                      >
                        {ROLES.map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    ) : (
                      m.role
                    )}
                  </td>
                  <td>
                    {canSeats ? (
                      <label class="switch">
                        <input
                          type="checkbox"
                          checked={m.seat}
                          onChange={(e) => {
                            // The page shows the value it read until the service answers.
                            e.currentTarget.checked = m.seat;
                            change(
                              m,
                              { seat: !m.seat, expectedSeat: m.seat },
                              `Seat of ${m.githubLogin} turned ${m.seat ? "off" : "on"}.`,
                            );
                          }}
                        />
                        <span aria-hidden="true">{m.seat ? "On" : "Off"}</span>
                        <span class="sr-only">Seat of {m.githubLogin}</span>
                      </label>
                    ) : m.seat ? (
                      "on"
                    ) : (
                      "off"
                    )}
                  </td>
                  <td class="nowrap">{lastActivity(m.lastActivityAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Pager
        cursors={cursors}
        next={page?.nextCursor}
        go={(stack) => {
          setCursors(stack);
          load(stack[stack.length - 1] ?? null, filters);
        }}
      />
      {entry?.role === "admin" && <SeatTools org={org} canManage={canSeats} changed={() => load(cursor, filters)} />}
    </Layout>
  );
}
