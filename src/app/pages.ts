import { z } from "zod";
import { codedErrorEnvelope } from "../http/envelopes";
import { type ApiInterface, defineRoute, type HeaderSpec } from "../http/route";
import { OrgLogin } from "../schemas/common";
import { CONTENT_SECURITY_POLICY } from "./csp";
import { messagePage } from "./message-page";

/**
 * The web app's pages (contract section 13): one small HTML shell each, the same for everyone (no
 * personal data, so no session is checked here); the script (`web/`, bundled by esbuild into
 * Workers Static Assets under `/assets/`) asks `/app/api/...` for the data and sends a visitor
 * without a session to `/`. Nothing comes from another origin.
 */

export { CONTENT_SECURITY_POLICY } from "./csp";

const PAGE_HEADERS: Record<string, HeaderSpec & { required: boolean }> = {
  "Content-Security-Policy": {
    description: "No inline script or style, nothing from another origin, never framed.",
    schema: { type: "string", const: CONTENT_SECURITY_POLICY },
    required: true,
  },
};

const Html = z.string().max(4000).meta({ description: "An HTML shell; the page's script renders its content." });

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function shell(page: string, title: string): Response {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · PR review</title>
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body data-page="${escapeHtml(page)}">
<div id="app"><noscript>This page needs JavaScript.</noscript></div>
</body>
</html>
`;
  return new Response(html, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": CONTENT_SECURITY_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "same-origin",
    },
  });
}

const pageRoute = (path: string, page: string, title: string, summary: string, params?: z.ZodObject) =>
  defineRoute({
    method: "GET",
    path,
    operationId: `page${page[0]?.toUpperCase()}${page.slice(1)}`,
    summary,
    ...(params ? { request: { params } } : {}),
    responses: {
      200: {
        description: "The page.",
        headers: PAGE_HEADERS,
        media: { "text/html": { schema: Html, example: "<!doctype html>…" } },
      },
    },
    errors: [],
    handler: async () => shell(page, title),
  });

const OrgPath = z.object({ org: OrgLogin });

/** `/` and `/app/...` pages. */
export const pagesInterface: ApiInterface<"none"> = {
  name: "pages",
  description: "The web app's pages (HTML; their data comes from /app/api).",
  basePath: "/app",
  document: "internal",
  envelope: codedErrorEnvelope,
  auth: { kind: "none" },
  errors: [],
  // A mistyped or outdated link is a page with a way on, like every other page, not JSON.
  unknownPage: (rc) =>
    messagePage({
      status: 404,
      title: "No such page",
      text: `There is no page at ${rc.url.pathname}. The link may be mistyped or out of date.`,
      link: { href: "/app/orgs", label: "Your organizations" },
    }),
  routes: [
    pageRoute("/", "landing", "Sign in", "Landing page: what the service is, sign in, the API documents"),
    pageRoute("/app/keys", "keys", "API keys", "Your API keys"),
    pageRoute("/app/orgs", "orgs", "Organizations", "Your organizations"),
    pageRoute("/app/orgs/{org}/members", "members", "Members", "An organization's members", OrgPath),
    pageRoute("/app/orgs/{org}/audit-log", "audit", "Audit log", "An organization's audit log", OrgPath),
    pageRoute("/app/orgs/{org}/analytics", "analytics", "Analytics", "An organization's analytics dashboard", OrgPath),
    pageRoute("/app/orgs/{org}/keys", "orgKeys", "Organization keys", "An organization's own keys (admins)", OrgPath),
  ],
};
