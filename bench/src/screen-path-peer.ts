/**
 * Processes of the screen-path bench (screen-path.bench.ts), each with its own event loop as in
 * production. `SCREEN_KEYS` (the screen keyring) comes from the environment.
 *   node screen-path-peer.ts supervisor <dir> <display>
 *       one desktop stack on the host exactly as the supervisor starts it (Xvfb + Chromium +
 *       x11vnc on a Unix socket, `processLauncher` + `planStack`), Chromium showing a green page
 *       with a focused field, and the ComputerGateway on <dir>/gateway.sock serving it as slot 0;
 *       x11vnc is started before the peer reports ready (the steady state: the desktop has had
 *       its first viewer; that start's cost is the desktops bench's row);
 *   node screen-path-peer.ts web <dir>
 *       the web service on a loopback port whose authority opens capabilities with the keyring
 *       and sends the proxy to that gateway.
 * Prints one JSON line once serving ({ vncSocket } or { url }); SIGTERM stops it.
 */
import path from "node:path";
import { createLogger } from "@rakazo/log";
import { gatewayKeysFor, gatewayTicket, openScreenCapability, parseScreenKeys } from "@rakazo/screens";
import { processLauncher } from "@rakazo/supervisor/desktop-stack";
import { ComputerGateway } from "@rakazo/supervisor/gateway";
import { planStack } from "@rakazo/supervisor/stack-argv";
import { startWebServer } from "@rakazo/web/server";
import { GREEN_PAGE } from "@rakazo/web/testing/screen-system";
import { BENCH_BOT, BENCH_COMPUTER } from "./constants.ts";

const [mode, dir, display, page] = process.argv.slice(2) as [string, string, string | undefined, string?];
/** A page that animates: one 400×300 box recoloured on every animation frame. */
const ANIMATED_PAGE =
  'data:text/html,<body style="margin:0;background:rgb(18,171,52)"><div id=b style="width:400px;height:300px"></div>' +
  '<script>let t=0;(function f(){t+=7;b.style.background="rgb("+(t&255)+",60,"+(255-(t&255))+")";requestAnimationFrame(f)})()</script>';
const keyring = parseScreenKeys(process.env.SCREEN_KEYS ?? "");

if (mode === "supervisor") {
  const plan = planStack(
    { runDir: dir, displayBase: Number(display), debugPortBase: 20_000 + Number(display) },
    { index: 0, generation: 1 },
    path.join(dir, "profile"),
  );
  const stack = await processLauncher({ logDir: path.join(dir, "logs") }).start(plan);
  for (const args of [
    ["key", "ctrl+l"],
    ["type", "--delay", "5", "--", page === "animated" ? ANIMATED_PAGE : GREEN_PAGE],
    ["key", "Return"],
  ])
    await stack.runStep({ kind: "xdotool", args });
  await stack.runStep({ kind: "wait", ms: 2_000 });
  await stack.serveScreen();
  const gateway = new ComputerGateway({
    listen: { path: path.join(dir, "gateway.sock") },
    stateDir: dir,
    slotAt: (index) =>
      index === 0
        ? { index, generation: 1, botId: BENCH_BOT, state: "running", vncSocket: plan.vncSocket }
        : undefined,
    serveRfb: () => stack.serveScreen(),
  });
  await gateway.start();
  gateway.configure(gatewayKeysFor(keyring, BENCH_COMPUTER));
  const stop = async () => {
    await stack.teardown().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.stdout.write(`${JSON.stringify({ vncSocket: plan.vncSocket })}\n`);
} else if (mode === "web") {
  const web = await startWebServer({
    authority: {
      async authorize(capability) {
        const opened = openScreenCapability(keyring, capability);
        if (!opened.ok) return { ok: false, reason: "authority_rejected", detail: opened.reason };
        return {
          ok: true,
          target: { transport: "unix", socketPath: path.join(dir, "gateway.sock") } as never,
          ticket: gatewayTicket(keyring, opened.claims),
          policy: opened.claims.policy,
        };
      },
    },
    log: createLogger({ level: "warn", write: (line) => process.stderr.write(`${line}\n`) }),
    host: "127.0.0.1",
    port: 0,
  });
  process.on("SIGTERM", () => void web.close().then(() => process.exit(0)));
  process.stdout.write(`${JSON.stringify({ url: web.url })}\n`);
} else {
  throw new Error(`unknown mode ${mode}`);
}
