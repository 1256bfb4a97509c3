/**
 * The screen proxy's byte relay: once both handshakes are done, the browser's socket and the
 * gateway's socket are piped into each other as bytes — the browser's masked frames go on to the
 * gateway as they are (the proxy is the gateway's client), the gateway's frames go on to the
 * browser as they are. No frame is decoded, re-framed, copied or re-allocated here; view
 * filtering, pacing and revocation are the gateway's (docs/screens.md). What the proxy still
 * keeps of each stream (ws-scan.ts): where frames begin, the close codes (for `closed_by` and
 * `screen.proxy.revoked`), and the browser's frame cap.
 * - Backpressure both ways: a socket's reading pauses while the other socket's write buffer is
 *   past its high-water mark and resumes on its `drain`, so neither a browser nor a gateway that
 *   stops reading makes the web service buffer more than that mark plus one read.
 * - Ending: a close frame passes through like any other; when one side's socket ends, the other
 *   is ended too (with a close frame of the proxy's own when the gateway went away without one
 *   and the stream is between frames), and destroyed a second later if it does not close.
 */
import type { Duplex } from "node:stream";
import { CLOSE_REVOKED } from "@rakazo/protocol";
import type { BlockReads } from "./gateway-dial.ts";
import { closeFrame, FrameScanner } from "./ws-scan.ts";

/** A browser frame over this is refused (1009), as the gateway would: a viewer's messages are tiny. */
export const MAX_BROWSER_FRAME = 16 * 1024 * 1024;
const CLOSE_GRACE_MS = 1000;

type ClosedBy = "client" | "upstream" | "revoked";

export interface RelayHooks {
  /** Once per relay: who closed first, and the close code (1006: the socket went, no frame). */
  closed(closedBy: ClosedBy, code: number): void;
  error(side: "client" | "upstream", error: Error): void;
}

/**
 * Bytes `from` → `to`, each chunk shown to `scanner` first; `scanned` hears whether it was
 * within the cap and answers whether the chunk goes on.
 */
function pipe(
  from: Duplex,
  to: Duplex,
  scanner: FrameScanner,
  scanned: (withinCap: boolean) => boolean,
): void {
  from.on("data", (chunk: Buffer) => {
    if (!scanned(scanner.push(chunk))) return;
    if (!to.write(chunk)) from.pause();
  });
  to.on("drain", () => from.resume());
}

function endSoon(socket: Duplex, last?: Buffer): void {
  if (!socket.destroyed && !socket.writableEnded) socket.end(last);
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/**
 * Gateway → browser for a gateway socket reading into one buffer: each read is written from the
 * buffer itself, and reading (which would overwrite it) stops until the browser's socket has
 * flushed that write — backpressure and buffer reuse in one rule, as in the gateway.
 */
function pipeBlocks(
  reads: BlockReads,
  upstream: Duplex,
  to: Duplex,
  scanner: FrameScanner,
  scanned: () => void,
): void {
  for (const bytes of reads.early.splice(0)) {
    scanner.push(bytes);
    scanned();
    to.write(bytes);
  }
  reads.deliver = (length) => {
    const bytes = reads.block.subarray(0, length);
    scanner.push(bytes);
    scanned();
    if (to.destroyed) return false;
    let held = false;
    to.write(bytes, () => {
      if (held) upstream.resume();
    });
    if (to.writableLength === 0) return true;
    held = true;
    return false;
  };
}

/**
 * Relays `browser` ⇄ `upstream` until either ends; `reads` when the gateway socket reads into one
 * buffer (gateway-dial.ts). The returned function ends both at once.
 */
export function relayBytes(
  browser: Duplex,
  upstream: Duplex,
  hooks: RelayHooks,
  reads?: BlockReads,
): () => void {
  const fromGateway = new FrameScanner();
  const fromBrowser = new FrameScanner(MAX_BROWSER_FRAME);
  let finished = false;
  const finish = (closedBy: ClosedBy, code: number): void => {
    if (finished) return;
    finished = true;
    hooks.closed(closedBy, code);
  };
  for (const socket of [browser, upstream])
    if ("setNoDelay" in socket && typeof socket.setNoDelay === "function") socket.setNoDelay(true);

  const gatewayScanned = (): true => {
    const code = fromGateway.closeCode;
    if (code !== undefined) finish(code === CLOSE_REVOKED ? "revoked" : "upstream", code);
    return true;
  };
  if (reads) pipeBlocks(reads, upstream, browser, fromGateway, gatewayScanned);
  else pipe(upstream, browser, fromGateway, gatewayScanned);
  let refused = false;
  pipe(browser, upstream, fromBrowser, (withinCap) => {
    if (refused) return false;
    const code = fromBrowser.closeCode;
    if (code !== undefined) finish("client", code);
    if (withinCap) return true;
    refused = true;
    finish("client", 1009);
    upstream.destroy();
    if (fromGateway.atBoundary) endSoon(browser, closeFrame(1009, false));
    else browser.destroy();
    return false;
  });

  const gatewayGone = (): void => {
    finish("upstream", 1006);
    // The gateway went without a close frame: say so to the browser if a frame may start here.
    const own = fromGateway.closeCode === undefined && fromGateway.atBoundary;
    endSoon(browser, own ? closeFrame(1000, false) : undefined);
  };
  upstream.on("end", gatewayGone);
  upstream.on("close", gatewayGone);
  browser.on("end", () => {
    finish("client", 1006);
    endSoon(upstream);
  });
  browser.on("close", () => {
    finish("client", 1006);
    upstream.destroy();
  });
  upstream.on("error", (error) => hooks.error("upstream", error));
  browser.on("error", (error) => hooks.error("client", error));
  upstream.resume();
  browser.resume();
  return () => {
    browser.destroy();
    upstream.destroy();
  };
}
