import { createPublicKey, type KeyObject, randomBytes, verify } from "node:crypto";
import { type GraphqlRequest, prepare, run } from "./graphql";
import { FakeOAuth } from "./oauth";
import {
  type Account,
  basicError,
  collaborator,
  installation,
  installationToken,
  orgMembership,
  type Pull,
  publicUser,
  pullFull,
  pullSimple,
  type Repo,
  repository,
  simpleUser,
} from "./shapes";

/**
 * The fake GitHub's state and its answers: the REST calls of contract section 17 for any number of
 * Apps and installations at once (test files run in parallel against one server, so every test
 * makes its own installation and account), plus `/__fake/...` control endpoints through which a
 * test sets and changes the state and injects rate limits and failures.
 */

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Fault =
  /** GitHub's secondary limit: 403 or 429 with `retry-after`. */
  | { kind: "secondary"; status: 403 | 429; retryAfter: number; match?: string }
  /** The primary limit exhausted: 403, `x-ratelimit-remaining: 0`, `x-ratelimit-reset` at the next whole second. */
  | { kind: "primary"; match?: string }
  | { kind: "server"; status: 500 | 502 | 503; match?: string };

/** A pull request as a test sets it; `closedAt` defaults to `mergedAt` (an open one: both null). */
export interface PullSpec {
  number: number;
  author: string | null;
  createdAt: string;
  updatedAt: string;
  mergedAt: string | null;
  closedAt?: string | null;
  additions?: number;
  deletions?: number;
}

interface Logged {
  method: string;
  path: string;
  auth: "jwt" | "token" | "none";
  status: number;
  at: number;
  /** For a primary-limit answer: the reset it announced (epoch seconds). */
  reset?: number;
  /** For `POST /graphql`: the query's cost in GraphQL rate points (GitHub's formula). */
  cost?: number;
}

interface Installation {
  id: number;
  appId: number;
  account: Account;
  createdAt: string;
  suspendedAt: string | null;
  tokenLifetimeSeconds: number;
  tokensIssued: number;
  faults: Fault[];
  requests: Logged[];
  drifts: string[];
  used: number;
  /** GraphQL points used in the current hour (a budget of its own, as at GitHub). */
  graphqlUsed: number;
  /** false: `POST /graphql` answers 404, as a server without the GraphQL API would. */
  graphql: boolean;
}

const PER_PAGE_MAX = 100;
const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
const b64url = (s: string) => Buffer.from(s, "base64url");

export class FakeGithub {
  readonly #apps = new Map<number, KeyObject>();
  readonly #accounts = new Map<string, Account>();
  readonly #installations = new Map<number, Installation>();
  readonly #tokens = new Map<string, { installationId: number; expiresAt: number }>();
  readonly #members = new Map<number, Map<number, { account: Account; role: "admin" | "member" }>>();
  readonly #repos = new Map<string, Repo>();
  #nextId = 5_000_000;
  /** The OAuth web flow and `GET /user` (oauth.ts), over the same accounts. */
  readonly oauth = new FakeOAuth((login) => this.#account(login));

  /** Registers an App by its public key (PEM or KeyObject); answers its id. */
  addApp(publicKey: string | KeyObject, appId = this.#id()): number {
    this.#apps.set(appId, typeof publicKey === "string" ? createPublicKey(publicKey) : publicKey);
    return appId;
  }

  #id(): number {
    this.#nextId += 1;
    return this.#nextId;
  }

  #account(login: string, type: Account["type"] = "User"): Account {
    const key = login.toLowerCase();
    let account = this.#accounts.get(key);
    if (!account) {
      account = { id: this.#id(), login, type };
      this.#accounts.set(key, account);
    } else if (account.type !== type) {
      account.type = type;
    }
    return account;
  }

  installationOf(id: number): Installation | undefined {
    return this.#installations.get(id);
  }

  /** Records a drift (an answer GitHub's description refuses) against the installation that got it. */
  recordDrift(installationId: number | undefined, message: string): void {
    if (installationId !== undefined) this.#installations.get(installationId)?.drifts.push(message);
  }

  // ---- the control API -------------------------------------------------------------------------

  control(method: string, segments: string[], body: Record<string, unknown>): Answer {
    const [what, a, b, c, d] = segments;
    if (what === "oauth") {
      const answer = this.oauth.control(method, segments, body);
      if (answer) return answer;
    }
    if (method === "POST" && what === "apps" && segments.length === 1) {
      return { status: 201, body: { appId: this.addApp(String(body.publicKey)) } };
    }
    if (method === "POST" && what === "installations" && segments.length === 1) {
      const spec = body.account as { login: string; type?: "Organization" | "User" };
      const account = this.#account(spec.login, spec.type ?? "Organization");
      const inst: Installation = {
        id: this.#id(),
        appId: Number(body.appId),
        account,
        createdAt: iso(Date.now()),
        suspendedAt: null,
        tokenLifetimeSeconds: Number(body.tokenLifetimeSeconds ?? 3600),
        tokensIssued: 0,
        faults: [],
        requests: [],
        drifts: [],
        used: 0,
        graphqlUsed: 0,
        graphql: true,
      };
      this.#installations.set(inst.id, inst);
      return { status: 201, body: { installationId: inst.id, accountId: account.id } };
    }
    if (what === "installations" && a) {
      const inst = this.#installations.get(Number(a));
      if (!inst) return { status: 404, body: { message: "no such installation" } };
      if (method === "GET" && !b) {
        return { status: 200, body: { tokensIssued: inst.tokensIssued, requests: inst.requests, drifts: inst.drifts } };
      }
      if (method === "POST" && b === "faults") {
        inst.faults.push(...(body.faults as Fault[]));
        return { status: 204 };
      }
      if (method === "PUT" && b === "graphql") {
        inst.graphql = Boolean(body.enabled);
        return { status: 204 };
      }
    }
    if (method === "PUT" && what === "users" && a) {
      const account = this.#account(a, (body.type as Account["type"]) ?? "User");
      return { status: 200, body: account };
    }
    if (method === "PUT" && what === "orgs" && a && b === "members") {
      const org = this.#account(a, "Organization");
      const members = new Map<number, { account: Account; role: "admin" | "member" }>();
      for (const m of body.members as { login: string; type?: Account["type"]; role: "admin" | "member" }[]) {
        const account = this.#account(m.login, m.type ?? "User");
        members.set(account.id, { account, role: m.role });
      }
      this.#members.set(org.id, members);
      return { status: 200, body: { members: [...members.values()].map((m) => ({ ...m.account, role: m.role })) } };
    }
    if (what === "repos" && a && b) {
      const key = `${a}/${b}`.toLowerCase();
      if (method === "DELETE" && !c) {
        this.#repos.delete(key);
        return { status: 204 };
      }
      if (method === "PUT" && !c) {
        const existing = this.#repos.get(key);
        const repo: Repo = existing ?? {
          id: this.#id(),
          // A user's repositories (a personal account's installation) keep their owner a user.
          owner: this.#accounts.get(a.toLowerCase()) ?? this.#account(a, "Organization"),
          name: b,
          private: false,
          collaborators: new Map(),
          pulls: new Map(),
          createdAt: iso(Date.now()),
          updatedAt: iso(Date.now()),
        };
        repo.private = Boolean(body.private);
        // GitHub bumps `updated_at` with every change of the repository; a test may set it.
        repo.updatedAt = typeof body.updatedAt === "string" ? body.updatedAt : iso(Date.now());
        if (Array.isArray(body.collaborators)) {
          repo.collaborators = new Map();
          for (const co of body.collaborators as { login: string; type?: Account["type"]; role?: string }[]) {
            const account = this.#account(co.login, co.type ?? "User");
            repo.collaborators.set(account.id, { account, role: (co.role ?? "write") as "write" });
          }
        }
        this.#repos.set(key, repo);
        return { status: 200, body: { id: repo.id } };
      }
      if (method === "PUT" && c === "pulls") {
        const repo = this.#repos.get(key);
        if (!repo) return { status: 404, body: { message: "no such repository" } };
        // One pull request at /pulls/{n}, or many at /pulls as { pulls: [{ number, ... }] }.
        const specs = d ? [{ ...body, number: Number(d) }] : (body.pulls as Record<string, unknown>[]);
        const ids = specs.map((spec) => this.#putPull(repo, spec as unknown as PullSpec).id);
        return { status: 200, body: { ids } };
      }
    }
    return { status: 404, body: { message: `no control endpoint ${method} /__fake/${segments.join("/")}` } };
  }

  #putPull(repo: Repo, spec: PullSpec): Pull {
    const pull: Pull = {
      id: repo.pulls.get(spec.number)?.id ?? this.#id(),
      number: spec.number,
      author: spec.author === null ? null : this.#account(spec.author),
      createdAt: spec.createdAt,
      updatedAt: spec.updatedAt,
      mergedAt: spec.mergedAt,
      closedAt: spec.closedAt === undefined ? spec.mergedAt : spec.closedAt,
      additions: spec.additions ?? 0,
      deletions: spec.deletions ?? 0,
    };
    repo.pulls.set(pull.number, pull);
    return pull;
  }

  // ---- GitHub's GraphQL API --------------------------------------------------------------------

  /**
   * Answers `POST /graphql` (graphql.ts): the installation token, then the faults a test injected
   * (a fault matching `/graphql`; the primary limit answers as GitHub's GraphQL API does: 200 with a
   * `RATE_LIMITED` error and `x-ratelimit-remaining: 0`), then the query validated against GitHub's
   * schema and run over the state. The query's cost is charged to the installation's GraphQL budget
   * (5,000 points an hour), which, like the REST side's, is reported, not enforced.
   */
  async graphql(
    body: GraphqlRequest,
    authorization: string | undefined,
  ): Promise<{ answer: Answer; installation?: Installation; auth: Logged["auth"]; cost?: number }> {
    const [scheme, credential] = (authorization ?? "").split(/\s+/, 2);
    const held = /^(token|bearer)$/i.test(scheme ?? "") ? this.#tokens.get(credential ?? "") : undefined;
    if (!held || held.expiresAt <= Date.now()) {
      return { answer: { status: 401, body: { message: "Bad credentials" } }, auth: "none" };
    }
    const inst = this.#installations.get(held.installationId) as Installation;
    if (!inst.graphql) return { answer: { status: 404, body: basicError("Not Found") }, installation: inst, auth: "token" };
    const resetAt = Math.floor(Date.now() / 1000) + 3600;
    const limits = (remaining: number, used: number) => ({
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-used": String(used),
      "x-ratelimit-reset": String(resetAt),
      "x-ratelimit-resource": "graphql",
    });
    // The REST side's rule: a fault without `match` hits any call, one with it a path containing it.
    const fault = inst.faults.findIndex((f) => !f.match || "/graphql".includes(f.match));
    if (fault >= 0) {
      const [f] = inst.faults.splice(fault, 1);
      if (f?.kind === "primary") {
        const reset = Math.ceil(Date.now() / 1000);
        return {
          answer: {
            status: 200,
            headers: { ...limits(0, 5000), "x-ratelimit-reset": String(reset) },
            body: { errors: [{ type: "RATE_LIMITED", message: `API rate limit exceeded for installation ID ${inst.id}.` }] },
          },
          installation: inst,
          auth: "token",
        };
      }
      if (f) {
        inst.faults.splice(fault, 0, f);
        const answer = this.#fault(inst, "/graphql") as Answer;
        return { answer, installation: inst, auth: "token" };
      }
    }
    const prepared = prepare(body);
    if (!prepared.ok) {
      return {
        answer: { status: 200, headers: limits(5000 - inst.graphqlUsed, inst.graphqlUsed), body: { errors: prepared.errors } },
        installation: inst,
        auth: "token",
      };
    }
    inst.graphqlUsed += prepared.cost;
    const remaining = Math.max(0, 5000 - inst.graphqlUsed);
    const result = await run(prepared, {
      owner: inst.account,
      repos: this.#repos,
      cost: prepared.cost,
      nodes: prepared.nodes,
      limit: 5000,
      remaining,
      used: inst.graphqlUsed,
      resetAt,
    });
    return {
      answer: { status: 200, headers: limits(remaining, inst.graphqlUsed), body: result },
      installation: inst,
      auth: "token",
      cost: prepared.cost,
    };
  }

  // ---- GitHub's REST API -----------------------------------------------------------------------

  /**
   * Answers one API request. `base` is the API root as the client sees it (with `/api/v3` for the
   * GHES form), for the URLs in bodies and `Link` headers. Answers the installation it was for, so
   * the server can log the request and record a drift against it.
   */
  api(
    method: string,
    url: URL,
    base: string,
    authorization: string | undefined,
  ): { answer: Answer; installation?: Installation; auth: Logged["auth"] } {
    const path = url.pathname;
    const [scheme, credential] = (authorization ?? "").split(/\s+/, 2);
    const jwt = /^bearer$/i.test(scheme ?? "") && credential?.split(".").length === 3;

    // App endpoints: the App JWT.
    const app = /^\/app\/installations\/(\d+)(\/access_tokens)?$/.exec(path);
    if (app) {
      const inst = this.#installations.get(Number(app[1]));
      const refused = jwt && credential ? this.#checkJwt(credential, inst?.appId) : "A JSON web token could not be decoded";
      if (refused) return { answer: { status: 401, body: basicError(refused) }, installation: inst, auth: "jwt" };
      if (!inst) return { answer: { status: 404, body: basicError("Not Found") }, auth: "jwt" };
      const fault = this.#fault(inst, path);
      if (fault) return { answer: fault, installation: inst, auth: "jwt" };
      if (app[2] && method === "POST") {
        const token = `ghs_${randomBytes(18).toString("base64url")}`;
        const expiresAt = Math.floor(Date.now() / 1000) * 1000 + inst.tokenLifetimeSeconds * 1000;
        this.#tokens.set(token, { installationId: inst.id, expiresAt });
        inst.tokensIssued += 1;
        return { answer: { status: 201, body: installationToken(token, iso(expiresAt)) }, installation: inst, auth: "jwt" };
      }
      if (!app[2] && method === "GET") {
        return { answer: { status: 200, body: installation(base, inst) }, installation: inst, auth: "jwt" };
      }
      return { answer: { status: 404, body: basicError("Not Found") }, installation: inst, auth: "jwt" };
    }

    // Everything else: the installation token.
    const held = /^token$/i.test(scheme ?? "") || /^bearer$/i.test(scheme ?? "") ? this.#tokens.get(credential ?? "") : undefined;
    if (!held || held.expiresAt <= Date.now()) {
      return { answer: { status: 401, body: basicError("Bad credentials") }, auth: "none" };
    }
    const inst = this.#installations.get(held.installationId) as Installation;
    const fault = this.#fault(inst, path);
    if (fault) return { answer: fault, installation: inst, auth: "token" };
    inst.used += 1;
    const answer = method === "GET" ? this.#get(inst, url, base) : undefined;
    const limits = {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": String(Math.max(0, 5000 - inst.used)),
      "x-ratelimit-used": String(inst.used),
      "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
      "x-ratelimit-resource": "core",
    };
    const final = answer ?? { status: 404, body: basicError("Not Found") };
    return { answer: { ...final, headers: { ...limits, ...final.headers } }, installation: inst, auth: "token" };
  }

  #get(inst: Installation, url: URL, base: string): Answer | undefined {
    const path = url.pathname;
    const q = url.searchParams;
    const notFound = { status: 404, body: basicError("Not Found") };
    if (path === "/installation/repositories") {
      const repos = [...this.#repos.values()].filter((r) => r.owner.id === inst.account.id).sort((x, y) => x.id - y.id);
      return page(base, url, repos, (rows) => ({
        total_count: repos.length,
        repositories: rows.map((r) => repository(base, r)),
      }));
    }
    let m = /^\/orgs\/([^/]+)\/members$/.exec(path);
    if (m) {
      const org = this.#accounts.get(decodeURIComponent(m[1] ?? "").toLowerCase());
      if (org?.type !== "Organization" || org.id !== inst.account.id) return notFound;
      const role = q.get("role") ?? "all";
      const members = [...(this.#members.get(org.id)?.values() ?? [])]
        .filter((x) => role === "all" || x.role === role)
        .sort((x, y) => x.account.id - y.account.id);
      return page(base, url, members, (rows) => rows.map((x) => simpleUser(base, x.account)));
    }
    m = /^\/orgs\/([^/]+)\/memberships\/([^/]+)$/.exec(path);
    if (m) {
      // 404 for anyone who is not a member (GitHub's answer for a non-member, or an org not visible).
      const org = this.#accounts.get(decodeURIComponent(m[1] ?? "").toLowerCase());
      const user = this.#accounts.get(decodeURIComponent(m[2] ?? "").toLowerCase());
      if (org?.type !== "Organization" || org.id !== inst.account.id || !user) return notFound;
      const membership = this.#members.get(org.id)?.get(user.id);
      return membership ? { status: 200, body: orgMembership(base, org, user, membership.role) } : notFound;
    }
    m = /^\/users\/([^/]+)$/.exec(path);
    if (m) {
      const account = this.#accounts.get(decodeURIComponent(m[1] ?? "").toLowerCase());
      return account ? { status: 200, body: publicUser(base, account, inst.createdAt) } : notFound;
    }
    m = /^\/repos\/([^/]+)\/([^/]+)\/(collaborators|pulls)(?:\/(\d+))?$/.exec(path);
    if (m) {
      const repo = this.#repos.get(`${m[1]}/${m[2]}`.toLowerCase());
      if (!repo || repo.owner.id !== inst.account.id) return notFound;
      if (m[3] === "collaborators" && !m[4]) {
        const rows = [...repo.collaborators.values()].sort((x, y) => x.account.id - y.account.id);
        return page(base, url, rows, (page) => page.map((x) => collaborator(base, x.account, x.role)));
      }
      if (m[3] === "pulls" && m[4]) {
        const pull = repo.pulls.get(Number(m[4]));
        return pull ? { status: 200, body: pullFull(base, repo, pull) } : notFound;
      }
      if (m[3] === "pulls") {
        const state = q.get("state") ?? "open";
        const desc = (q.get("direction") ?? "desc") === "desc";
        const key = q.get("sort") === "updated" ? "updatedAt" : "createdAt";
        const rows = [...repo.pulls.values()]
          .filter((p) => state === "all" || (state === "closed" ? p.closedAt !== null : p.closedAt === null))
          .sort((x, y) => (desc ? -1 : 1) * (Date.parse(x[key]) - Date.parse(y[key]) || x.number - y.number));
        return page(base, url, rows, (page) => page.map((p) => pullSimple(base, repo, p)));
      }
    }
    return undefined;
  }

  #fault(inst: Installation, path: string): Answer | undefined {
    const index = inst.faults.findIndex((f) => (f.match ? path.includes(f.match) : !path.endsWith("/access_tokens")));
    if (index < 0) return undefined;
    const [fault] = inst.faults.splice(index, 1);
    if (!fault) return undefined;
    if (fault.kind === "secondary") {
      return {
        status: fault.status,
        headers: { "retry-after": String(fault.retryAfter) },
        body: basicError("You have exceeded a secondary rate limit. Please wait a few minutes before you try again."),
      };
    }
    if (fault.kind === "primary") {
      const reset = Math.ceil(Date.now() / 1000);
      return {
        status: 403,
        headers: {
          "x-ratelimit-limit": "5000",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-used": "5000",
          "x-ratelimit-reset": String(reset),
          "x-ratelimit-resource": "core",
        },
        body: basicError(`API rate limit exceeded for installation ID ${inst.id}.`),
      };
    }
    return { status: fault.status, body: basicError("Server Error") };
  }

  /** An App JWT as GitHub checks it: RS256, signed by the App's key, `iss` the App, at most 10 minutes. */
  #checkJwt(jwt: string, expectedApp: number | undefined): string | undefined {
    const [h, p, s] = jwt.split(".") as [string, string, string];
    let header: { alg?: string };
    let payload: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      header = JSON.parse(b64url(h).toString("utf8"));
      payload = JSON.parse(b64url(p).toString("utf8"));
    } catch {
      return "A JSON web token could not be decoded";
    }
    if (header.alg !== "RS256") return "'alg' must be RS256";
    const appId = Number(payload.iss);
    const key = this.#apps.get(appId);
    if (!key) return "Integration not found";
    if (expectedApp !== undefined && expectedApp !== appId) return "Not Found";
    if (!verify("RSA-SHA256", Buffer.from(`${h}.${p}`), key, b64url(s))) return "A JSON web token could not be decoded";
    const now = Date.now() / 1000;
    if (typeof payload.iat !== "number" || !Number.isInteger(payload.iat) || payload.iat > now + 60) {
      return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";
    }
    if (typeof payload.exp !== "number" || payload.exp <= now || payload.exp - payload.iat > 600) {
      return "'Expiration time' claim ('exp') is too far in the future";
    }
    return undefined;
  }
}

/** GitHub's paging: `page` and `per_page` (at most 100), with a `Link` header naming next and last. */
function page<T>(base: string, url: URL, rows: T[], render: (rows: T[]) => unknown): Answer {
  const perPage = Math.min(PER_PAGE_MAX, Math.max(1, Number(url.searchParams.get("per_page") ?? 30) || 30));
  const current = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(rows.length / perPage));
  const link = (n: number, rel: string) => {
    const next = new URL(`${base}${url.pathname}`);
    for (const [k, v] of url.searchParams) next.searchParams.set(k, v);
    next.searchParams.set("page", String(n));
    return `<${next.href}>; rel="${rel}"`;
  };
  const links = [];
  if (current > 1) links.push(link(current - 1, "prev"), link(1, "first"));
  if (current < last) links.push(link(current + 1, "next"), link(last, "last"));
  return {
    status: 200,
    headers: links.length > 0 ? { link: links.join(", ") } : {},
    body: render(rows.slice((current - 1) * perPage, current * perPage)),
  };
}
