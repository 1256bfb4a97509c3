/**
 * Daytona's event stream as the SDK opens it by default (no `useDeprecatedPolling`): socket.io
 * (Engine.IO v4, websocket transport only) at `<apiUrl path>/socket.io/`, the API key as
 * `auth.token` of the connect packet. Every connected SDK gets `sandbox.created` with the
 * sandbox and `sandbox.state.updated` with `{sandbox, oldState, newState}` on every state
 * change, which is what the SDK's waits listen for (`Sandbox.handleEvent`).
 * A wrong or missing token is refused at connect ("Unauthorized"), as the service does.
 */
import type http from "node:http";
import { Server } from "socket.io";
import { sameSecret } from "../http-util.ts";

/** The socket.io path under the API's path, as the SDK derives it from `apiUrl`. */
export const EVENTS_PATH = "/api/socket.io/";

export interface EventStream {
  emit(event: string, payload: unknown): void;
  close(): Promise<void>;
}

export function attachEventStream(server: http.Server, apiKey: string): EventStream {
  const io = new Server(server, {
    path: EVENTS_PATH,
    transports: ["websocket"],
    serveClient: false,
    // The SDK's own idle disconnect and unref decide when it lets go; a long ping keeps a
    // loaded test machine from dropping it.
    pingInterval: 25_000,
    pingTimeout: 20_000,
  });
  io.use((socket, next) => {
    const token: unknown = socket.handshake.auth.token;
    if (typeof token === "string" && sameSecret(token, apiKey)) next();
    else next(new Error("Unauthorized"));
  });
  return {
    emit: (event, payload) => {
      io.emit(event, payload);
    },
    close: () => new Promise<void>((resolve) => void io.close(() => resolve())),
  };
}
