/**
 * The contacts web app fixture for VER-2: a list of contacts, a search form and an "Export CSV"
 * button that POSTs and answers with an attachment. The fake-computer test serves it on the
 * host's loopback (`startContactsApp`); the Docker test writes `contactsAppScript(...)` into the
 * computer and runs it there, since containers have no network. Both use the same handler.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

const CONTACTS = [
  { name: "Ada Lovelace", email: "ada@example.test", company: "Analytical" },
  { name: "Grace Hopper", email: "grace@example.test", company: "COBOL Inc" },
  { name: "Alan Turing", email: "alan@example.test", company: "Bletchley" },
] as const;

export function contactsCsv(): string {
  return `name,email,company\n${CONTACTS.map((c) => `${c.name},${c.email},${c.company}`).join("\n")}\n`;
}

/**
 * The app's request handler. Self-contained JavaScript once types are stripped: it is
 * serialized with Function#toString into the in-computer script, so it may use only its
 * arguments.
 */
function contactsHandler(
  contacts: readonly { name: string; email: string; company: string }[],
  csv: string,
  onExport: () => void,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const page = (body: string, title: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "POST" && url.pathname === "/export") {
      req.resume();
      req.on("end", () => {
        onExport();
        res.writeHead(200, {
          "content-type": "text/csv",
          "content-disposition": 'attachment; filename="contacts.csv"',
        });
        res.end(csv);
      });
      return;
    }
    if (url.pathname === "/") {
      const rows = contacts
        .map((c) => `<tr><td>${c.name}</td><td>${c.email}</td><td>${c.company}</td></tr>`)
        .join("");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        page(
          `<h1>Contacts</h1><nav><a href="/settings">Settings</a></nav>
           <table><tr><th>Name</th><th>Email</th><th>Company</th></tr>${rows}</table>
           <form method="post" action="/export"><button type="submit">Export CSV</button></form>`,
          "Contacts",
        ),
      );
      return;
    }
    if (url.pathname === "/settings") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        page(
          `<h1>Settings</h1><label for="pw">Password</label><input id="pw" type="password" value="hunter2">`,
          "Settings",
        ),
      );
      return;
    }
    res.writeHead(404).end();
  };
}

export interface ContactsApp {
  readonly url: string;
  /** How many exports the server produced (a replayed click would show here). */
  exports(): number;
  close(): Promise<void>;
}

export async function startContactsApp(): Promise<ContactsApp> {
  let exports = 0;
  const server = http.createServer(
    contactsHandler(CONTACTS, contactsCsv(), () => {
      exports += 1;
    }),
  );
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    exports: () => exports,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/**
 * A standalone ES module (`node <file>.mjs`) serving the same app on 127.0.0.1:`port`, with no
 * imports beyond Node builtins. Each export appends one line to `exportLog` (an absolute path or
 * one relative to the server's working directory), so the test can count exports.
 */
export function contactsAppScript(options: { port: number; exportLog: string }): string {
  return [
    `import http from "node:http";`,
    `import { appendFileSync } from "node:fs";`,
    `const handler = (${contactsHandler.toString()})(${JSON.stringify(CONTACTS)}, ${JSON.stringify(contactsCsv())}, () => appendFileSync(${JSON.stringify(options.exportLog)}, "export\\n"));`,
    `http.createServer(handler).listen(${options.port}, "127.0.0.1", () => console.log("listening"));`,
    "",
  ].join("\n");
}
