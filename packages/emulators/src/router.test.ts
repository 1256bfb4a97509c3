import { describe, expect, it } from "vitest";
import { notEmulated, Router } from "./router.ts";

const noop = () => undefined;

describe("the emulators' router", () => {
  it("matches method and every segment, and hands over decoded params", async () => {
    const seen: Record<string, string>[] = [];
    const router = new Router<{ tag: string }>()
      .on("GET", "/sandboxes/:id", ({ params, tag }) => {
        seen.push({ id: params.id, tag });
      })
      .on(
        "POST",
        "/sandboxes/:id/ports/:port",
        ({ params }) => {
          seen.push({ id: params.id, port: params.port });
        },
        "host",
      );

    expect(router.match("GET", "/sandboxes/a%20b")?.name).toBe("GET /sandboxes/:id");
    await router
      .match("GET", "/sandboxes/a%20b")
      ?.run({} as never, {} as never, new URL("http://x"), { tag: "t" });
    await router
      .match("POST", "/sandboxes/x/ports/80")
      ?.run({} as never, {} as never, new URL("http://x"), { tag: "" });
    expect(seen).toEqual([
      { id: "a b", tag: "t" },
      { id: "x", port: "80" },
    ]);
    expect(router.match("POST", "/sandboxes/x/ports/80")?.name).toBe("host");
  });

  it("matches nothing for another method, a missing or extra segment, or an empty param", () => {
    const router = new Router().on("GET", "/sandboxes/:id", noop).on("DELETE", "/sandboxes/:id", noop);
    expect(router.match("POST", "/sandboxes/x")).toBeUndefined();
    expect(router.match("GET", "/sandboxes")).toBeUndefined();
    expect(router.match("GET", "/sandboxes/x/stop")).toBeUndefined();
    expect(router.match("GET", "/sandboxes/")).toBeUndefined();
    expect(router.match("DELETE", "/sandboxes/x")?.name).toBe("DELETE /sandboxes/:id");
  });

  it("keeps a malformed escape as sent instead of throwing", async () => {
    let id = "";
    const router = new Router().on("GET", "/s/:id", ({ params }) => {
      id = params.id;
    });
    await router.match("GET", "/s/%E0%A4%A")?.run({} as never, {} as never, new URL("http://x"), {});
    expect(id).toBe("%E0%A4%A");
  });

  it("names the call it refuses", () => {
    expect(notEmulated("PATCH", "/sandboxes/x")).toBe("PATCH /sandboxes/x is not emulated");
  });
});
