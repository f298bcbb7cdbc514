import { useEffect, useState } from "preact/hooks";
import { api, explain, formatDate, type Schema } from "../api";
import { Notice } from "../layout";

type ConnectedApp = Schema<"ConnectedApp">;

/**
 * "Connected apps" on /app/keys (contract section 19): the MCP clients the person approved, with
 * their scopes and dates; disconnecting one refuses its tokens from the next request on.
 */
export function ConnectedApps() {
  const [apps, setApps] = useState<ConnectedApp[] | null>(null);
  const [message, setMessage] = useState<{ kind: "error" | "ok"; text: string }>({ kind: "ok", text: "" });
  const [busy, setBusy] = useState<string | null>(null);
  const reload = () =>
    api("GET", "/app/api/oauth/apps").then(
      (answer) => setApps(answer.apps),
      (e) => setMessage({ kind: "error", text: explain(e) }),
    );
  useEffect(() => {
    void reload();
  }, []);

  const disconnect = async (app: ConnectedApp) => {
    setBusy(app.grantId);
    try {
      await api("DELETE", "/app/api/oauth/apps/{grantId}", { path: { grantId: app.grantId } });
      setMessage({ kind: "ok", text: `${app.clientName} is disconnected: its access stopped working.` });
      await reload();
    } catch (e) {
      setMessage({ kind: "error", text: explain(e) });
    } finally {
      setBusy(null);
    }
  };

  return (
    <section class="connected-apps" aria-labelledby="connected-apps">
      <h2 id="connected-apps">Connected apps</h2>
      <p>
        AI agents and tools you allowed to use the MCP endpoint (<code>/mcp</code>) for you, through their own sign-in instead of
        a key.
      </p>
      <Notice kind={message.kind} text={message.text} />
      {apps === null ? (
        <p class="loading">Loading…</p>
      ) : apps.length === 0 ? (
        <p class="muted">No app is connected.</p>
      ) : (
        <ul class="cards apps">
          {apps.map((app) => (
            <li class="card" key={app.grantId}>
              <h3 class="client-name">{app.clientName}</h3>
              <dl class="facts">
                <dt>May</dt>
                <dd>{app.scopes.join(", ")}</dd>
                <dt>Approved</dt>
                <dd>{formatDate(app.approvedAt)}</dd>
                <dt>Last used</dt>
                <dd>{formatDate(app.lastUsedAt, { hour: true })}</dd>
              </dl>
              <button
                type="button"
                class="danger"
                disabled={busy === app.grantId}
                onClick={() => void disconnect(app)}
                aria-label={`Disconnect ${app.clientName}`}
              >
                Disconnect
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
