/**
 * The SCR-7 reporter, injected first into every noVNC page the proxy serves. It posts
 * `loading` at once, then `connecting`, `connected`, `failed` or `disconnected` to the parent
 * (status only: no text, no URL), mirrors the status as a `screen-<status>` class on <html>,
 * and removes `VideoDecoder` before noVNC's H.264 probe can run (screens never use H.264).
 * It learns the status from the page (`window.__rakazoScreen(status)`) and, for pages that do
 * not report, from the WebSocket they open.
 */
const REPORTER_SCRIPT = `(function () {
  try { delete window.VideoDecoder; } catch (e) {}
  var last = null;
  function report(status) {
    if (last === status) return;
    if ((last === "failed" || last === "disconnected") && status !== "connecting") return;
    last = status;
    var root = document.documentElement;
    root.className = root.className.replace(/(^|\\s)screen-[a-z]+/g, "").trim();
    root.classList.add("screen-" + status);
    try { window.parent.postMessage({ type: "rakazo:screen", status: status }, "*"); } catch (e) {}
  }
  window.__rakazoScreen = report;
  report("loading");
  var Native = window.WebSocket;
  if (!Native) return;
  function Reporting(url, protocols) {
    var socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    if (last === "loading") report("connecting");
    socket.addEventListener("close", function () {
      if (last === "connected") report("disconnected");
      else if (last !== "disconnected") report("failed");
    });
    return socket;
  }
  Reporting.prototype = Native.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (k) { Reporting[k] = Native[k]; });
  window.WebSocket = Reporting;
})();`;

/** Puts the reporter first in <head> (or first in the document when there is none). */
export function injectReporter(html: string): string {
  const tag = `<script>${REPORTER_SCRIPT}</script>`;
  const head = /<head[^>]*>/i.exec(html);
  if (head)
    return `${html.slice(0, head.index + head[0].length)}${tag}${html.slice(head.index + head[0].length)}`;
  return `${tag}${html}`;
}
