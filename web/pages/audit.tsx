import { useEffect, useState } from "preact/hooks";
import { type Answer, api, explain, formatDate, type SessionInfo } from "../api";
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

/** `/app/orgs/{org}/audit-log`: admins only (contract section 8), newest first. */
export function AuditPage({ session, org }: { session: SessionInfo; org: string }) {
  const [rows, setRows] = useState<Entry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState("");
  const load = async (cursor: string | null) => {
    try {
      const query = new URLSearchParams(cursor ? { cursor } : {});
      const page = await api("GET", "/app/api/orgs/{org}/audit-log", { path: { org }, query });
      setRows((old) => [...(cursor ? (old ?? []) : []), ...page.data]);
      setNext(page.nextCursor);
    } catch (e) {
      setError(explain(e));
    }
  };
  useEffect(() => {
    load(null);
  }, []);
  return (
    <Layout session={session} title={`Audit log of ${org}`}>
      <p>
        <a href={`/app/orgs/${encodeURIComponent(org)}/members`}>Members of {org}</a>
        {" · "}
        <a href={`/app/orgs/${encodeURIComponent(org)}/analytics`}>Analytics</a>
      </p>
      <Notice kind="error" text={error} />
      {rows !== null && rows.length === 0 && <p>No changes recorded yet.</p>}
      {rows !== null && rows.length > 0 && (
        <TableWrap label="Member changes">
          <table>
            <caption>Member changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">Member</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
                <th scope="col">By</th>
                <th scope="col">Key</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td>{formatDate(e.at)}</td>
                  <td>{e.action.replace("member.", "")}</td>
                  <td>{e.githubUserId ?? "the organization"}</td>
                  <td>{state(e.before)}</td>
                  <td>{state(e.after)}</td>
                  <td>
                    {e.actor?.githubLogin ?? "—"} ({SOURCES[e.source] ?? e.source})
                  </td>
                  <td>{e.key === null ? "—" : e.key.name}</td>
                  <td>{e.ip ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          Older entries
        </button>
      )}
    </Layout>
  );
}
