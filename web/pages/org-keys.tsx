import { useEffect, useState } from "preact/hooks";
import { type Answer, ApiError, api, explain, type SessionInfo } from "../api";
import { Layout, Notice } from "../layout";
import { CreateKey, KeyCard, type KeyEndpoints } from "./keys";

type OrgKey = Answer<"/app/api/orgs/{org}/keys", "GET">["data"][number];

/**
 * `/app/orgs/{org}/keys` (contract section 18): the organization's own keys, for its admins. They
 * belong to the organization, so they keep working when the person who made them leaves.
 */
export function OrgKeysPage({ session, org }: { session: SessionInfo; org: string }) {
  const [keys, setKeys] = useState<OrgKey[] | null>(null);
  const [error, setError] = useState("");
  const [forAdmins, setForAdmins] = useState(false);
  const endpoints: KeyEndpoints = {
    create: (body) =>
      api("POST", "/app/api/orgs/{org}/keys", { path: { org }, body: { ...body, repositories: body.repositories ?? [] } }),
    revoke: async (keyId) => {
      await api("DELETE", "/app/api/orgs/{org}/keys/{keyId}", { path: { org, keyId } });
    },
    repositories: true,
  };
  const reload = () =>
    api("GET", "/app/api/orgs/{org}/keys", { path: { org } }).then(
      (list) => setKeys(list.data),
      (e) => {
        if (e instanceof ApiError && e.code === "not_org_admin") setForAdmins(true);
        else setError(explain(e));
      },
    );
  useEffect(() => {
    reload();
  }, []);
  return (
    <Layout session={session} title={`Keys of ${org}`}>
      <p>
        <a href={`/app/orgs/${encodeURIComponent(org)}/members`}>Members of {org}</a>
        {" · "}
        <a href={`/app/orgs/${encodeURIComponent(org)}/audit-log`}>Audit log</a>
      </p>
      <p>
        Keys that belong to {org}, not to a person: they keep working when whoever made them leaves, and end when revoked, when
        they expire, or when the app is uninstalled. Up to 25 of each kind; each is audited.
      </p>
      <Notice kind="error" text={error} />
      {forAdmins ? (
        <p>This page is for the organization's admins: ask one of them for a key.</p>
      ) : keys === null ? (
        error ? null : (
          <p class="loading">Loading…</p>
        )
      ) : (
        <>
          <h2>The organization's keys</h2>
          {keys.length === 0 ? (
            <p>No keys yet.</p>
          ) : (
            <div class="cards">
              {keys.map((k) => (
                <KeyCard key={k.keyId} apiKey={k} endpoints={endpoints} onChange={reload} />
              ))}
            </div>
          )}
          <CreateKey endpoints={endpoints} onChange={reload} />
        </>
      )}
    </Layout>
  );
}
