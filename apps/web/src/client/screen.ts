// The noVNC page's script (browser-only; bundled by esbuild as ESM, es2022, at startup).
// Status goes through the injected reporter (window.__rakazoScreen). View-only is set here for
// the viewer's sake; the gateway enforces it on the RFB stream regardless.
import RFB from "@novnc/novnc";

const w = window as unknown as { __rakazoScreen?: (status: string) => void; __rakazoRfb?: unknown };
const report = (status: string) => w.__rakazoScreen?.(status);
const target = document.getElementById("screen") as HTMLElement;
const url = new URL("websockify", location.href);
url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
report("connecting");
const rfb = new RFB(target, url.href, { shared: true });
rfb.scaleViewport = true;
rfb.resizeSession = false;
rfb.viewOnly = document.documentElement.dataset.policy !== "control";
rfb.addEventListener("connect", () => report("connected"));
rfb.addEventListener("disconnect", (event: Event) =>
  report((event as CustomEvent<{ clean?: boolean }>).detail?.clean ? "disconnected" : "failed"),
);
rfb.addEventListener("securityfailure", () => report("failed"));
w.__rakazoRfb = rfb;
