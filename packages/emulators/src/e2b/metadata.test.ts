import { describe, expect, it } from "vitest";
import { decodeMetadataQuery } from "./emulator.ts";

describe("the SDK's metadata filter", () => {
  it("decodes the doubly encoded query the e2b SDK sends", () => {
    // {'a b':'x&y'} arrives as metadata=a%252520b%3Dx%252526y; URL parsing removes one level.
    const query = new URL("http://x/v2/sandboxes?metadata=a%252520b%3Dx%252526y").searchParams.get(
      "metadata",
    );
    expect(decodeMetadataQuery(query)).toEqual({ "a b": "x&y" });
    expect(decodeMetadataQuery(null)).toEqual({});
  });
});
