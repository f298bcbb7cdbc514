import { describe, expect, it } from "vitest";
import { appCall, ORIGIN, signIn } from "./app-helpers";
import { call, createUser, env, fetchWithEnv } from "./helpers";

/**
 * Contract section 13 as amended by issue 27 (item 8): local sign-in that is off does not exist,
 * GitHub sign-in's redirect_uri comes from APP_URL, starting a sign-in is throttled per address,
 * the Origin check is exact, and "sign out everywhere" ends every session of the person.
 */

const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

/** Status, the headers that could tell a route exists, and the body with the path written as PATH. */
async function shape(res: Response, path: string) {
  const body = (await res.text()).replaceAll(path, "PATH").replace(/"correlationId":"[^"]*"/, "");
  return {
    status: res.status,
    allow: res.headers.get("Allow"),
    type: res.headers.get("Content-Type"),
    setCookie: res.headers.get("Set-Cookie"),
    body,
  };
}

describe("with DEV_SIGN_IN off, local sign-in answers exactly as an unknown path", () => {
  it("404 to every method, header and body: not 405, 415, 400 or 403 first", async () => {
    const user = await createUser();
    const requests: [string, RequestInit][] = [
      ["GET", {}],
      ["HEAD", {}],
      ["PUT", { headers: { Origin: ORIGIN, "Content-Type": "application/json" }, body: "{}" }],
      ["DELETE", {}],
      ["POST", {}],
      ["POST", { headers: { Origin: "https://evil.test", "Content-Type": "application/json" }, body: "{}" }],
      ["POST", { headers: { Origin: ORIGIN, "Content-Type": "text/plain" }, body: "hello" }],
      ["POST", { headers: { Origin: ORIGIN, "Content-Type": "application/json" }, body: "{not json" }],
      ["POST", { headers: { Origin: ORIGIN, "Content-Type": "application/json" }, body: JSON.stringify({ githubUserId: user }) }],
    ];
    for (const value of [undefined, "", "false"]) {
      for (const [method, init] of requests) {
        const at = (path: string) =>
          fetchWithEnv(new Request(`${ORIGIN}${path}`, { method, ...init }), { DEV_SIGN_IN: value }, { documented: false });
        const real = await shape(await at("/auth/dev/sign-in"), "/auth/dev/sign-in");
        const unknown = await shape(await at("/auth/dev/sign-on"), "/auth/dev/sign-on");
        expect(real, `${method} ${JSON.stringify(init)} with DEV_SIGN_IN=${value}`).toEqual(unknown);
        expect(real.status).toBe(404);
      }
    }
  });
});

describe("GitHub sign-in's redirect_uri comes from APP_URL, never from the Host header", () => {
  const start = (host: string, overrides: Partial<Record<keyof Env, unknown>> = {}) =>
    fetchWithEnv(new Request(`https://${host}/auth/github`, { redirect: "manual" }), overrides);

  it("a request to another host still sends GitHub back to APP_URL", async () => {
    for (const host of ["evil.test", "service.test:8443"]) {
      const res = await start(host);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get("Location") ?? "").searchParams.get("redirect_uri")).toBe(
        "https://service.test/auth/github/callback",
      );
    }
    const res = await start("evil.test", { APP_URL: "https://reviews.example.com/" });
    expect(new URL(res.headers.get("Location") ?? "").searchParams.get("redirect_uri")).toBe(
      "https://reviews.example.com/auth/github/callback",
    );
  });

  it("without APP_URL (or with one that is no origin) the button and the page say what to set", async () => {
    for (const [value, says] of [
      [undefined, "APP_URL"],
      ["", "APP_URL"],
      ["https://service.test/app", "APP_URL must be an origin"],
      ["ftp://service.test", "APP_URL must be http(s)"],
    ] as const) {
      const res = await start("service.test", { APP_URL: value });
      expect(res.status).toBe(404);
      expect(await res.text()).toContain(says);
      const options = await fetchWithEnv(new Request(`${ORIGIN}/auth/options`), { APP_URL: value });
      const body = (await options.json()) as { github: boolean; githubSetup: string | null };
      expect(body.github).toBe(false);
      expect(body.githubSetup).toContain(says);
    }
    const on = (await (await call("/auth/options")).json()) as { github: boolean; githubSetup: string | null };
    expect(on).toMatchObject({ github: true, githubSetup: null });
  });
});

describe("starting a sign-in is throttled per client address, like failed authentication", () => {
  it("past the limit one address gets a 429 page with Retry-After and no attempt stored; another address still starts", async () => {
    // Addresses no other test uses: the binding's counts are shared by every test file that runs
    // within the same minute (webhooks-receive floods 198.51.100.77 with bad signatures).
    const begin = (ip: string) => call("/auth/github", { redirect: "manual", headers: { "CF-Connecting-IP": ip } });
    // The binding allows 100 per 60 s per address in fixed windows: a boundary may let up to 200 through.
    let started = 0;
    let res = await begin("203.0.113.177");
    while (res.status === 302 && started < 250) {
      started++;
      res = await begin("203.0.113.177");
    }
    expect(res.status).toBe(429);
    expect(started).toBeGreaterThanOrEqual(100);
    expect(started).toBeLessThanOrEqual(200);
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("Set-Cookie")).toBeNull();
    expect(await res.text()).toMatch(/Too many sign-in attempts/);
    // The address stays refused until its window ends. On a loaded machine the window can end
    // between the two requests: then the next one opens a fresh window, which must again let at
    // least 100 through before it refuses (a fixed window; nothing carried over).
    const next = await begin("203.0.113.177");
    if (next.status === 302) {
      let fresh = 1;
      while ((await begin("203.0.113.177")).status === 302 && fresh < 250) fresh++;
      expect(fresh).toBeGreaterThanOrEqual(100);
    } else {
      expect(next.status).toBe(429);
    }
    expect((await begin("198.51.100.177")).status).toBe(302);
  });
});

describe("the Origin check compares exactly", () => {
  it("an Origin that differs only in case or by a trailing slash is refused: 403 csrf_failed", async () => {
    const user = await createUser();
    const session = await signIn(user);
    for (const origin of [
      "HTTPS://service.test",
      "Https://service.test",
      "https://SERVICE.test",
      `${ORIGIN}/`,
      "http://service.test",
    ]) {
      const dev = await call("/auth/dev/sign-in", { method: "POST", json: { githubUserId: user }, headers: { Origin: origin } });
      expect(dev.status, origin).toBe(403);
      expect(await errorCode(dev)).toBe("csrf_failed");
      const app = await appCall("/app/api/keys", session, {
        method: "POST",
        json: { kind: "members", expiresInDays: 7 },
        origin,
      });
      expect(app.status, origin).toBe(403);
      expect(await errorCode(app)).toBe("csrf_failed");
    }
  });
});

describe("sign out everywhere", () => {
  it("ends every session of the person at once, and only theirs; the cookie is cleared", async () => {
    const user = await createUser();
    const [here, laptop, phone] = [await signIn(user), await signIn(user), await signIn(user)];
    const other = await signIn(await createUser());
    const res = await appCall("/auth/sign-out-everywhere", here, { method: "POST" });
    expect(res.status).toBe(204);
    expect(res.headers.get("Set-Cookie")).toMatch(/^__Host-session=; .*Max-Age=0/);
    for (const s of [here, laptop, phone]) expect((await appCall("/app/api/session", s)).status).toBe(401);
    expect((await appCall("/app/api/session", other)).status).toBe(200);
    // Signing in again works as before.
    expect((await appCall("/app/api/session", await signIn(user))).status).toBe(200);
  });

  it("needs the same-origin Origin and the session's CSRF token, like every state change", async () => {
    const session = await signIn(await createUser());
    expect((await appCall("/auth/sign-out-everywhere", session, { method: "POST", csrf: null })).status).toBe(403);
    expect((await appCall("/auth/sign-out-everywhere", session, { method: "POST", origin: "https://evil.test" })).status).toBe(
      403,
    );
    expect((await appCall("/app/api/session", session)).status).toBe(200);
    expect(env.DEV_SIGN_IN).toBe("true");
  });
});
