import { describe, expect, it } from "vitest";
import { z } from "zod";
import { inputIssues } from "./input-issues.ts";

const oneOf = z.union([z.strictObject({ spaceId: z.string() }), z.strictObject({ computerId: z.string() })]);
const pathsOf = (schema: z.ZodType, body: unknown) => {
  const parsed = schema.safeParse(body);
  if (parsed.success) throw new Error("expected a refusal");
  return inputIssues(parsed.error).map((i) => i.path);
};

describe("inputIssues", () => {
  it("names the field of the shape a body came closest to, not the union", () => {
    expect(pathsOf(oneOf, { spaceId: 42 })).toEqual(["spaceId"]);
    expect(pathsOf(oneOf, { computerId: 42 })).toEqual(["computerId"]);
  });

  it("names each shape's fault where the body is as far from all of them", () => {
    expect(pathsOf(oneOf, {}).sort()).toEqual(["computerId", "spaceId"]);
    const both = oneOf.safeParse({ spaceId: "a", computerId: "b" });
    if (both.success) throw new Error("expected a refusal");
    expect(inputIssues(both.error).map((i) => i.message)).toEqual([
      'Unrecognized key: "computerId"',
      'Unrecognized key: "spaceId"',
    ]);
  });

  it("keeps nested paths and plain issues as they are", () => {
    const nested = z.strictObject({ input: oneOf, n: z.number() });
    expect(pathsOf(nested, { input: { spaceId: 1 }, n: "x" }).sort()).toEqual(["input.spaceId", "n"]);
  });
});
