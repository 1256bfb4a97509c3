/**
 * Boat's hosted ports and desktop: `POST /host` hands out a port's URL (with `_token` unless
 * public); `POST /desktop` answers `provisioning` at a generation's first ask, then the VNC
 * desktop's protected URL (port 6080). Both URLs die with the generation (a resume).
 */
import { isRecord, readJson, sendJson } from "../http-util.ts";
import type { Router } from "../router.ts";
import { isUsable } from "./lifecycle.ts";
import { type Boat, fail, hostPort, onEntry } from "./state.ts";

export function portRoutes(router: Router, boat: Boat): void {
  router.on(
    "POST",
    "/sandboxes/:id/host",
    onEntry(boat, async (entry, _id, { request, response }) => {
      const body = await readJson(request);
      const port = isRecord(body) ? body.port : undefined;
      if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
        return fail(response, 400, "invalid_port", "port must be an integer 1-65535");
      }
      const publicAccess = isRecord(body) && body.public === true;
      const { url } = await hostPort(boat, entry, port as number, publicAccess);
      sendJson(response, 200, {
        ok: true,
        type: "port.hosted",
        success: true,
        port,
        url,
        isProtected: !publicAccess,
        access: publicAccess ? "public" : "private",
      });
    }),
    "host",
  );

  router.on(
    "POST",
    "/sandboxes/:id/desktop",
    onEntry(boat, async (entry, _id, { response }) => {
      if (!isUsable(entry.record.state)) {
        return fail(response, 409, "sandbox_not_ready", `sandbox is ${entry.record.state}`);
      }
      // The first ask of a generation prepares VNC; the client polls again.
      entry.desktopAsked += 1;
      if (entry.desktopAsked === 1) {
        return sendJson(response, 200, {
          ok: true,
          type: "desktop.provisioning",
          provisioning: true,
          message: "Preparing VNC desktop…",
        });
      }
      const { url } = await hostPort(boat, entry, 6080, false);
      sendJson(response, 200, {
        ok: true,
        type: "desktop.url",
        success: true,
        desktopUrl: url,
        ip: null,
        mode: "vnc",
      });
    }),
    "desktop",
  );
}
