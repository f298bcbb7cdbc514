import { useEffect, useState } from "preact/hooks";
import { type Answer, api, explain, type SessionInfo } from "../api";
import { Layout, Notice, TableWrap } from "../layout";

type OrgPage = Answer<"/app/api/orgs", "GET">;
export type OrgEntry = OrgPage["data"][number];

/** Walks the caller's organizations (contract section 8) until `want` says stop. */
export async function findOrg(org: string): Promise<OrgEntry | null> {
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams(cursor === null ? { limit: "100" } : { limit: "100", cursor });
    const page: OrgPage = await api("GET", "/app/api/orgs", { query });
    const found = page.data.find((e) => e.org.toLowerCase() === org.toLowerCase());
    if (found) return found;
    cursor = page.nextCursor;
  } while (cursor !== null);
  return null;
}

const yesNo = (v: boolean) => (v ? "yes" : "no");

/** `/app/orgs`: the organizations the caller is a member of, with what they may do there. */
export function OrgsPage({ session }: { session: SessionInfo }) {
  const [rows, setRows] = useState<OrgEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState("");
  const load = async (cursor: string | null) => {
    try {
      const page = await api("GET", "/app/api/orgs", { query: new URLSearchParams(cursor ? { cursor } : {}) });
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
    <Layout session={session} title="Organizations">
      <Notice kind="error" text={error} />
      {rows === null ? (
        !error && <p class="loading">Loading…</p>
      ) : rows.length === 0 ? (
        <p>You are not a member of any installed organization.</p>
      ) : (
        <TableWrap label="Your organizations">
          <table>
            <caption>Your organizations</caption>
            <thead>
              <tr>
                <th scope="col">Organization</th>
                <th scope="col">Pages</th>
                <th scope="col">Plan</th>
                <th scope="col">Your role</th>
                <th scope="col">Your seat</th>
                <th scope="col">Manage seats</th>
                <th scope="col">Manage roles</th>
                <th scope="col">Export analytics</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((o) => (
                <tr key={o.org}>
                  <th scope="row">
                    <a href={`/app/orgs/${encodeURIComponent(o.org)}/members`}>{o.org}</a>
                  </th>
                  <td class="nowrap">
                    <a href={`/app/orgs/${encodeURIComponent(o.org)}/members`} aria-label={`Members of ${o.org}`}>
                      Members
                    </a>
                    {" · "}
                    <a href={`/app/orgs/${encodeURIComponent(o.org)}/analytics`} aria-label={`Analytics of ${o.org}`}>
                      Analytics
                    </a>
                  </td>
                  <td>{o.plan}</td>
                  <td>{o.role}</td>
                  <td>{yesNo(o.seat)}</td>
                  <td>{yesNo(o.canManageSeats)}</td>
                  <td>{yesNo(o.canManageRoles)}</td>
                  <td>{yesNo(o.canExportAnalytics)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          More organizations
        </button>
      )}
    </Layout>
  );
}
