import { html, type SafeHtml } from "./html.js";

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** Seconds between reloads (meta refresh); undefined: no refresh (paused, or an error page). */
  refreshSeconds?: number;
  /** Links shown in the header, beside the navigation: pause/resume refresh. */
  tools?: SafeHtml;
}

/**
 * The frame of every page: no script at all (the CSP forbids one), the stylesheet from the
 * daemon itself, a viewport for phones, and a meta refresh instead of polling.
 */
export function renderPage(options: PageOptions): string {
  const refresh =
    options.refreshSeconds === undefined
      ? html``
      : html`<meta http-equiv="refresh" content="${options.refreshSeconds}" />`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        ${refresh}
        <title>${options.title} · stream-janitor</title>
        <link rel="stylesheet" href="/ui/style.css" />
        <link rel="icon" href="data:," />
      </head>
      <body>
        <header>
          <span class="brand">stream-janitor</span>
          <nav>
            <a href="/ui">groups</a> · <a href="/ui/sweeper">sweeper</a> ·
            <a href="/status.json">status.json</a>
          </nav>
          ${options.tools}
        </header>
        <main>${options.body}</main>
      </body>
    </html> `.text;
}

/** The security headers of every console answer: nothing but the daemon itself, no scripts. */
export const UI_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};
