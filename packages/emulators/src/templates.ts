/**
 * Templates the emulators offer (an E2B template, a Daytona snapshot, a Boat type, by name): what
 * a real provider's template can be — an image of its own and a command it starts at boot. A
 * machine of an unnamed template is the bare computer image running `sleep infinity`; whatever
 * runs in it is started by the client, as on the real service.
 */
import { posix } from "node:path";
import Docker from "dockerode";

export interface EmulatedTemplate {
  /** The image its machines boot; default the emulator's computer image. */
  readonly image?: string;
  /** Started at boot beside `sleep infinity`, as a template's start command beside the VM's init. */
  readonly boot?: readonly string[];
}

export type EmulatedTemplates = Readonly<Record<string, EmulatedTemplate>>;

/** The image and command of a machine of `template`. */
export function machineSpec(
  defaultImage: string,
  templates: EmulatedTemplates | undefined,
  template: string | undefined,
): { image: string; cmd: string[] } {
  const chosen = template === undefined ? undefined : templates?.[template];
  const boot = chosen?.boot;
  return {
    image: chosen?.image ?? defaultImage,
    // Detached, so that init (tini) reaps it; stopping it does not end the machine.
    cmd:
      boot === undefined
        ? ["sleep", "infinity"]
        : ["sh", "-c", '("$@" &); exec sleep infinity', "sh", ...boot],
  };
}

/**
 * Builds `tag` from `baseImage` with `files` added (absolute path → bytes, mode 0644, root-owned),
 * as an operator builds a template image `FROM` the computer image. `remove` deletes the image.
 */
export async function bakeTemplateImage(options: {
  readonly baseImage: string;
  readonly tag: string;
  readonly files: Readonly<Record<string, Uint8Array>>;
  readonly docker?: Docker;
}): Promise<{ readonly image: string; remove(): Promise<void> }> {
  const docker = options.docker ?? new Docker({ socketPath: "/var/run/docker.sock" });
  const container = await docker.createContainer({
    Image: options.baseImage,
    Cmd: ["true"],
    NetworkDisabled: true,
  });
  try {
    await container.putArchive(tarOf(options.files), { path: "/" });
    const [repo, tag = "latest"] = options.tag.split(":");
    await container.commit({ repo, tag });
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
  return {
    image: options.tag,
    remove: async () => {
      await docker
        .getImage(options.tag)
        .remove({ force: true })
        .catch(() => undefined);
    },
  };
}

/** A ustar archive of regular files (paths relative to /), enough for `putArchive`. */
function tarOf(files: Readonly<Record<string, Uint8Array>>): Buffer {
  const blocks: Buffer[] = [];
  for (const [path, data] of Object.entries(files)) {
    const name = posix.normalize(path).replace(/^\/+/, "");
    if (Buffer.byteLength(name) > 100) throw new Error(`tar: path too long: ${name}`);
    const header = Buffer.alloc(512);
    header.write(name, 0, "utf8");
    header.write("0000644\0", 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write(`${data.byteLength.toString(8).padStart(11, "0")}\0`, 124);
    header.write(
      `${Math.floor(Date.now() / 1000)
        .toString(8)
        .padStart(11, "0")}\0`,
      136,
    );
    header.write("        ", 148);
    header.write("0", 156);
    header.write("ustar\0", 257);
    header.write("00", 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, Buffer.from(data), Buffer.alloc((512 - (data.byteLength % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
