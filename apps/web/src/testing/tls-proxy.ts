/**
 * nginx terminating TLS in front of the web service, configured by
 * infra/docker/nginx.example.conf (the file docs/self-hosting.md § TLS gives self-hosters) as
 * written: only its port, name, certificate and upstream are replaced, so the documented
 * configuration is the tested one. A self-signed certificate for 127.0.0.1 (openssl), and an
 * nginx of its own (prefix, pid, logs and temp paths in a temp directory, `daemon off`) on a
 * loopback port; nothing of the system's nginx is used.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export const NGINX = "/usr/sbin/nginx";
const EXAMPLE = new URL("../../../../infra/docker/nginx.example.conf", import.meta.url);

export interface TlsProxy {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** The certificate (PEM), for clients that verify it. */
  readonly ca: string;
  /** nginx's error log so far, for failure messages. */
  errorLog(): Promise<string>;
  close(): Promise<void>;
}

/** A loopback port free right now (the proxy's port must be known before the web service starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** The example `server { … }` block with this test's port, name, certificate and upstream. */
async function documentedServerBlock(options: {
  port: number;
  certificate: string;
  key: string;
  upstream: string;
}): Promise<string> {
  let out = await readFile(EXAMPLE, "utf8");
  const replace = (pattern: RegExp, value: string) => {
    if (!pattern.test(out)) throw new Error(`infra/docker/nginx.example.conf has no ${pattern}`);
    out = out.replace(pattern, value);
  };
  replace(/listen 443 ssl;/, `listen 127.0.0.1:${options.port} ssl;`);
  replace(/server_name \S+;/, "server_name 127.0.0.1;");
  replace(/ssl_certificate \S+;/, `ssl_certificate ${options.certificate};`);
  replace(/ssl_certificate_key \S+;/, `ssl_certificate_key ${options.key};`);
  replace(/proxy_pass http:\/\/127\.0\.0\.1:8788;/, `proxy_pass ${options.upstream};`);
  return out;
}

export async function startTlsProxy(options: { port: number; upstream: string }): Promise<TlsProxy> {
  const dir = await mkdtemp(join(tmpdir(), "rakazo-tls-proxy-"));
  // Run as root, nginx's workers drop to nobody: they must be able to reach their temp paths.
  await chmod(dir, 0o711);
  const certificate = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  await promisify(execFile)("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-keyout",
    key,
    "-out",
    certificate,
  ]);
  const server = await documentedServerBlock({
    port: options.port,
    certificate,
    key,
    upstream: options.upstream,
  });
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((name) => `  ${name}_temp_path ${join(dir, name)};`)
    .join("\n");
  const conf = join(dir, "nginx.conf");
  await writeFile(
    conf,
    `worker_processes 1;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} info;
events { worker_connections 128; }
http {
  access_log ${join(dir, "access.log")};
${temp}
${server}
}
`,
  );
  const errorLog = () => readFile(join(dir, "error.log"), "utf8").catch(() => "");
  const child: ChildProcess = spawn(
    NGINX,
    ["-p", `${dir}/`, "-e", join(dir, "error.log"), "-c", conf, "-g", "daemon off;"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const ca = await readFile(certificate, "utf8");
  const url = `https://127.0.0.1:${options.port}`;
  const close = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = await errorLog();
      await close();
      throw new Error(`nginx exited (${child.exitCode}): ${stderr}${log}`);
    }
    if ((await healthStatus(url, ca).catch(() => 0)) === 200) break;
    if (Date.now() > deadline) {
      const log = await errorLog();
      await close();
      throw new Error(`nginx did not answer on ${url} within 10 s: ${stderr}${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, ca, errorLog, close };
}

function healthStatus(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.get(`${url}/health`, { ca, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", reject);
  });
}
