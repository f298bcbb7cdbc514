/**
 * An OAuth access token for `/mcp` the way an MCP client gets one (contract section 19), for
 * scripts: dynamic registration, the authorization request with PKCE S256, the local sign-in
 * (DEV_SIGN_IN must be on), the consent page's data and its decision, the code exchange.
 */
import { createHash, randomBytes } from "node:crypto";

const REDIRECT = "http://127.0.0.1:9/callback";

const cookiesOf = (res) => res.headers.getSetCookie().map((c) => c.split(";")[0]);

async function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return res;
}

/** Signs `userId` in locally, approves `scopes` for a new client and answers its tokens. */
export async function oauthTokens(url, userId, scopes = ["analytics:read", "members:read", "members:write"]) {
  const origin = new URL(url).origin;
  const registered = await expectStatus(
    await fetch(`${url}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "script", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
    }),
    201,
    "registration",
  );
  const { client_id: clientId } = await registered.json();

  const signIn = await expectStatus(
    await fetch(`${url}/auth/dev/sign-in`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: origin },
      body: JSON.stringify({ githubUserId: userId }),
    }),
    204,
    "local sign-in (is DEV_SIGN_IN on?)",
  );
  const session = cookiesOf(signIn).join("; ");
  const { csrfToken } = await (await fetch(`${url}/app/api/session`, { headers: { Cookie: session } })).json();

  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: randomBytes(8).toString("hex"),
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: scopes.join(" "),
    resource: `${origin}/mcp`,
  });
  const page = await expectStatus(
    await fetch(`${url}/oauth/authorize?${query}`, { headers: { Cookie: session }, redirect: "manual" }),
    200,
    "the consent page",
  );
  const binding = cookiesOf(page).join("; ");
  const data = JSON.parse(/<script type="application\/json" id="consent-data">(.*?)<\/script>/s.exec(await page.text())[1]);

  const decided = await expectStatus(
    await fetch(`${url}/app/api/oauth/consent`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Origin: origin,
        "X-CSRF-Token": csrfToken,
        Cookie: `${session}; ${binding}`,
      },
      body: JSON.stringify({ handle: data.handle, approve: true, scopes }),
    }),
    200,
    "the consent decision",
  );
  const code = new URL((await decided.json()).redirectTo).searchParams.get("code");
  const tokens = await expectStatus(
    await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        client_id: clientId,
        resource: `${origin}/mcp`,
      }),
    }),
    200,
    "the code exchange",
  );
  return tokens.json();
}
