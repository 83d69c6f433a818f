import type { Context } from 'koa';
import { PAGE_HEADERS } from '../page-routes.js';

/** A line of a page: text, or a link. */
export type PageLine = string | { text: string; href: string };

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * A page the single sign-on routes answer with when they cannot send the browser on (a refused sign-in, SSO
 * unavailable): plain HTML with the dashboard's style and the page's security headers, every value escaped.
 */
export function sendSsoPage(ctx: Context, status: number, title: string, lines: readonly PageLine[]): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  const body = lines
    .map((line) =>
      typeof line === 'string' ? `<p>${escapeHtml(line)}</p>` : `<p><a href="${escapeHtml(line.href)}">${escapeHtml(line.text)}</a></p>`,
    )
    .join('\n    ');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} · flagops</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/dashboard/assets/style.css">
</head>
<body>
  <main class="sign-in-page">
  <section class="sign-in" aria-label="${escapeHtml(title)}">
    <h1>${escapeHtml(title)}</h1>
    ${body}
  </section>
  </main>
</body>
</html>
`;
}
