import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { messagePage } from "../app/message-page";
import { CONTENT_SECURITY_POLICY } from "../app/pages";
import { SCOPES, type Scope } from "../auth/scopes";

/**
 * The consent page's HTML: the app's shell (`web/pages/consent.tsx` renders it) with what the
 * person must see as a JSON data block, which no Content-Security-Policy runs. Everything in it
 * may come from the client (its name, its redirect host): the page renders it as text only.
 */

/** What `web/pages/consent.tsx` reads from `#consent-data`. */
export interface ConsentData {
  handle: string;
  clientName: string;
  /** A client ID metadata document's domain (verified by fetching it), else null: a self-registered name. */
  clientDomain: string | null;
  redirectHost: string;
  redirectIsLoopback: boolean;
  /** The scopes asked, in the contract's order; none asked offers all three. */
  scopes: Scope[];
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON inside `<script type="application/json">`: no `<` can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

export function consentData(description: ConsentDescription, handle: string): ConsentData {
  const asked = SCOPES.filter((scope) => description.scope.includes(scope));
  return {
    handle,
    clientName: description.clientName,
    clientDomain: description.clientDomain ?? null,
    redirectHost: description.redirectHost,
    redirectIsLoopback: description.redirectIsLoopback,
    scopes: asked.length > 0 ? asked : [...SCOPES],
  };
}

export function consentPage(description: ConsentDescription, handle: string, headers: Headers): Response {
  const data = consentData(description, handle);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow ${escapeHtml(data.clientName)}? · PR review</title>
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body data-page="consent">
<script type="application/json" id="consent-data">${scriptJson(data)}</script>
<div id="app"><noscript>This page needs JavaScript.</noscript></div>
</body>
</html>
`;
  const response = new Response(html, { headers });
  response.headers.set("Content-Type", "text/html; charset=utf-8");
  response.headers.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.headers.set("Referrer-Policy", "same-origin");
  return response;
}

/** An authorization that cannot go back to the client: said on a page of this site. */
export const oauthMessage = (status: number, text: string): Response =>
  messagePage({ status, title: "This app cannot be connected", text, link: { href: "/", label: "Go to the service" } });
