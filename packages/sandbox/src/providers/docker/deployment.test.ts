/** The labels that tie a container to its deployment; no Docker engine needed. */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { containerCreateOptions, hostPaths } from "./container-spec.ts";
import { ownContainerId } from "./deployment.ts";

const ID = "3f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6";

async function mountinfo(text: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), "rakazo-mountinfo-")), "mountinfo");
  await writeFile(file, text);
  return file;
}

describe("ownContainerId", () => {
  it("reads the container id from the engine's bind mount of /etc/hostname", async () => {
    const file = await mountinfo(
      [
        "612 598 0:52 / / rw,relatime master:1 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X",
        `633 612 8:1 /var/lib/docker/containers/${ID}/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/sda1 rw`,
        `634 612 8:1 /var/lib/docker/containers/${ID}/hostname /etc/hostname rw,relatime - ext4 /dev/sda1 rw`,
        "",
      ].join("\n"),
    );
    expect(await ownContainerId(file)).toBe(ID);
  });

  it("is undefined on a host (no engine bind mounts) and when the file is unreadable", async () => {
    const file = await mountinfo("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
    expect(await ownContainerId(file)).toBeUndefined();
    expect(await ownContainerId("/nonexistent/mountinfo")).toBeUndefined();
  });
});

describe("deployment labels on the computer container", () => {
  it("are set beside the computer's own, which they cannot override", () => {
    const options = containerCreateOptions({
      image: "rakazo-computer:test",
      computerId: "cmp_123",
      homeKey: "home_123",
      paths: hostPaths("/var/lib/rakazo", "cmp_123", "home_123"),
      labelPrefix: "rakazo",
      memoryBytes: 2 * 1024 ** 3,
      pidsLimit: 512,
      deploymentLabels: {
        "rakazo.data-dir": "/var/lib/rakazo",
        "rakazo.compose-project": "rakazo",
        "rakazo.computer": "cmp_other",
      },
    });
    expect(options.Labels).toMatchObject({
      "rakazo.data-dir": "/var/lib/rakazo",
      "rakazo.compose-project": "rakazo",
      "rakazo.computer": "cmp_123",
      "rakazo.managed": "true",
    });
  });
});
