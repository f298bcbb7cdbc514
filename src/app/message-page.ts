import { CONTENT_SECURITY_POLICY } from "./csp";

/**
 * A page that says one thing and offers a way on, rendered by the Worker without any script: the
 * outcomes of GitHub sign-in that do not end signed in (contract section 13: a clear page, never a
 * 5xx). Same stylesheet and Content-Security-Policy as the app's pages.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface Message {
  status: number;
  title: string;
  text: string;
  /** The way on: a link's target and words. */
  link: { href: string; label: string };
}

export function messagePage(message: Message, headers: HeadersInit = {}): Response {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(message.title)} · PR review</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<main>
<h1>${escapeHtml(message.title)}</h1>
<p class="lead">${escapeHtml(message.text)}</p>
<p><a class="button" href="${escapeHtml(message.link.href)}">${escapeHtml(message.link.label)}</a></p>
</main>
</body>
</html>
`;
  const response = new Response(html, { status: message.status, headers });
  response.headers.set("Content-Type", "text/html; charset=utf-8");
  response.headers.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.headers.set("Referrer-Policy", "same-origin");
  return response;
}
