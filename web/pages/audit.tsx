import { useEffect, useState } from "preact/hooks";
import { type Answer, api, downloadCsvPages, explain, formatDate, type SessionInfo } from "../api";
import { Layout, Notice, TableWrap } from "../layout";

type Entry = Answer<"/app/api/orgs/{org}/audit-log", "GET">["data"][number];
/** A member's seat and role, or (settings.updated) the organization's seat assignment. */
type State = Entry["before"];

const state = (s: State | null) =>
  s === null ? "—" : "seatAssignment" in s ? `seat assignment ${s.seatAssignment}` : `${s.role}, seat ${s.seat ? "on" : "off"}`;
const SOURCES: Record<string, string> = {
  api: "API or app",
  sync: "control plane",
  github: "GitHub",
  automatic: "automatic seat assignment",
};
/** A filter's choices: "any" (no filter) and each value with its words. */
const options = (labels: Record<string, string>) => [
  <option key="" value="">
    any
  </option>,
  ...Object.entries(labels).map(([value, label]) => (
    <option key={value} value={value}>
      {label}
    </option>
  )),
];

const ACTIONS: Record<string, string> = {
  "member.added": "added",
  "member.updated": "changed",
  "member.removed": "removed",
  "settings.updated": "settings changed",
  "key.created": "key created",
  "key.regenerated": "key regenerated",
  "key.revoked": "key revoked",
};

/** The filters of contract section 21, as the URL and the API spell them (blank: not filtered). */
const FILTERS = ["action", "source", "actor", "githubUserId", "since", "until"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

const fromUrl = (): Filters => {
  const q = new URLSearchParams(window.location.search);
  return Object.fromEntries(FILTERS.map((name) => [name, q.get(name) ?? ""])) as Filters;
};
const toQuery = (f: Filters): URLSearchParams => {
  const q = new URLSearchParams();
  for (const name of FILTERS) if (f[name].trim()) q.set(name, f[name].trim());
  return q;
};

/** `/app/orgs/{org}/audit-log`: admins only (contract sections 8 and 21), newest first, filtered, downloadable. */
export function AuditPage({ session, org }: { session: SessionInfo; org: string }) {
  const [rows, setRows] = useState<Entry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [filters, setFilters] = useState<Filters>(fromUrl);
  const [draft, setDraft] = useState<Filters>(filters);
  const [error, setError] = useState("");
  const load = async (cursor: string | null, f: Filters) => {
    try {
      setError("");
      const query = toQuery(f);
      if (cursor) query.set("cursor", cursor);
      const page = await api("GET", "/app/api/orgs/{org}/audit-log", { path: { org }, query });
      setRows((old) => [...(cursor ? (old ?? []) : []), ...page.data]);
      setNext(page.nextCursor);
    } catch (e) {
      setRows(null);
      setNext(null);
      setError(explain(e));
    }
  };
  useEffect(() => {
    load(null, filters);
  }, []);
  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(draft);
    const q = toQuery(draft);
    window.history.replaceState(null, "", `${window.location.pathname}${q.size > 0 ? `?${q}` : ""}`);
    load(null, draft);
  };
  const download = async () => {
    try {
      setError("");
      await downloadCsvPages(`/app/api/orgs/${encodeURIComponent(org)}/audit-log`, toQuery(filters), `${org}-audit-log.csv`);
    } catch (e) {
      setError(explain(e));
    }
  };
  const field = (name: keyof Filters) => ({
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement | HTMLSelectElement).value }),
  });
  return (
    <Layout session={session} title={`Audit log of ${org}`}>
      <p>
        <a href={`/app/orgs/${encodeURIComponent(org)}/members`}>Members of {org}</a>
        {" · "}
        <a href={`/app/orgs/${encodeURIComponent(org)}/analytics`}>Analytics</a>
      </p>
      <form class="filters" onSubmit={apply} aria-label="Filter the audit log">
        <label>
          What
          <select {...field("action")}>{options(ACTIONS)}</select>
        </label>
        <label>
          Source
          <select {...field("source")}>{options(SOURCES)}</select>
        </label>
        <label>
          Member (GitHub user id)
          <input type="text" inputMode="numeric" pattern="[0-9]*" maxLength={20} {...field("githubUserId")} />
        </label>
        <label>
          By (GitHub user id)
          <input type="text" inputMode="numeric" pattern="[0-9]*" maxLength={20} {...field("actor")} />
        </label>
        <label>
          From (UTC day)
          <input type="date" {...field("since")} />
        </label>
        <label>
          To (UTC day)
          <input type="date" {...field("until")} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <p>
        <button type="button" class="secondary" onClick={download}>
          Download CSV (every entry of this filter)
        </button>
      </p>
      <Notice kind="error" text={error} />
      {rows !== null && rows.length === 0 && <p>No changes match.</p>}
      {rows !== null && rows.length > 0 && (
        <TableWrap label="Member changes">
          {/* At a phone's width each entry is a card of labelled lines (web/app.css `table.stack`). */}
          <table class="stack">
            <caption>Member changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Member</th>
                <th scope="col">What</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
                <th scope="col">By</th>
                <th scope="col">Source</th>
                <th scope="col">Key</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td data-label="When">{formatDate(e.at)}</td>
                  <td data-label="Member">
                    {e.githubUserId === null
                      ? "the organization"
                      : (e.githubLogin ?? `left the organization (id ${e.githubUserId})`)}
                  </td>
                  <td data-label="What">{ACTIONS[e.action] ?? e.action}</td>
                  <td data-label="Before">{state(e.before)}</td>
                  <td data-label="After">{state(e.after)}</td>
                  <td data-label="By">{e.actor?.githubLogin ?? "—"}</td>
                  <td data-label="Source">{SOURCES[e.source] ?? e.source}</td>
                  <td data-label="Key">{e.key === null ? "—" : e.key.name}</td>
                  <td data-label="From">{e.ip ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next, filters)}>
          Older entries
        </button>
      )}
    </Layout>
  );
}
