/**
 * The OpenAPI 3.1 document served at `GET /openapi.json`, generated from the RPC contracts
 * (@rakazo/api-contract) and the one code→status map (http-errors.ts), so it cannot drift
 * from what the API accepts and answers.
 */
import type { RpcContract } from "@rakazo/api-contract";
import { APP_ERROR_CODES, type AppErrorCode } from "@rakazo/services";
import { z } from "zod";
import { HTTP_STATUS } from "./http-errors.ts";

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  // Each schema stands alone (no shared $defs), and `$schema` is implied by the document.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io });
  return rest;
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

function errorResponses(): Record<string, unknown> {
  const byStatus = new Map<number, AppErrorCode[]>();
  for (const code of APP_ERROR_CODES) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, codes]) => [
        String(status),
        {
          description: codes.join(", "),
          content: { "application/json": { schema: errorBody(codes) } },
        },
      ]),
  );
}

export function buildOpenApiDocument(contracts: readonly RpcContract[]): Record<string, unknown> {
  const errors = errorResponses();
  const paths: Record<string, unknown> = {};
  for (const contract of contracts) {
    paths[`/rpc/${contract.name}`] = {
      post: {
        operationId: contract.name.replaceAll("/", "_"),
        tags: [contract.name.split("/")[0]],
        // setup/bootstrap needs no API token (optionally the operator's bootstrap token).
        security: contract.auth === "token" ? [{ bearerAuth: [] }] : [{}, { bearerAuth: [] }],
        requestBody: {
          required: false,
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
          ...errors,
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Rakazo API",
      version: "1",
      description:
        "Every RPC is `POST /rpc/<name>` with a JSON body; success is `{ result }`, failure is " +
        "`{ error: { code, message, details? } }` with a stable code.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
    security: [{ bearerAuth: [] }],
    paths,
  };
}
