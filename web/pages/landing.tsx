import { useEffect, useState } from "preact/hooks";
import { type Answer, api, explain, type SessionInfo } from "../api";
import { Notice } from "../layout";

type SignInOptions = Answer<"/auth/options", "GET">;

/**
 * Where to go after signing in: `?next=` when it is this site's authorization endpoint (an MCP
 * client's request waiting for the person, contract section 19), else the keys page.
 */
function afterSignIn(): string {
  const next = new URLSearchParams(window.location.search).get("next");
  return next?.startsWith("/oauth/authorize?") ? next : "/app/keys";
}

const PENDING = "pending-authorization";

/**
 * GitHub sign-in ends on /app/keys: an authorization request that was waiting for it is kept in
 * this tab's sessionStorage and resumed from there (`resumeAuthorization`).
 */
function rememberNext(): void {
  const next = afterSignIn();
  if (next !== "/app/keys") sessionStorage.setItem(PENDING, next);
}

/** After a sign-in through GitHub: back to the authorization request that waited for it, if any. */
export function resumeAuthorization(): boolean {
  const next = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!next?.startsWith("/oauth/authorize?")) return false;
  window.location.assign(next);
  return true;
}

/** `/`: what the service is, how to sign in, and the API documents. */
export function Landing({ session }: { session: SessionInfo | null }) {
  const [options, setOptions] = useState<SignInOptions | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    if (session === null) api("GET", "/auth/options").then(setOptions, (e) => setError(explain(e)));
  }, [session]);

  const signInAs = async (githubUserId: string) => {
    try {
      await api("POST", "/auth/dev/sign-in", { body: { githubUserId } });
      window.location.assign(afterSignIn());
    } catch (e) {
      setError(explain(e));
    }
  };

  return (
    <main id="main" class="landing">
      <h1>Pull request analytics and member management</h1>
      <p class="lead">
        The automated pull-request reviewer's service: export merged pull requests with review metrics, and manage your
        organization's seats and roles. Sign in to create your personal API keys and manage members.
      </p>
      <section aria-labelledby="sign-in">
        <h2 id="sign-in">Sign in</h2>
        <Notice kind="error" text={error} />
        {session ? (
          <p>
            Signed in as <strong>{session.user.githubLogin}</strong>.{" "}
            {afterSignIn() !== "/app/keys" && (
              <>
                <a href={afterSignIn()}>Continue connecting the app</a> ·{" "}
              </>
            )}
            <a href="/app/keys">Your API keys</a> · <a href="/app/orgs">Your organizations</a>
          </p>
        ) : options === null ? (
          <p class="loading">Loading…</p>
        ) : (
          <>
            {options.github ? (
              <p>
                <a class="button" href="/auth/github" onClick={rememberNext}>
                  Sign in with GitHub
                </a>
              </p>
            ) : (
              <p class="muted" data-testid="github-setup">
                Sign-in with GitHub is not configured here. {options.githubSetup}
              </p>
            )}
            {options.devSignIn && (
              <div class="dev-sign-in">
                <h3>Local sign-in</h3>
                <p class="muted">DEV_SIGN_IN is on: sign in as one of the demo users, without GitHub.</p>
                <ul class="buttons">
                  {options.devUsers.map((u) => (
                    <li key={u.githubUserId}>
                      <button type="button" onClick={() => signInAs(u.githubUserId)}>
                        Sign in as {u.githubLogin}
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </>
        )}
      </section>
      <section aria-labelledby="docs">
        <h2 id="docs">For scripts: the API</h2>
        <p>
          Call the API with your personal keys (<code>Authorization: Bearer cak_…</code> or <code>cbk_…</code>). Its OpenAPI
          description: <a href="/openapi.json">/openapi.json</a>.
        </p>
      </section>
    </main>
  );
}
