import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashSessionToken } from "../../src/auth/session";
import { internalDocument, publicDocument } from "../../src/interfaces";
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from "../../src/rules/sessions";
import { appCall, ORIGIN, signIn } from "./app-helpers";
import { adminOk, call, createKey, createUser, env, fetchWithEnv } from "./helpers";

/** Contract section 13: sessions of the web app, CSRF, and which credential opens which door. */

const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe("local sign-in starts a session in a __Host- cookie", () => {
  it("sets __Host-session Secure, HttpOnly, SameSite=Lax, Path=/ and the session names its user", async () => {
    const user = await createUser();
    const res = await call("/auth/dev/sign-in", { method: "POST", json: { githubUserId: user }, headers: { Origin: ORIGIN } });
    expect(res.status).toBe(204);
    const cookie = res.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(new RegExp(`^__Host-session=${user}\\.[A-Za-z0-9_-]{43}; `));
    for (const attribute of ["Path=/", "Secure", "HttpOnly", "SameSite=Lax", "Max-Age=2592000"])
      expect(cookie).toContain(attribute);

    const session = await signIn(user);
    const info = await call("/app/api/session", { headers: { Cookie: session.cookie } });
    expect(info.status).toBe(200);
    expect(await info.json()).toEqual({ user: { githubUserId: user, githubLogin: `user${user}` }, csrfToken: session.csrf });
  });

  it("stores only the SHA-256 of the token, in the user's object", async () => {
    const user = await createUser();
    const session = await signIn(user);
    const rows = await runInDurableObject(env.USERS.getByName(user), (_instance, state) =>
      state.storage.sql.exec<{ token_hash: string }>("SELECT token_hash FROM sessions").toArray(),
    );
    expect(rows.map((r) => r.token_hash)).toEqual([await hashSessionToken(session.token)]);
    expect(JSON.stringify(rows)).not.toContain(session.token);
  });

  it("404 for a user the service does not know, 401 for a blocked one", async () => {
    const unknown = await call("/auth/dev/sign-in", {
      method: "POST",
      json: { githubUserId: "99999999901" },
      headers: { Origin: ORIGIN },
    });
    expect(unknown.status).toBe(404);
    const blocked = await createUser({ blocked: true });
    const res = await call("/auth/dev/sign-in", { method: "POST", json: { githubUserId: blocked }, headers: { Origin: ORIGIN } });
    expect(res.status).toBe(401);
  });

  it("403 csrf_failed without a same-origin Origin (no login CSRF)", async () => {
    const user = await createUser();
    for (const headers of [{}, { Origin: "https://evil.test" }, { Origin: "null" }] as Record<string, string>[]) {
      const res = await call("/auth/dev/sign-in", { method: "POST", json: { githubUserId: user }, headers });
      expect(res.status).toBe(403);
      expect(await errorCode(res)).toBe("csrf_failed");
      expect(res.headers.get("Set-Cookie")).toBeNull();
    }
  });

  it("does not exist unless DEV_SIGN_IN is true; the options say so", async () => {
    const user = await createUser();
    const request = () =>
      new Request(`${ORIGIN}/auth/dev/sign-in`, {
        method: "POST",
        headers: { Origin: ORIGIN, "Content-Type": "application/json" },
        body: JSON.stringify({ githubUserId: user }),
      });
    for (const value of [undefined, "", "false", "1"]) {
      expect((await fetchWithEnv(request(), { DEV_SIGN_IN: value })).status).toBe(404);
    }
    const off = await fetchWithEnv(new Request(`${ORIGIN}/auth/options`), {
      DEV_SIGN_IN: undefined,
      GITHUB_CLIENT_ID: undefined,
    });
    expect(await off.json()).toEqual({
      devSignIn: false,
      devUsers: [],
      github: false,
      githubSetup: expect.stringContaining("GITHUB_CLIENT_ID"),
    });
    const on = (await (await call("/auth/options")).json()) as { devSignIn: boolean; devUsers: { githubLogin: string }[] };
    expect(on.devSignIn).toBe(true);
    expect(on.devUsers.map((u) => u.githubLogin)).toContain("ada-admin");
  });
});

describe("a session ends", () => {
  it("at sign-out, at once; sign-out clears the cookie", async () => {
    const user = await createUser();
    const session = await signIn(user);
    const out = await appCall("/auth/sign-out", session, { method: "POST" });
    expect(out.status).toBe(204);
    expect(out.headers.get("Set-Cookie")).toMatch(/^__Host-session=; .*Max-Age=0/);
    const after = await appCall("/app/api/session", session);
    expect(after.status).toBe(401);
    expect(await errorCode(after)).toBe("unauthenticated");
  });

  it("sign-out ends only that session", async () => {
    const user = await createUser();
    const [a, b] = [await signIn(user), await signIn(user)];
    expect((await appCall("/auth/sign-out", a, { method: "POST" })).status).toBe(204);
    expect((await appCall("/app/api/session", a)).status).toBe(401);
    expect((await appCall("/app/api/session", b)).status).toBe(200);
  });

  it("when its user is blocked, on the next request", async () => {
    const user = await createUser();
    const session = await signIn(user);
    await adminOk("PUT", `/internal/v1/users/${user}`, { githubLogin: `user${user}`, blocked: true });
    const res = await appCall("/app/api/session", session);
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBeNull();
  });

  it("after 7 idle days, and 30 days after sign-in however active", async () => {
    const user = await createUser();
    const session = await signIn(user);
    const hash = await hashSessionToken(session.token);
    const stub = env.USERS.getByName(user);
    const signedInAt = await runInDurableObject(
      stub,
      (_i, state) => state.storage.sql.exec<{ created_at: number }>("SELECT created_at FROM sessions").one().created_at,
    );
    const verdict = (at: number) => runInDurableObject(stub, (instance) => instance.verifySession(hash, at, null, null).valid);
    expect(await verdict(signedInAt + SESSION_IDLE_MS - 1)).toBe(true);
    // Used just now (that request moved "last seen" to its hour): idle counts from there.
    expect(await verdict(signedInAt + SESSION_IDLE_MS + 3_600_000)).toBe(true);
    // Active every 6 days until the absolute limit, then refused whatever the activity.
    let at = signedInAt + SESSION_IDLE_MS + 3_600_000;
    while (at + 6 * 86_400_000 < signedInAt + SESSION_ABSOLUTE_MS) {
      at += 6 * 86_400_000;
      expect(await verdict(at)).toBe(true);
    }
    expect(await verdict(signedInAt + SESSION_ABSOLUTE_MS)).toBe(false);

    const idle = await signIn(user);
    const idleHash = await hashSessionToken(idle.token);
    const start = Date.now();
    expect(
      await runInDurableObject(stub, (i) => i.verifySession(idleHash, start + SESSION_IDLE_MS + 3_600_000, null, null).valid),
    ).toBe(false);
  });

  it("401 for a cookie that is missing, malformed, or carries a token the user's object does not hold", async () => {
    const user = await createUser();
    const forged = `__Host-session=${user}.${"A".repeat(43)}`;
    for (const cookie of [null, "__Host-session=nonsense", "other=1", forged]) {
      const res = await call("/app/api/keys", cookie === null ? {} : { headers: { Cookie: cookie } });
      expect(res.status).toBe(401);
      expect(await errorCode(res)).toBe("unauthenticated");
    }
  });
});

describe("CSRF: a state-changing app request needs a same-origin Origin and the session's X-CSRF-Token", () => {
  const create = (session: Awaited<ReturnType<typeof signIn>>, extra: { origin?: string | null; csrf?: string | null }) =>
    appCall("/app/api/keys", session, { method: "POST", json: { kind: "analytics", expiresInDays: 7 }, ...extra });

  it.each([
    ["no Origin", { origin: null }],
    ["another Origin", { origin: "https://evil.test" }],
    ["an Origin of another scheme", { origin: "http://service.test" }],
    ["no X-CSRF-Token", { csrf: null }],
    ["a wrong X-CSRF-Token", { csrf: "x".repeat(43) }],
    ["an empty X-CSRF-Token", { csrf: "" }],
  ])("403 csrf_failed with %s, and nothing changes", async (_name, extra) => {
    const user = await createUser();
    const session = await signIn(user);
    const res = await create(session, extra);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("csrf_failed");
    expect(await (await appCall("/app/api/keys", session)).json()).toEqual({ data: [] });
  });

  it("another session's CSRF token does not do", async () => {
    const user = await createUser();
    const [a, b] = [await signIn(user), await signIn(user)];
    const res = await create(a, { csrf: b.csrf });
    expect(res.status).toBe(403);
    expect((await create(a, {})).status).toBe(201);
  });

  it("sign-out needs it too", async () => {
    const session = await signIn(await createUser());
    expect((await appCall("/auth/sign-out", session, { method: "POST", csrf: null })).status).toBe(403);
    expect((await appCall("/app/api/session", session)).status).toBe(200);
  });
});

describe("a session never authenticates /api/..., a key never authenticates /app/...", () => {
  it("the session cookie on the public API is no credential", async () => {
    const session = await signIn(await createUser());
    const res = await call("/api/v1/organizations", { headers: { Cookie: session.cookie } });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
    const analytics = await call("/api/analytics/v1/prs?org=acme", { headers: { Cookie: session.cookie } });
    expect(analytics.status).toBe(401);
  });

  it("a key on the app's routes is no credential", async () => {
    const user = await createUser();
    const { key } = await createKey(user, "members");
    for (const path of ["/app/api/keys", "/app/api/orgs", "/app/api/session"]) {
      const res = await call(path, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(401);
    }
  });
});

describe("documents and pages", () => {
  it("the app's routes are in the internal document only", () => {
    const internal = Object.keys(internalDocument().paths ?? {});
    const pub = Object.keys(publicDocument().paths ?? {});
    expect(internal).toEqual(
      expect.arrayContaining(["/app/api/keys", "/app/api/session", "/auth/sign-out", "/auth/dev/sign-in"]),
    );
    expect(pub.filter((p) => p.startsWith("/app") || p.startsWith("/auth"))).toEqual([]);
  });

  it.each(["/", "/app/keys", "/app/orgs", "/app/orgs/acme/members", "/app/orgs/acme/audit-log"])(
    "%s is an HTML shell with a strict Content-Security-Policy",
    async (path) => {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
      const csp = res.headers.get("Content-Security-Policy") ?? "";
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      const html = await res.text();
      expect(html).toContain('<script type="module" src="/assets/app.js"></script>');
      // No inline script: every <script> has a src.
      expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull();
    },
  );
});
