import { createLogger } from "@rakazo/log";
import { describe, expect, it } from "vitest";
import { createWebApp } from "./app.ts";

const app = createWebApp({
  // The root page never asks the authority; a call would fail the test.
  authority: {
    authorize: () => {
      throw new Error("the root page must not ask the authority");
    },
  },
  log: createLogger({ level: "error", write: () => undefined }),
  screenScript: "",
  readme: "# Rakazo\n",
});

describe("the web root", () => {
  it("says what this service is and where the docs are, instead of a bare 404", async () => {
    const res = await app.request("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("Rakazo");
    expect(html).toContain("computer/screenUrl");
    expect(html).toMatch(/href="\/docs\/README.md"/);
    const docs = await app.request("/docs/README.md");
    expect(await docs.text()).toBe("# Rakazo\n");
  });

  it("answers the favicon as SVG at both addresses browsers ask, not a 404 on every page", async () => {
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const res = await app.request(path);
      expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 200, "image/svg+xml"]);
      expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
  });

  it("other unknown paths are still 404", async () => {
    expect((await app.request("/nope")).status).toBe(404);
  });
});
