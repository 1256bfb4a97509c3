// computer/update and computer/recover rebuild a computer's machine; the rebuilt machine must
// carry the computer's network policy like the one create made. An `egress` computer on the
// real API and worker with the Docker provider reaches a fixture web server before the update,
// after it, and after recovering a live machine. The fixture sits on an `--internal` Docker
// network this test creates (no route out), handed to the provider as the egress proxies'
// upstream, so no packet leaves this machine.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { computerOperations, computers } from "@rakazo/db";
import { createProvider } from "@rakazo/sandbox";
import { requireDocker } from "@rakazo/sandbox/testing";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { buildSupervisorOverlay } from "../support/supervisor-overlay.ts";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

const gate = await requireDocker("a rebuilt computer keeps its network policy");

const tag = randomBytes(4).toString("hex");
const NETWORK = `rakazo-upnet-${tag}`;
const LABEL = `rakazo-upnet=${tag}`;
const FIXTURE = "http://fixture.test:8080/";
const MARKER = "UPDATE-NETWORK-FIXTURE";

const docker = (...args: string[]): string =>
  execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

describe.skipIf(gate.skip)(gate.title, () => {
  let overlay: ReturnType<typeof buildSupervisorOverlay> | undefined;
  let system: TestSystem;
  let owner: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId = "";

  beforeAll(async () => {
    overlay = buildSupervisorOverlay(COMPUTER_IMAGE);
    docker("network", "create", "--internal", "--label", LABEL, NETWORK);
    const [ipam] = JSON.parse(docker("network", "inspect", "-f", "{{json .IPAM.Config}}", NETWORK)) as {
      Subnet: string;
    }[];
    const subnet = ipam?.Subnet ?? "";
    expect(subnet, "the internal network has a subnet").not.toBe("");
    const server = `import http.server as h\nclass H(h.BaseHTTPRequestHandler):\n  def do_GET(s):\n    b=b"${MARKER}"\n    s.send_response(200);s.send_header("content-length",str(len(b)));s.end_headers();s.wfile.write(b)\nh.HTTPServer(("0.0.0.0",8080),H).serve_forever()`;
    docker(
      "run",
      "-d",
      "--rm",
      "--label",
      LABEL,
      "--network",
      NETWORK,
      "--network-alias",
      "fixture.test",
      "--user",
      "1000:1000",
      "--cap-drop",
      "ALL",
      overlay.image,
      "python3",
      "-c",
      server,
    );
    const image = overlay.image;
    system = await createTestSystem({
      provider: (dataDir) =>
        createProvider({
          kind: "docker",
          image,
          dataDir,
          egressNetwork: NETWORK,
          // The fixture's private range is opened as an operator would open one.
          egressPrivateAllow: [subnet],
        }),
    });
    owner = await system.newTenant("owner");
    await system.startWorker();
  }, 300_000);

  afterAll(async () => {
    if (computerId) {
      await system?.rpc("computer/delete", { computerId }, owner.token).catch(() => undefined);
      await eventually(async () =>
        docker("ps", "-aq", "--filter", `label=rakazo.computer=${computerId}`) === "" ? true : undefined,
      ).catch(() => undefined);
    }
    await system?.close();
    const leftovers = [
      ...docker("ps", "-aq", "--filter", `label=${LABEL}`).split("\n"),
      ...(computerId
        ? docker("ps", "-aq", "--filter", `label=rakazo.computer=${computerId}`).split("\n")
        : []),
      ...(computerId
        ? docker("ps", "-aq", "--filter", `label=rakazo.egress-of=${computerId}`).split("\n")
        : []),
    ].filter(Boolean);
    if (leftovers.length > 0) docker("rm", "-f", ...leftovers);
    try {
      docker("network", "rm", NETWORK);
    } catch (error) {
      console.error(`update-network: could not remove ${NETWORK}: ${(error as Error).message}`);
    }
    overlay?.remove();
  }, 180_000);

  const row = async () =>
    (await system.ctx.db.select().from(computers).where(eq(computers.id, computerId)))[0];

  /** What `curl` in the computer gets from the fixture (its way out is the egress proxy). */
  const fetchFixture = async (): Promise<string> => {
    const ref = (await row())?.providerRef;
    if (!ref) throw new Error("the computer has no machine");
    const result = await system.provider.sandbox(ref).exec({
      argv: ["curl", "-sS", "-m", "8", "-w", " [HTTP %{http_code}]", FIXTURE],
      timeoutMs: 20_000,
    });
    return `${result.stdout}${result.stderr}`;
  };

  /** The operation once it has ended (the RPC lists only operations still under way). */
  const finished = (operationId: string) =>
    eventually(async () => {
      const [operation] = await system.ctx.db
        .select()
        .from(computerOperations)
        .where(eq(computerOperations.id, operationId));
      return operation && operation.status !== "queued" && operation.status !== "running"
        ? operation
        : undefined;
    }, 180_000);

  it("reaches its fixture after create, after computer/update and after computer/recover", async (ctx) => {
    ctx.onTestFailed(() => {
      console.error(
        `update-network: the system's log\n${system.logLines
          .filter((line) => !line.includes("http.request"))
          .slice(-40)
          .join("\n")}`,
      );
    });
    const client = system.client(owner.token);
    ({ id: computerId } = await client.call("computer/create", {
      spaceId: owner.spaceId,
      network: { mode: "egress" },
    }));
    await eventually(async () => {
      const computer = await client.call("computer/get", { computerId });
      if (computer.state === "failed") throw new Error(`the computer failed: ${computer.lastError}`);
      return computer.state === "running" ? true : undefined;
    }, 180_000);
    expect(await fetchFixture()).toContain(MARKER);

    const firstRef = (await row())?.providerRef;
    const update = await system.rpc("computer/update", { computerId }, owner.token);
    expect(update.status, JSON.stringify(update.json)).toBe(200);
    expect(await finished(update.json.result.id)).toMatchObject({ status: "succeeded" });
    expect((await row())?.providerRef, "the update built a new machine").not.toBe(firstRef);
    expect(await fetchFixture(), "after computer/update").toContain(MARKER);

    // A computer marked failed while its machine still runs: recovery reconnects or replaces it.
    await system.ctx.db.update(computers).set({ state: "failed" }).where(eq(computers.id, computerId));
    const recover = await system.rpc("computer/recover", { computerId }, owner.token);
    expect(recover.status, JSON.stringify(recover.json)).toBe(200);
    expect(await finished(recover.json.result.id)).toMatchObject({ status: "succeeded" });
    expect(await fetchFixture(), "after computer/recover").toContain(MARKER);
  }, 600_000);
});
