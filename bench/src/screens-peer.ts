/**
 * Processes of the gateway benchmark, so the gateway, the RFB servers and the client each get
 * their own event loop as in production:
 *   node screens-peer.ts rfb <dir>       blast.sock (streams BLAST_BYTES after the handshake), echo.sock
 *   node screens-peer.ts gateway <dir>   the ComputerGateway on <dir>/gateway.sock; slot 0 → blast, 1 → echo
 * Prints "ready" once listening.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { ComputerGateway } from "@rakazo/supervisor/gateway";
import { serverInit, startFakeRfb } from "@rakazo/supervisor/testing/fake-rfb";
import { BLAST_BYTES } from "./constants.ts";

const [mode, dir] = process.argv.slice(2) as [string, string];

if (mode === "rfb") {
  await startFakeRfb(path.join(dir, "echo.sock"), { echo: true });
  const chunk = Buffer.alloc(64 * 1024, 7);
  const server = net.createServer((socket) => {
    socket.on("error", () => undefined);
    socket.write("RFB 003.008\n");
    let got = 0;
    socket.on("data", (data: Buffer) => {
      const before = got;
      got += data.length;
      if (before < 12 && got >= 12) socket.write(Buffer.from([1, 1]));
      if (before < 13 && got >= 13) socket.write(Buffer.from([0, 0, 0, 0]));
      if (before < 14 && got >= 14) {
        socket.write(serverInit());
        let sent = 0;
        const pump = (): void => {
          while (sent < BLAST_BYTES) {
            sent += chunk.length;
            if (!socket.write(chunk)) {
              socket.once("drain", pump);
              return;
            }
          }
        };
        pump();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path.join(dir, "blast.sock"), resolve));
} else {
  const gateway = new ComputerGateway({
    listen: { path: path.join(dir, "gateway.sock") },
    stateDir: dir,
    slotAt: (index) =>
      index > 1
        ? undefined
        : {
            index,
            generation: 1,
            botId: "bot",
            state: "running",
            vncSocket: path.join(dir, index === 0 ? "blast.sock" : "echo.sock"),
          },
  });
  await gateway.start();
  gateway.configure(JSON.parse(readFileSync(path.join(dir, "bench-keys.json"), "utf8")));
}
process.stdout.write("ready\n");
