import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { explain, loadSession, type SessionInfo, toLanding } from "./api";
import { AnalyticsPage } from "./pages/analytics";
import { AuditPage } from "./pages/audit";
import { ConsentPage } from "./pages/consent";
import { KeysPage } from "./pages/keys";
import { Landing, resumeAuthorization } from "./pages/landing";
import { MembersPage } from "./pages/members";
import { OrgKeysPage } from "./pages/org-keys";
import { OrgsPage } from "./pages/orgs";

/**
 * One bundle for every page: the Worker's HTML shell names the page in `<body data-page>`. App
 * pages need a session; without one the visitor goes to the landing page to sign in.
 */

const page = document.body.dataset.page ?? "landing";
/** `/app/orgs/{org}/...`: the organization the page is about. */
const org = decodeURIComponent(/^\/app\/orgs\/([^/]+)/.exec(window.location.pathname)?.[1] ?? "");

function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [error, setError] = useState("");
  useEffect(() => {
    loadSession().then(setSession, (e) => setError(explain(e)));
  }, []);

  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (page === "landing") return <Landing session={session} />;
  if (session === null) {
    toLanding();
    return <p class="loading">Signed out: taking you to the sign-in page…</p>;
  }
  if (resumeAuthorization()) return <p class="loading">Signed in: back to the app that asked for access…</p>;
  switch (page) {
    case "consent":
      return <ConsentPage session={session} />;
    case "keys":
      return <KeysPage session={session} />;
    case "orgs":
      return <OrgsPage session={session} />;
    case "members":
      return <MembersPage session={session} org={org} />;
    case "audit":
      return <AuditPage session={session} org={org} />;
    case "analytics":
      return <AnalyticsPage session={session} org={org} />;
    case "orgKeys":
      return <OrgKeysPage session={session} org={org} />;
    default:
      return <p>No such page.</p>;
  }
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
