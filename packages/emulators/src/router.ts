/**
 * The emulators' one router: method + path pattern → handler, with the pattern's `:name`
 * segments handed to the handler as typed, URL-decoded params. A service answers a call no
 * route matches with its own error shape and `notEmulated`, so an SDK call an emulator does not
 * play is named in the refusal instead of failing in some other way.
 *
 * A handler gets the call (`request`, `response`, `url`, `params`) plus what the service adds
 * before dispatch (`X`, e.g. the parsed JSON body); state reaches it through the route group that
 * registered it, not through the call.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

type Params<P extends string> = { readonly [K in ParamNames<P>]: string };

export type Call<P extends string = string, X = unknown> = {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly url: URL;
  readonly params: Params<P>;
} & X;

export type Handler<P extends string = string, X = unknown> = (call: Call<P, X>) => Promise<void> | void;

interface Route<X> {
  readonly method: Method;
  readonly name: string;
  readonly segments: readonly string[];
  readonly handle: Handler<string, X>;
}

/** A call's route, ready to run. */
export interface Matched<X> {
  /** The route's name (Boat's fault injection addresses routes by it). */
  readonly name: string;
  run(request: IncomingMessage, response: ServerResponse, url: URL, extra: X): Promise<void>;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export class Router<X = unknown> {
  readonly #routes: Route<X>[] = [];

  /** Adds a route; `name` defaults to "METHOD pattern". */
  on<P extends string>(method: Method, pattern: P, handle: Handler<P, X>, name?: string): this {
    this.#routes.push({
      method,
      name: name ?? `${method} ${pattern}`,
      segments: pattern.split("/"),
      handle: handle as Handler<string, X>,
    });
    return this;
  }

  /** The first route whose method and pattern fit, or undefined. */
  match(method: string, path: string): Matched<X> | undefined {
    const given = path.split("/");
    for (const route of this.#routes) {
      if (route.method !== method || route.segments.length !== given.length) continue;
      const params: Record<string, string> = {};
      const fits = route.segments.every((segment, i) => {
        const part = given[i] ?? "";
        if (!segment.startsWith(":")) return segment === part;
        params[segment.slice(1)] = decode(part);
        return part !== "";
      });
      if (!fits) continue;
      return {
        name: route.name,
        run: async (request, response, url, extra) => {
          await route.handle({ ...extra, request, response, url, params } as Call<string, X>);
        },
      };
    }
    return undefined;
  }
}

/**
 * The status of that refusal in every service: 501 Not Implemented. A 404 would read as "this
 * sandbox does not exist" to the SDKs (E2B's `SandboxNotFoundError`, Daytona's
 * `DaytonaNotFoundError`), a 200 as success.
 */
export const NOT_EMULATED_STATUS = 501;

/** The refusal's message for a call no route plays. */
export function notEmulated(method: string | undefined, path: string): string {
  return `${method ?? "GET"} ${path} is not emulated`;
}
