import { useState } from "preact/hooks";
import { api, explain, type SessionInfo } from "../api";
import { Notice } from "../layout";
import { SCOPE_TEXT, type Scope } from "../scopes";

/** What the Worker put in the page's `#consent-data` block (src/oauth/consent-page.ts). */
interface ConsentData {
  handle: string;
  clientName: string;
  clientDomain: string | null;
  redirectHost: string;
  redirectIsLoopback: boolean;
  scopes: Scope[];
}

function readData(): ConsentData | null {
  const text = document.getElementById("consent-data")?.textContent;
  return text ? (JSON.parse(text) as ConsentData) : null;
}

/**
 * `/oauth/authorize` for a signed-in person (contract section 19): which app asks, where it will
 * return, and each scope asked with what it allows, each one the person may untick. Approving or
 * denying is a same-origin POST with the session's CSRF token; the answer says where to go next.
 * Everything the client chose (its name, its host) is shown as text, never as markup.
 */
export function ConsentPage({ session }: { session: SessionInfo }) {
  const data = readData();
  const [ticked, setTicked] = useState<Scope[]>(data?.scopes ?? []);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  if (data === null) return <p class="error">This page lost its request. Start connecting again from the app.</p>;

  const send = async (approve: boolean) => {
    setBusy(true);
    setError("");
    try {
      const body = { handle: data.handle, approve, scopes: approve ? ticked : [] };
      const { redirectTo } = await api("POST", "/app/api/oauth/consent", { body });
      window.location.assign(redirectTo);
    } catch (e) {
      setError(explain(e));
      setBusy(false);
    }
  };
  const toggle = (scope: Scope, on: boolean) =>
    setTicked((now) => data.scopes.filter((s) => (s === scope ? on : now.includes(s))));

  return (
    <main id="main" class="consent">
      <h1>
        Allow <span class="client-name">{data.clientName}</span> to use this service for you?
      </h1>
      <p>
        Signed in as <strong>{session.user.githubLogin}</strong>.{" "}
        {data.clientDomain ? (
          <>
            Published by <strong>{data.clientDomain}</strong>.
          </>
        ) : (
          "This app registered itself: its name is not verified."
        )}
      </p>
      <p>
        After you decide, you go back to <strong>{data.redirectHost}</strong>.
      </p>
      {data.redirectIsLoopback && (
        <p class="loopback-warning">
          This sends access to an app on your own computer. Continue only if you just started connecting from it.
        </p>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void send(true);
        }}
      >
        <fieldset>
          <legend>What the app may do (untick what it should not)</legend>
          <ul class="scopes">
            {data.scopes.map((scope) => (
              <li key={scope}>
                <label>
                  <input
                    type="checkbox"
                    name="scope"
                    value={scope}
                    checked={ticked.includes(scope)}
                    onChange={(event) => toggle(scope, event.currentTarget.checked)}
                  />{" "}
                  <code>{scope}</code>: {SCOPE_TEXT[scope]}
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
        <Notice kind="error" text={error} />
        {ticked.length === 0 && <p class="muted">Tick at least one scope to approve, or deny.</p>}
        <div class="actions">
          <button type="submit" disabled={busy || ticked.length === 0}>
            Approve
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => void send(false)}>
            Deny
          </button>
        </div>
      </form>
      <p class="muted">
        You can disconnect the app at any time under <a href="/app/keys">API keys → Connected apps</a>.
      </p>
    </main>
  );
}
