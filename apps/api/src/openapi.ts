/**
 * The OpenAPI 3.1 document served at `GET /openapi.json`, generated from the RPC contracts
 * (@rakazo/api-contract: summary, description, auth, errors, input, output) and the one
 * code→status map (http-errors.ts), so it cannot drift from what the API accepts and answers.
 * It is written for generators nobody here wrote (docs/decisions.md, "The OpenAPI document"):
 * per-operation security, required bodies, per-RPC error codes, portable schemas.
 */
import type { RpcContract } from "@rakazo/api-contract";
import type { AppErrorCode } from "@rakazo/services";
import { z } from "zod";
import { ERROR_MEANING, HTTP_STATUS } from "./http-errors.ts";

type JsonSchema = Record<string, unknown>;

/**
 * What any RPC can answer whatever its own work: the edge's checks (Host, body size, JSON
 * content type), authentication, the cross-origin refusal, input parsing, the database and a
 * bug. An `external/*` RPC is also UNKNOWN_RPC while the surface is off (EXT-1).
 */
export const EVERY_RPC_CAN_ANSWER: readonly AppErrorCode[] = [
  "INVALID_JSON",
  "INVALID_INPUT",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "BODY_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "HOST_NOT_ALLOWED",
  "DATABASE_UNAVAILABLE",
  "INTERNAL",
];

/** The codes the document lists for one RPC: its declared ones and those every RPC can get. */
export function answeredCodes(contract: RpcContract): AppErrorCode[] {
  const codes = new Set<AppErrorCode>([
    ...EVERY_RPC_CAN_ANSWER,
    ...(contract.errors as readonly AppErrorCode[]),
  ]);
  if (contract.auth === "external") codes.add("UNKNOWN_RPC");
  return [...codes];
}

/** The security requirement of each auth kind (the schemes are in `SECURITY_SCHEMES`). */
const SECURITY: Record<RpcContract["auth"], readonly Record<string, []>[]> = {
  token: [{ userToken: [] }],
  external: [{ externalToken: [] }],
  // Open to this machine, or the operator's BOOTSTRAP_TOKEN / printed setup code as the bearer.
  bootstrap: [{}, { setupToken: [] }],
  // No bearer: the one-time invite code in the body is the credential.
  invite: [{}],
};

const SECURITY_SCHEMES = {
  userToken: {
    type: "http",
    scheme: "bearer",
    description:
      "A user's API token (`rkz_…`): from `setup/bootstrap`, `token/create` or `./rakazo token create`. Every RPC outside `external/*` and `setup/bootstrap` takes it; the external token is refused here.",
  },
  externalToken: {
    type: "http",
    scheme: "bearer",
    description:
      "The deployment's `EXTERNAL_COMPUTER_TOKEN` (docs/external.md). Only the `external/*` RPCs take it, and they take nothing else: a user's API token is refused there.",
  },
  setupToken: {
    type: "http",
    scheme: "bearer",
    description:
      "First-run setup only: the operator's `BOOTSTRAP_TOKEN` when configured; otherwise none from the server's own machine, or the printed one-time setup code (`DATA_DIR/setup-code`) from anywhere else.",
  },
};

const UNAUTHENTICATED_HEADERS = {
  "WWW-Authenticate": {
    description: '`Bearer`, with `error="invalid_token"` when a token was sent and refused (RFC 6750).',
    schema: { type: "string" },
  },
};

/** zod's bound for `.int()` without an explicit range: JavaScript's safe integers. */
const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * zod's JSON Schema made portable to generators outside JavaScript: no ±2^53 bounds zod adds
 * to every integer (only a contract's own bounds stay), `format: date-time` without zod's
 * regex for it. Patterns the contracts write themselves are ASCII-only (no `\p{…}`).
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (typeof node !== "object" || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === "minimum" || key === "maximum") && SAFE_INTEGER_BOUNDS.has(value as number)) continue;
    if (key === "pattern" && (node as JsonSchema).format === "date-time") continue;
    out[key] = portable(value);
  }
  return out;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  // Each schema stands alone (no shared $defs), and `$schema` is implied by the document.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io });
  return portable(rest) as JsonSchema;
}

/** `{ error: { code, message, details? } }` restricted to the codes answered with `status`. */
function errorBody(codes: readonly AppErrorCode[]): JsonSchema {
  return {
    type: "object",
    required: ["error"],
    additionalProperties: false,
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        additionalProperties: false,
        properties: {
          code: { type: "string", enum: [...codes] },
          message: { type: "string" },
          details: { type: "object", additionalProperties: true },
        },
      },
    },
  };
}

function errorResponses(codes: readonly AppErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, AppErrorCode[]>();
  for (const code of codes) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, atStatus]) => {
        const sorted = [...atStatus].sort();
        return [
          String(status),
          {
            description: sorted.map((code) => `\`${code}\`: ${ERROR_MEANING[code]}`).join("\n\n"),
            ...(status === 401 ? { headers: UNAUTHENTICATED_HEADERS } : {}),
            content: { "application/json": { schema: errorBody(sorted) } },
          },
        ];
      }),
  );
}

/** The API treats an empty body as `{}`: a body is required unless `{}` is a valid input. */
function bodyRequired(contract: RpcContract): boolean {
  return !contract.input.safeParse({}).success;
}

export function buildOpenApiDocument(contracts: readonly RpcContract[]): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const contract of contracts) {
    paths[`/rpc/${contract.name}`] = {
      post: {
        operationId: contract.name.replaceAll("/", "_"),
        summary: contract.summary,
        description: contract.description,
        tags: [contract.name.split("/")[0]],
        security: SECURITY[contract.auth],
        requestBody: {
          required: bodyRequired(contract),
          content: { "application/json": { schema: jsonSchema(contract.input, "input") } },
        },
        responses: {
          "200": {
            description: "The RPC's result.",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["result"],
                  additionalProperties: false,
                  properties: { result: jsonSchema(contract.output, "output") },
                },
              },
            },
          },
          ...errorResponses(answeredCodes(contract)),
        },
      },
    };
  }
  const tags = [...new Set(contracts.map((c) => c.name.split("/")[0] ?? ""))].map((name) => ({
    name,
    description: `The \`${name}/*\` RPCs.`,
  }));
  return {
    openapi: "3.1.0",
    info: {
      title: "Rakazo API",
      version: "1",
      description:
        "Every RPC is `POST /rpc/<name>` with a JSON body (`content-type: application/json`; an empty body is `{}`); success is `{ result }`, failure is `{ error: { code, message, details? } }` with a stable code. Other methods on an RPC path answer 405 with `Allow: POST`.",
    },
    // Relative: the API serves this document itself, so its own address is the server's.
    servers: [{ url: "/", description: "The API that served this document" }],
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags,
    components: { securitySchemes: SECURITY_SCHEMES },
    paths,
  };
}
