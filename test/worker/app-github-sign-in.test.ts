import { runInDurableObject } from "cloudflare:test";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ORIGIN } from "./app-helpers";
import { adminOk, call, env, fetchWithEnv, unique } from "./helpers";

/**
 * Contract section 13: sign in with GitHub, the whole OAuth web flow (state, PKCE S256) against the
 * fake GitHub on loopback (test/fake-github/oauth.ts): the test plays the browser, following each
 * redirect itself. Every test signs in as its own GitHub login.
 */

interface Attempt {
  authorize: URL;
  state: string;
  /** The `Cookie` header the browser sends back with the callback. */
  cookie: string;
}

/** GET /auth/github, as the button does (redirects not followed: the test plays the browser). */
async function begin(): Promise<Attempt> {
  const res = await call("/auth/github", { redirect: "manual" });
  expect(res.status).toBe(302);
  const state = /^__Host-github-sign-in=([A-Za-z0-9_-]+);/.exec(res.headers.get("Set-Cookie") ?? "")?.[1] ?? "";
  expect(state).not.toBe("");
  return { authorize: new URL(res.headers.get("Location") ?? ""), state, cookie: `__Host-github-sign-in=${state}` };
}

/** The person at GitHub, signed in there as `login`: GitHub's redirect back to the callback. */
async function atGithub(authorize: URL, login: string): Promise<URL> {
  const url = new URL(authorize);
  url.searchParams.set("login", login);
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location") ?? "");
}

const callback = (back: URL, cookie: string | null) =>
  call(`${back.pathname}${back.search}`, { redirect: "manual", headers: cookie === null ? {} : { Cookie: cookie } });

/** A GitHub account on the fake, with how it behaves at the authorize page and the endpoints. */
async function githubAccount(behaviour: { consent?: "deny"; down?: ("token" | "user")[] } = {}) {
  const login = unique("gh");
  const res = await fetch(`${env.GITHUB_OAUTH_URL}/__fake/oauth/users/${login}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(behaviour),
  });
  const account = (await res.json()) as { id: number; login: string };
  return { login, id: String(account.id) };
}

/** The whole flow as far as the Worker's answer to the callback. */
async function signInWithGithub(login: string, attempt?: Attempt): Promise<{ res: Response; back: URL; attempt: Attempt }> {
  const a = attempt ?? (await begin());
  const back = await atGithub(a.authorize, login);
  return { res: await callback(back, a.cookie), back, attempt: a };
}

/** A page that is no error of ours: HTML, below 500, with a link on; the attempt's cookie cleared. */
async function expectPage(res: Response, status: number, says: RegExp): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
  const html = await res.text();
  expect(html).toMatch(says);
  expect(html).toMatch(/<a class="button" href="\/(auth\/github)?">/);
  expect(res.headers.get("Set-Cookie") ?? "").not.toContain("__Host-session=");
}

const sessionCookieOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => /^(__Host-session=[^;]+);/.exec(c)?.[1])
    .find((c) => c !== undefined);

describe("GET /auth/github redirects to GitHub's authorize URL with state and PKCE S256", () => {
  it("names the client, the callback, a fresh state (also in a __Host- cookie) and an S256 challenge of the kept verifier", async () => {
    const res = await call("/auth/github", { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("Location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(`${env.GITHUB_OAUTH_URL}/login/oauth/authorize`);
    const q = location.searchParams;
    expect(q.get("client_id")).toBe(env.GITHUB_CLIENT_ID);
    expect(q.get("redirect_uri")).toBe(`${ORIGIN}/auth/github/callback`);
    expect(q.get("code_challenge_method")).toBe("S256");
    const state = q.get("state") ?? "";
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const cookie = res.headers.get("Set-Cookie") ?? "";
    expect(cookie.startsWith(`__Host-github-sign-in=${state};`)).toBe(true);
    for (const attribute of ["Path=/", "Secure", "HttpOnly", "SameSite=Lax", "Max-Age=600"]) expect(cookie).toContain(attribute);

    // The verifier never leaves the server: the attempt's object holds it, and the challenge is its S256.
    const verifier = await runInDurableObject(
      env.SIGN_IN_ATTEMPTS.getByName(state),
      (_o, s) => s.storage.kv.get<{ verifier: string }>("attempt")?.verifier,
    );
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(q.get("code_challenge")).toBe(
      createHash("sha256")
        .update(verifier ?? "")
        .digest("base64url"),
    );
    expect(location.href).not.toContain(verifier);

    const again = await begin();
    expect(again.state).not.toBe(state);
  });

  it("without GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET: a page that says what to set, and the landing page's options say so", async () => {
    for (const missing of [{ GITHUB_CLIENT_ID: undefined }, { GITHUB_CLIENT_SECRET: "" }]) {
      const res = await fetchWithEnv(new Request(`${ORIGIN}/auth/github`), missing);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain(Object.keys(missing)[0]);
      const options = await fetchWithEnv(new Request(`${ORIGIN}/auth/options`), missing);
      expect(((await options.json()) as { github: boolean }).github).toBe(false);
    }
    expect(((await (await call("/auth/options")).json()) as { github: boolean }).github).toBe(true);
  });
});

describe("the callback signs in: user recorded, session started", () => {
  it("303 to /app/keys with a session for the GitHub user; /app/api works; the attempt's cookie is cleared", async () => {
    const { login, id } = await githubAccount();
    const { res } = await signInWithGithub(login);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/app/keys");
    const cookies = res.headers.getSetCookie();
    expect(cookies.some((c) => c.startsWith("__Host-github-sign-in=;") && c.includes("Max-Age=0"))).toBe(true);
    const session = sessionCookieOf(res) ?? "";
    expect(session).toMatch(new RegExp(`^__Host-session=${id}\\.`));

    const info = await call("/app/api/session", { headers: { Cookie: session } });
    expect(info.status).toBe(200);
    expect(((await info.json()) as { user: unknown }).user).toEqual({ githubUserId: id, githubLogin: login });
    expect((await call("/app/api/keys", { headers: { Cookie: session } })).status).toBe(200);
  });

  it("records the login GitHub reports for a known user, and never unblocks: a blocked user is refused", async () => {
    const { login, id } = await githubAccount();
    await adminOk("PUT", `/internal/v1/users/${id}`, { githubLogin: "old-login", blocked: false });
    const first = await signInWithGithub(login);
    expect(first.res.status).toBe(303);
    const info = await call("/app/api/session", { headers: { Cookie: sessionCookieOf(first.res) ?? "" } });
    expect(((await info.json()) as { user: { githubLogin: string } }).user.githubLogin).toBe(login);

    await adminOk("PUT", `/internal/v1/users/${id}`, { githubLogin: login, blocked: true });
    const { res } = await signInWithGithub(login);
    await expectPage(res, 403, /blocked/);
    const account = await runInDurableObject(env.USERS.getByName(id), (_o, s) =>
      s.storage.sql.exec<{ blocked: number }>("SELECT blocked FROM account").one(),
    );
    expect(account.blocked).toBe(1);
  });
});

describe("every other outcome is a clear page with a way back, never a 5xx", () => {
  it("a state that is not this browser's attempt: 400, nothing exchanged", async () => {
    const { login } = await githubAccount();
    const mine = await begin();
    const other = await begin();
    const back = await atGithub(other.authorize, login);
    await expectPage(await callback(back, mine.cookie), 400, /not for this browser/);
    await expectPage(await callback(back, null), 400, /not for this browser/);
    // The other browser's attempt was not spent by those tries.
    expect((await callback(back, other.cookie)).status).toBe(303);
  });

  it("a replayed callback (state used) and a replayed code (under a new state): 400", async () => {
    const { login } = await githubAccount();
    const first = await signInWithGithub(login);
    expect(first.res.status).toBe(303);
    await expectPage(await callback(first.back, first.attempt.cookie), 400, /used already/);

    const second = await begin();
    const code = first.back.searchParams.get("code") ?? "";
    const replay = new URL(first.back);
    replay.searchParams.set("state", second.state);
    expect(replay.searchParams.get("code")).toBe(code);
    await expectPage(await callback(replay, second.cookie), 400, /GitHub refused/);
  });

  it("an attempt older than 10 minutes is gone", async () => {
    const attempt = await begin();
    const verifier = await runInDurableObject(env.SIGN_IN_ATTEMPTS.getByName(attempt.state), (o) =>
      o.consume(Date.now() + 10 * 60 * 1000 + 1),
    );
    expect(verifier).toBeNull();
  });

  it("consent declined at GitHub: 403", async () => {
    const { login } = await githubAccount({ consent: "deny" });
    const { res, back } = await signInWithGithub(login);
    expect(back.searchParams.get("error")).toBe("access_denied");
    await expectPage(res, 403, /did not authorize/);
  });

  it("GitHub down at the token endpoint or at /user: a page that says so (200), nobody signed in", async () => {
    for (const down of ["token", "user"] as const) {
      const { login, id } = await githubAccount({ down: [down] });
      const { res } = await signInWithGithub(login);
      await expectPage(res, 502, /GitHub is not answering/);
      const recorded = await runInDurableObject(env.USERS.getByName(id), (_o, s) =>
        s.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'account'").toArray(),
      );
      if (recorded.length > 0) {
        const rows = await runInDurableObject(env.USERS.getByName(id), (_o, s) =>
          s.storage.sql.exec("SELECT * FROM account").toArray(),
        );
        expect(rows).toEqual([]);
      }
    }
  });
});
