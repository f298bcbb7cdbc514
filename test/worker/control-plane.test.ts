import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import {
  ADMIN_TOKEN,
  addMember,
  admin,
  adminOk,
  call,
  createOrg,
  createUser,
  env,
  fetchWithEnv,
  type MemberErrorBody,
  unique,
  uniqueInstallationId,
  uniqueUserId,
} from "./helpers";

type ErrorBody = MemberErrorBody;

/** An organization's body, with an installation id of its own (GitHub's are unique: a PUT finds an organization by it). */
const orgBody = () => ({
  installationId: uniqueInstallationId(),
  installedAt: "2026-01-02T03:04:05.678+02:00",
  plan: "pro",
  subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
});

const orgTables = (org: string) =>
  runInDurableObject(env.ORGANIZATIONS.getByName(org.toLowerCase()), (_i, state) => ({
    installation: state.storage.sql.exec("SELECT * FROM installation").toArray(),
    members: state.storage.sql.exec("SELECT * FROM members ORDER BY github_user_id").toArray(),
    repositories: state.storage.sql.exec("SELECT * FROM repositories ORDER BY repo_key").toArray(),
    collaborators: state.storage.sql.exec("SELECT * FROM collaborators ORDER BY repo_key, github_user_id").toArray(),
  }));

describe("admin token", () => {
  it("401 unauthenticated without a token", async () => {
    const res = await call(`/internal/v1/organizations/${unique("o")}`, { method: "PUT", json: orgBody() });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
    expect(((await res.json()) as ErrorBody).error.code).toBe("unauthenticated");
  });

  it("401 with a wrong token, also one of the same length", async () => {
    for (const token of ["wrong", "x".repeat(ADMIN_TOKEN.length), `${ADMIN_TOKEN}x`]) {
      const res = await call(`/internal/v1/organizations/${unique("o")}`, {
        method: "PUT",
        json: orgBody(),
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(401);
    }
  });

  it("the control plane does not exist (404) when the secret is unset or empty", async () => {
    for (const secret of [undefined, ""]) {
      const request = new Request(`https://service.test/internal/v1/organizations/${unique("o")}`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${secret ?? "anything"}`, "Content-Type": "application/json" },
        body: JSON.stringify(orgBody()),
      });
      const res = await fetchWithEnv(request, { ADMIN_TOKEN: secret });
      expect(res.status).toBe(404);
    }
  });

  it("an unknown /internal path without a token is 401, not a map of the routes", async () => {
    expect((await call("/internal/v1/nothing-here")).status).toBe(401);
  });

  it("wrong tokens count as failed authentications: a flooding address gets 429 with Retry-After, even with the right token", async () => {
    const from = (ip: string, token: string) =>
      call("/internal/v1/users/4711", {
        method: "PUT",
        json: { githubLogin: "flood" },
        headers: { Authorization: `Bearer ${token}`, "CF-Connecting-IP": ip },
      });
    // The binding allows 100 failures per 60 s per address, in fixed wall-clock windows locally: if
    // a window boundary passes during the flood, up to 200 may be refused before the first 429.
    let refused = 0;
    let first = await from("203.0.113.41", "wrong");
    while (first.status === 401 && refused < 250) {
      refused++;
      first = await from("203.0.113.41", "wrong");
    }
    expect(first.status).toBe(429);
    expect(refused).toBeGreaterThanOrEqual(100);
    expect(refused).toBeLessThanOrEqual(200);
    expect(((await first.json()) as ErrorBody).error).toMatchObject({ code: "rate_limited", retriable: true });
    const right = await from("203.0.113.41", ADMIN_TOKEN);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect((await from("203.0.113.42", ADMIN_TOKEN)).status).toBe(200);
  });

  it("an ADMIN_TOKEN shorter than 32 characters is refused: the tree answers 404 and an error line says why", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const short = "a".repeat(31);
      const request = new Request("https://service.test/internal/v1/users/4712", {
        method: "PUT",
        headers: { Authorization: `Bearer ${short}`, "Content-Type": "application/json" },
        body: JSON.stringify({ githubLogin: "short" }),
      });
      expect((await fetchWithEnv(request, { ADMIN_TOKEN: short })).status).toBe(404);
      const lines = logged.mock.calls.map((c) => JSON.parse(String(c[0])) as { level: string; event: string });
      expect(lines).toContainEqual(
        expect.objectContaining({ level: "error", event: expect.stringMatching(/ADMIN_TOKEN.*32 characters/) }),
      );
      // 32 characters are enough.
      const enough = "a".repeat(32);
      const ok = new Request("https://service.test/internal/v1/users/4712", {
        method: "PUT",
        headers: { Authorization: `Bearer ${enough}`, "Content-Type": "application/json" },
        body: JSON.stringify({ githubLogin: "short" }),
      });
      expect((await fetchWithEnv(ok, { ADMIN_TOKEN: enough })).status).toBe(200);
    } finally {
      logged.mockRestore();
    }
  });
});

describe("request bodies", () => {
  const put = (body: BodyInit, contentType = "application/json") =>
    call(`/internal/v1/organizations/${unique("o")}`, {
      method: "PUT",
      body,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": contentType },
    });

  it("415 unless Content-Type is application/json; a charset parameter is fine", async () => {
    expect((await put(JSON.stringify(orgBody()), "text/plain")).status).toBe(415);
    expect((await put(JSON.stringify(orgBody()), "application/jsonx")).status).toBe(415);
    expect((await put(JSON.stringify(orgBody()), "application/json; charset=utf-8")).status).toBe(200);
    const res = await put(JSON.stringify(orgBody()), "text/plain");
    expect(((await res.json()) as ErrorBody).error.code).toBe("unsupported_media_type");
  });

  it("413 past 1 MiB", async () => {
    const res = await put(JSON.stringify({ ...orgBody(), padding: "x".repeat(1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorBody).error.code).toBe("payload_too_large");
  });

  it.each([
    ["not JSON", "{nope"],
    ["an array", "[]"],
    ["a string", '"x"'],
    ["null", "null"],
    ["empty", ""],
  ])("400 for a body that is %s", async (_name, body) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.code).toBe("invalid_request");
  });

  it("400 naming each unknown field and each wrong type", async () => {
    const res = await put(JSON.stringify({ ...orgBody(), installationId: "7", colour: "red", extra: 1 }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    const paths = body.error.details.map((d) => d.path).sort();
    expect(paths).toEqual(["colour", "extra", "installationId"]);
  });

  it("400 with nested paths", async () => {
    const res = await put(JSON.stringify({ ...orgBody(), subscription: { ...orgBody().subscription, purchasedSeats: -1 } }));
    const body = (await res.json()) as ErrorBody;
    expect(body.error.details.map((d) => d.path)).toEqual(["subscription.purchasedSeats"]);
  });

  it("no date-time of the control plane takes a date alone, and the message says what it does take", async () => {
    const dateAlone =
      "must be a timestamp with a time and Z or ±HH:MM, like 2026-11-02T00:00:00Z; a date alone is not accepted here";
    const org = await put(JSON.stringify({ ...orgBody(), installedAt: "2026-01-01" }));
    expect(((await org.json()) as ErrorBody).error.details).toEqual([{ path: "installedAt", message: dateAlone }]);
    const user = await createUser();
    const key = await admin("POST", `/internal/v1/users/${user}/api-keys`, { kind: "analytics", expiresAt: "2099-01-01" });
    expect(((await key.json()) as ErrorBody).error.details).toEqual([{ path: "expiresAt", message: dateAlone }]);
  });

  it("400 for a timestamp without a zone or an impossible date", async () => {
    for (const installedAt of ["2026-01-02T03:04:05", "2026-02-30T00:00:00Z", "yesterday"]) {
      const res = await put(JSON.stringify({ ...orgBody(), installedAt }));
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error.details[0]?.path).toBe("installedAt");
    }
  });
});

describe("organizations", () => {
  it("PUT stores and returns the organization, times in UTC with milliseconds", async () => {
    const org = unique("Acme");
    const body = orgBody();
    const stored = await adminOk("PUT", `/internal/v1/organizations/${org}`, body);
    expect(stored).toEqual({
      login: org,
      installationId: body.installationId,
      installedAt: "2026-01-02T01:04:05.678Z",
      blocked: false,
      plan: "pro",
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 5 },
    });
  });

  it("is an idempotent upsert, and logins are case-insensitive", async () => {
    const org = unique("Acme");
    const body = orgBody();
    await adminOk("PUT", `/internal/v1/organizations/${org}`, body);
    const first = await orgTables(org);
    await adminOk("PUT", `/internal/v1/organizations/${org}`, body);
    expect(await orgTables(org)).toEqual(first);
    await adminOk("PUT", `/internal/v1/organizations/${org.toUpperCase()}`, { ...body, plan: "team", blocked: true });
    const after = await orgTables(org);
    expect(after.installation).toHaveLength(1);
    expect(after.installation[0]).toMatchObject({ plan: "team", blocked: 1 });
  });
});

describe("repositories", () => {
  it("PUT stores access: privacy and a collaborator list that is replaced, not merged", async () => {
    const org = await createOrg();
    const stored = await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/Api`, {
      private: true,
      collaborators: ["2", "1", "2"],
    });
    expect(stored).toEqual({ org, name: "Api", private: true, collaborators: ["1", "2"] });
    await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false, collaborators: ["3"] });
    const tables = await orgTables(org);
    expect(tables.repositories).toEqual([
      { repo_key: "api", name: "api", private: 0, github_id: null, removed: 0, visibility_version: null },
    ]);
    expect(tables.collaborators).toEqual([{ repo_key: "api", github_user_id: "3" }]);
  });

  it("collaborators default to none and must be numeric ids", async () => {
    const org = await createOrg();
    const stored = await adminOk("PUT", `/internal/v1/organizations/${org}/repositories/web`, { private: true });
    expect(stored).toMatchObject({ collaborators: [] });
    const res = await admin("PUT", `/internal/v1/organizations/${org}/repositories/web`, {
      private: true,
      collaborators: ["x1"],
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.details[0]?.path).toBe("collaborators.0");
  });
});

describe("names (contract section 5)", () => {
  const memberBody = { githubLogin: "a", workEmail: "a@b.c", role: "member", seat: true, isBot: false };
  const problem = async (res: Response) => {
    expect(res.status).toBe(400);
    return ((await res.json()) as ErrorBody).error.details;
  };

  it.each([
    ["a leading hyphen", "-acme"],
    ["40 characters", "a".repeat(40)],
    ["an underscore", "ac_me"],
    ["a dot", "ac.me"],
    ["a space", "ac%20me"],
    ["a non-ASCII letter", "acm%C3%A9"],
  ])("an org with %s is 400 on every route that names one", async (_what, org) => {
    const expected = [{ path: "org", message: expect.stringMatching(/^must be a GitHub login/) }];
    expect(await problem(await admin("PUT", `/internal/v1/organizations/${org}`, orgBody()))).toEqual(expected);
    const repo = await admin("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: false });
    expect(await problem(repo)).toEqual(expected);
    expect(await problem(await admin("PUT", `/internal/v1/organizations/${org}/members/5`, memberBody))).toEqual(expected);
    expect(await problem(await admin("DELETE", `/internal/v1/organizations/${org}/members/5`))).toEqual(expected);
  });

  it.each([
    ["101 characters", "r".repeat(101)],
    ["a space", "a%20b"],
    ["a dollar sign", "re$po"],
    ["a non-ASCII letter", "r%C3%A9po"],
  ])("a repository name with %s is 400", async (_what, repo) => {
    const org = await createOrg();
    const res = await admin("PUT", `/internal/v1/organizations/${org}/repositories/${repo}`, { private: false });
    expect(await problem(res)).toEqual([{ path: "repo", message: expect.stringMatching(/^must be a GitHub repository name/) }]);
  });

  it("GitHub's edge cases are fine: a 39-character login with hyphens, dotted and 100-character repository names", async () => {
    const org = `${unique("o")}-`.padEnd(39, "x");
    expect((await admin("PUT", `/internal/v1/organizations/${org}`, orgBody())).status).toBe(200);
    for (const repo of ["...", ".github", "a-b_c.d", "R".repeat(100)]) {
      const res = await admin("PUT", `/internal/v1/organizations/${org}/repositories/${repo}`, { private: false });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ name: repo });
    }
  });
});

describe("member and user identities (contract section 5)", () => {
  const memberBody = (extra: Record<string, unknown> = {}) => ({
    githubLogin: "max",
    workEmail: "max@example.com",
    role: "member",
    seat: false,
    isBot: false,
    ...extra,
  });
  const paths = async (res: Response) => {
    expect(res.status).toBe(400);
    return ((await res.json()) as ErrorBody).error.details.map((d) => d.path);
  };

  it.each([
    ["a leading zero", "01002"],
    ["zeros only", "000"],
    ["zero", "0"],
  ])("a githubUserId with %s is 400 on every control-plane route (one person, one identity)", async (_what, id) => {
    const org = await createOrg();
    expect(await paths(await admin("PUT", `/internal/v1/organizations/${org}/members/${id}`, memberBody()))).toEqual([
      "githubUserId",
    ]);
    expect(await paths(await admin("DELETE", `/internal/v1/organizations/${org}/members/${id}`))).toEqual(["githubUserId"]);
    expect(await paths(await admin("PUT", `/internal/v1/users/${id}`, { githubLogin: "max" }))).toEqual(["githubUserId"]);
    expect(await paths(await admin("POST", `/internal/v1/users/${id}/api-keys`, { kind: "members" }))).toEqual(["githubUserId"]);
    expect(await paths(await admin("DELETE", `/internal/v1/users/${id}/api-keys/members`))).toEqual(["githubUserId"]);
    const repo = await admin("PUT", `/internal/v1/organizations/${org}/repositories/api`, { private: true, collaborators: [id] });
    expect(await paths(repo)).toEqual(["collaborators.0"]);
  });

  it.each([
    ["a non-ASCII letter", "m\u00e4x"],
    ["the Kelvin sign", "\u212Aelvin"],
    ["an underscore", "max_1"],
    ["a leading hyphen", "-max"],
    ["40 characters", "m".repeat(40)],
    ["a space", "max power"],
  ])("a member or user login with %s is 400: logins are GitHub's ASCII set", async (_what, login) => {
    const org = await createOrg();
    const id = uniqueUserId();
    const member = await admin("PUT", `/internal/v1/organizations/${org}/members/${id}`, memberBody({ githubLogin: login }));
    expect(await paths(member)).toEqual(["githubLogin"]);
    expect(await paths(await admin("PUT", `/internal/v1/users/${id}`, { githubLogin: login }))).toEqual(["githubLogin"]);
  });

  it("GitHub's own logins pass: 39 characters with hyphens, and a bot's [bot] suffix", async () => {
    const org = await createOrg();
    for (const login of ["a", "Max-Power-2", `m-${"x".repeat(37)}`, "review-bot[bot]"]) {
      const id = uniqueUserId();
      const res = await admin("PUT", `/internal/v1/organizations/${org}/members/${id}`, memberBody({ githubLogin: login }));
      expect(res.status, login).toBe(200);
      expect((await admin("PUT", `/internal/v1/users/${id}`, { githubLogin: login })).status, login).toBe(200);
    }
  });

  it.each([
    ["no domain dot", "a@b"],
    ["a control character", "a\u0001b@example.com"],
    ["a newline", "a@example.com\n"],
    ["a space", "a b@example.com"],
    ["two @", "a@b@example.com"],
    ["no local part", "@example.com"],
    ["a leading dot", ".a@example.com"],
    ["two dots in a row", "a..b@example.com"],
    ["a non-ASCII letter", "j\u00f6rg@example.com"],
    ["a 65-character local part", `${"a".repeat(65)}@example.com`],
    ["a domain label of 64 characters", `a@${"d".repeat(64)}.com`],
  ])("a workEmail with %s is 400: the input is checked as the output promises (format email)", async (_what, workEmail) => {
    const org = await createOrg();
    const res = await admin("PUT", `/internal/v1/organizations/${org}/members/${uniqueUserId()}`, memberBody({ workEmail }));
    expect(await paths(res)).toEqual(["workEmail"]);
  });

  it("ordinary addresses pass", async () => {
    const org = await createOrg();
    for (const workEmail of ["a@b.co", "first.last+tag@mail.example.org", "dave_50%@corp.example", "O'Neil@x-y.example"]) {
      const res = await admin("PUT", `/internal/v1/organizations/${org}/members/${uniqueUserId()}`, memberBody({ workEmail }));
      expect(res.status, workEmail).toBe(200);
      expect(await res.json()).toMatchObject({ workEmail });
    }
  });
});

describe("members (sync)", () => {
  it("PUT upserts a member with no guard and no seat capacity check; DELETE removes it", async () => {
    const org = await createOrg(unique("o"), {
      subscription: { status: "active", billedThroughService: true, purchasedSeats: 0 },
    });
    const member = await addMember(org, "42", "admin", { seat: true, isBot: false });
    expect(member).toEqual({
      githubUserId: "42",
      githubLogin: "user42",
      workEmail: "user42@example.com",
      role: "admin",
      seat: true,
      isBot: false,
      lastActivityAt: null,
    });
    await addMember(org, "42", "viewer", { seat: false, isBot: true });
    expect((await orgTables(org)).members).toEqual([
      { github_user_id: "42", github_login: "user42", work_email: "user42@example.com", role: "viewer", seat: 0, is_bot: 1 },
    ]);
    expect((await admin("DELETE", `/internal/v1/organizations/${org}/members/42`)).status).toBe(204);
    expect((await orgTables(org)).members).toEqual([]);
    expect((await admin("DELETE", `/internal/v1/organizations/${org}/members/42`)).status).toBe(204);
  });

  it("400 for a non-numeric user id in the path, and for a bad role", async () => {
    const org = await createOrg();
    const res = await admin("PUT", `/internal/v1/organizations/${org}/members/abc`, {
      githubLogin: "a",
      workEmail: "a@b.c",
      role: "owner",
      seat: true,
      isBot: false,
    });
    expect(res.status).toBe(400);
    const details = ((await res.json()) as ErrorBody).error.details.map((d) => d.path);
    expect(details).toEqual(["githubUserId"]);
    const bad = await admin("PUT", `/internal/v1/organizations/${org}/members/5`, {
      githubLogin: "a",
      workEmail: "a@b.c",
      role: "owner",
      seat: true,
      isBot: false,
    });
    expect(((await bad.json()) as ErrorBody).error.details.map((d) => d.path)).toEqual(["role"]);
  });
});

describe("users and keys", () => {
  it("PUT user stores login and blocked (default false)", async () => {
    const res = await adminOk("PUT", "/internal/v1/users/777001", { githubLogin: "octo" });
    expect(res).toEqual({ githubUserId: "777001", githubLogin: "octo", blocked: false });
  });

  it("POST api-keys answers 201 with the key once, its id, name (default), kind, scopes, hint, times and networks", async () => {
    const user = await createUser();
    const res = await admin("POST", `/internal/v1/users/${user}/api-keys`, { kind: "members" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      key: expect.stringMatching(/^cbk_[0-9A-Za-z]{40}$/),
      keyId: expect.stringMatching(/^key_[0-9A-Za-z]{20}$/),
      name: "default",
      kind: "members",
      scopes: ["members:read", "members:write"],
      hint: `cbk_…${String(body.key).slice(-4)}`,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      expiresAt: null,
      allowedNetworks: [],
    });
  });

  it("404 for a user that is not registered", async () => {
    const res = await admin("POST", "/internal/v1/users/999999999/api-keys", { kind: "analytics" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as ErrorBody).error.code).toBe("not_found");
  });

  it("400 for an expiry in the past and for an unknown kind", async () => {
    const user = await createUser();
    const past = await admin("POST", `/internal/v1/users/${user}/api-keys`, {
      kind: "analytics",
      expiresAt: "2020-01-01T00:00:00Z",
    });
    expect(past.status).toBe(400);
    expect(((await past.json()) as ErrorBody).error.details).toEqual([{ path: "expiresAt", message: "must be in the future" }]);
    const kind = await admin("POST", `/internal/v1/users/${user}/api-keys`, { kind: "admin" });
    expect(((await kind.json()) as ErrorBody).error.details.map((d) => d.path)).toEqual(["kind"]);
    expect((await admin("DELETE", `/internal/v1/users/${user}/api-keys/admin`)).status).toBe(400);
  });
});
