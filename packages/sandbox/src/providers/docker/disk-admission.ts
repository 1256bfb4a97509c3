/**
 * Desktop admission by the home's disk (CMP-5): a bot's first desktop writes a new
 * browser profile into the home, so it is refused at once, with `MULTI_SCREEN_UNAVAILABLE` and
 * `details.reason: "disk"`, when the home's filesystem has less than `PROFILE_ROOM_BYTES` free.
 * A bot that already has a desktop keeps using it. Read on the host with statfs (no exec);
 * the full check (listing desktops) runs only when the disk is short.
 */
import { statfs } from "node:fs/promises";
import { SandboxError } from "../../errors.ts";
import type { SandboxDesktop } from "../../provider.ts";

const MIB = 1024 ** 2;
/**
 * Measured: a fresh Chromium profile holds 2.6 MiB after its first page; its cache and
 * session files then grow by tens of MiB. 64 MiB leaves that room.
 */
const PROFILE_ROOM_BYTES = 64 * MIB;

export function withDiskAdmission(desktop: SandboxDesktop, homeDir: () => Promise<string>): SandboxDesktop {
  const admit = async (botId: string): Promise<void> => {
    const fs = await statfs(await homeDir());
    const freeBytes = fs.bavail * fs.bsize;
    if (freeBytes >= PROFILE_ROOM_BYTES) return;
    if ((await desktop.list()).some((slot) => slot.botId === botId)) return;
    throw new SandboxError(
      "MULTI_SCREEN_UNAVAILABLE",
      `the home has ${Math.floor(freeBytes / MIB)} MiB free, a new browser profile needs ${PROFILE_ROOM_BYTES / MIB} MiB`,
      { details: { reason: "disk", freeBytes, neededBytes: PROFILE_ROOM_BYTES } },
    );
  };
  return {
    ...desktop,
    async observe(botId) {
      await admit(botId);
      return desktop.observe(botId);
    },
    async act(botId, actions) {
      await admit(botId);
      return desktop.act(botId, actions);
    },
  };
}
