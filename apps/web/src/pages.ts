/** HTML of the pages the web service serves. Capabilities never appear in them. */

const BASE_STYLE =
  "html,body{margin:0;height:100%;background:#1d1f21;color:#ddd;font:14px system-ui,sans-serif}";

/** The noVNC page for one capability; the reporter is injected by the proxy (SCR-7). */
export function screenPage(policy: "view" | "control"): string {
  return `<!doctype html>
<html data-policy="${policy}"><head><meta charset="utf-8"><title>Screen</title>
<meta name="referrer" content="no-referrer">
<style>${BASE_STYLE}#screen{width:100%;height:100%}</style>
</head><body><div id="screen"></div>
<script type="module" src="/assets/screen.js"></script>
</body></html>`;
}

/** The terminal page (TRM-4): xterm.js on the websocket beside it (client/terminal.ts). */
export function terminalPage(): string {
  return `<!doctype html>
<html data-status="loading"><head><meta charset="utf-8"><title>Terminal</title>
<meta name="referrer" content="no-referrer">
<link rel="stylesheet" href="/assets/xterm.css">
<style>${BASE_STYLE}#terminal{width:100%;height:100%}</style>
</head><body><div id="terminal"></div>
<script type="module" src="/assets/terminal.js"></script>
</body></html>`;
}

/**
 * The project's embed page (SCR-7, SCR-8): fetches the proxied page once, shows a fixed reason
 * on refusal, frames it sandboxed, and mirrors the reporter's statuses as `screen-<status>`
 * classes; a `failed` report or nothing past `loading` within 15 s shows the error and Retry.
 * The frame is sandboxed with `allow-scripts` only: without `allow-same-origin` the screen runs
 * in an opaque origin, so it can neither reach this page's DOM nor lift its own sandbox; its
 * reports still arrive by postMessage (checked against the frame's window, not an origin).
 */
export function embedPage(): string {
  return `<!doctype html>
<html class="screen-loading"><head><meta charset="utf-8"><title>Screen</title>
<meta name="referrer" content="no-referrer">
<style>${BASE_STYLE}iframe{border:0;width:100%;height:100%;display:block}
#error{display:none;padding:2em}html.screen-failed #error,html.screen-refused #error{display:block}
html.screen-failed iframe,html.screen-refused iframe{display:none}</style>
</head><body><div id="error"><p>The screen did not respond.</p><button id="retry">Retry</button></div>
<script>
(function () {
  var page = location.pathname.replace(/^\\/embed\\//, "/screens/").replace(/\\/?$/, "/");
  var root = document.documentElement, frame = null, timer = null, status = "loading";
  function set(s) { status = s; root.className = "screen-" + s; }
  function start() {
    set("loading");
    fetch(page, { credentials: "omit", cache: "no-store" }).then(function (r) {
      if (!r.ok) { set("refused"); return; }
      if (frame) frame.remove();
      frame = document.createElement("iframe");
      frame.setAttribute("sandbox", "allow-scripts");
      frame.setAttribute("referrerpolicy", "no-referrer");
      frame.src = page;
      document.body.appendChild(frame);
      clearTimeout(timer);
      timer = setTimeout(function () { if (status === "loading") set("failed"); }, 15000);
    }, function () { set("refused"); });
  }
  window.addEventListener("message", function (e) {
    if (!frame || e.source !== frame.contentWindow || !e.data || e.data.type !== "rakazo:screen") return;
    if (/^(loading|connecting|connected|failed|disconnected)$/.test(e.data.status)) set(e.data.status);
  });
  document.getElementById("retry").onclick = start;
  start();
})();
</script></body></html>`;
}

export function refusalPage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Screen</title><style>${BASE_STYLE}</style></head>
<body><p style="padding:2em">The screen did not respond.</p></body></html>`;
}

/** `/` when the web app's build is not there: what this service is, instead of a bare 404. */
export function rootPage(hasReadme: boolean, appExpected = false): string {
  const docs = hasReadme
    ? `<a href="/docs/README.md">README</a>`
    : "the README and <code>docs/screens.md</code> of the Rakazo repository";
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Rakazo screens</title>
<style>${BASE_STYLE}body{padding:2em;max-width:42em;line-height:1.5}a{color:#8ab4f8}</style>
</head><body><h1>Rakazo</h1>
<p>This is the web service of a Rakazo installation: it shows the screens of agents' computers.
A screen's address comes from the API: <code>computer/screenUrl</code> answers a
<code>/screens/…</code> page and an <code>/embed/…</code> page for one bot's screen.</p>
<p>Docs: ${docs}.</p>${
    appExpected
      ? "\n<p>The web app is not built: run <code>pnpm --filter @rakazo/web build</code> and restart.</p>"
      : ""
  }
</body></html>`;
}
