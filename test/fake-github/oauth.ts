import { createHash, randomBytes } from "node:crypto";
import { type Account, basicError, privateUser } from "./shapes";
import type { Answer } from "./state";

/**
 * The fake GitHub's web flow for a GitHub App's user authorization (OAuth with PKCE), and `GET
 * /user` for the tokens it issues. The OAuth endpoints are not part of GitHub's REST description
 * (they live on github.com, not api.github.com), so only `/user` is checked against it; the rest
 * follows GitHub's documentation of the web flow, quirks included: a refused code is a 200 whose
 * body is an OAuth error, and the answer is JSON only for `Accept: application/json`.
 *
 * - `GET /login/oauth/authorize`: "consents" at once as the account named by `login` (GitHub's
 *   own parameter; default `octo-fake`), or declines when that login is set to deny: a 302 to
 *   `redirect_uri` with `code` and `state`, or `error=access_denied` and `state`. PKCE S256 is
 *   required.
 * - `POST /login/oauth/access_token`: client id and secret, the code (single use, 10 minutes),
 *   its `redirect_uri`, and a `code_verifier` whose S256 is the challenge.
 * - `GET /user` with the token.
 *
 * Controls (test files run in parallel, so behaviour is set per login):
 * `PUT /__fake/oauth/users/{login}` `{ "consent"?: "grant" | "deny", "down"?: ["token" | "user"] }`
 * (`down`: that endpoint answers 503 / 500 for this login's codes or tokens);
 * `POST /__fake/oauth/clients` → `{ clientId, clientSecret }`.
 */

interface LoginBehaviour {
  consent: "grant" | "deny";
  down: ("token" | "user")[];
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  login: string;
  expiresAt: number;
}

export const DEFAULT_LOGIN = "octo-fake";
const CODE_LIFETIME_MS = 10 * 60 * 1000;
const DOWN_MESSAGE = "Service unavailable [expected-fault]";

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

export class FakeOAuth {
  readonly #clients = new Map<string, string>();
  readonly #behaviour = new Map<string, LoginBehaviour>();
  readonly #codes = new Map<string, IssuedCode>();
  readonly #tokens = new Map<string, string>();
  readonly #account: (login: string) => Account;
  readonly #createdAt = new Date(Date.UTC(2020, 0, 1)).toISOString().replace(".000Z", "Z");

  constructor(account: (login: string) => Account) {
    this.#account = account;
  }

  addClient(): { clientId: string; clientSecret: string } {
    const clientId = `Iv23${randomBytes(8).toString("hex")}`;
    const clientSecret = randomBytes(20).toString("hex");
    this.#clients.set(clientId, clientSecret);
    return { clientId, clientSecret };
  }

  #of(login: string): LoginBehaviour {
    return this.#behaviour.get(login.toLowerCase()) ?? { consent: "grant", down: [] };
  }

  control(method: string, segments: string[], body: Record<string, unknown>): Answer | undefined {
    const [, what, login] = segments;
    if (method === "POST" && what === "clients" && segments.length === 2) return { status: 201, body: this.addClient() };
    if (method === "PUT" && what === "users" && login) {
      const account = this.#account(login);
      this.#behaviour.set(login.toLowerCase(), {
        consent: body.consent === "deny" ? "deny" : "grant",
        down: Array.isArray(body.down) ? (body.down as LoginBehaviour["down"]) : [],
      });
      return { status: 200, body: account };
    }
    return undefined;
  }

  /** `GET /login/oauth/authorize`: the person's answer, at once. */
  authorize(url: URL): Answer {
    const q = url.searchParams;
    const clientId = q.get("client_id") ?? "";
    const redirectUri = q.get("redirect_uri");
    if (!this.#clients.has(clientId) || redirectUri === null) {
      return { status: 404, body: { message: "The client_id or redirect_uri is not known to this fake GitHub." } };
    }
    const back = new URL(redirectUri);
    const state = q.get("state");
    const login = q.get("login") || DEFAULT_LOGIN;
    if (this.#of(login).consent === "deny") {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_description", "The user has denied your application access.");
      back.searchParams.set(
        "error_uri",
        "https://docs.github.com/apps/troubleshooting-authorization-request-errors#access-denied",
      );
    } else {
      const challenge = q.get("code_challenge");
      if (q.get("code_challenge_method") !== "S256" || !challenge) {
        return { status: 400, body: { message: "This fake GitHub requires PKCE with code_challenge_method=S256." } };
      }
      const code = randomBytes(10).toString("hex");
      this.#codes.set(code, { clientId, redirectUri, challenge, login, expiresAt: Date.now() + CODE_LIFETIME_MS });
      back.searchParams.set("code", code);
    }
    if (state !== null) back.searchParams.set("state", state);
    return { status: 302, headers: { location: back.href } };
  }

  /** `POST /login/oauth/access_token` (form-encoded; client credentials in the body or as Basic). */
  accessToken(raw: string, headers: { accept?: string; authorization?: string }): Answer {
    const form = new URLSearchParams(raw);
    let clientId = form.get("client_id") ?? "";
    let clientSecret = form.get("client_secret") ?? "";
    const basic = /^basic\s+(.+)$/i.exec(headers.authorization ?? "");
    if (basic?.[1]) {
      const [id, secret] = Buffer.from(basic[1], "base64").toString("utf8").split(":");
      clientId = decodeURIComponent(id ?? "");
      clientSecret = decodeURIComponent(secret ?? "");
    }
    const answer = (body: Record<string, unknown>): Answer =>
      (headers.accept ?? "").includes("application/json")
        ? { status: 200, body }
        : {
            status: 200,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams(body as Record<string, string>).toString(),
          };
    const error = (code: string, description: string) =>
      answer({ error: code, error_description: description, error_uri: "https://docs.github.com/apps/oauth" });

    if (this.#clients.get(clientId) !== clientSecret || clientSecret === "") {
      return error("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.");
    }
    const code = form.get("code") ?? "";
    const issued = this.#codes.get(code);
    if (issued && this.#of(issued.login).down.includes("token")) {
      return { status: 503, body: basicError(DOWN_MESSAGE) };
    }
    // Single use: whatever happens next, this code is spent.
    this.#codes.delete(code);
    if (!issued || issued.clientId !== clientId || issued.expiresAt <= Date.now()) {
      return error("bad_verification_code", "The code passed is incorrect or expired.");
    }
    if (form.get("redirect_uri") !== null && form.get("redirect_uri") !== issued.redirectUri) {
      return error("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.");
    }
    if (s256(form.get("code_verifier") ?? "") !== issued.challenge) {
      return error("bad_verification_code", "The code_verifier does not match the code_challenge.");
    }
    const token = `ghu_${randomBytes(18).toString("base64url")}`;
    this.#tokens.set(token, issued.login);
    return answer({ access_token: token, token_type: "bearer", scope: "" });
  }

  /** `GET /user` for a token this flow issued; undefined for any other credential (the REST fake answers it). */
  user(authorization: string | undefined, base: string): Answer | undefined {
    const [, credential] = (authorization ?? "").split(/\s+/, 2);
    const login = this.#tokens.get(credential ?? "");
    if (login === undefined) return undefined;
    if (this.#of(login).down.includes("user")) return { status: 500, body: basicError(DOWN_MESSAGE) };
    return { status: 200, body: privateUser(base, this.#account(login), this.#createdAt) };
  }
}
