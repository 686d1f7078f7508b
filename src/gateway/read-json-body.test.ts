import { describe, expect, it } from "vitest";
import { readJsonBody } from "./read-json-body.ts";

function chunked(parts: string[]): Request {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
  return new Request("http://x/", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("readJsonBody", () => {
  it("parses a body with a Content-Length under the limit", async () => {
    expect(await readJsonBody(new Request("http://x/", { method: "POST", body: '{"a":1}' }), 100)).toEqual({ a: 1 });
  });

  it("refuses a declared Content-Length over the limit with 413", async () => {
    await expect(readJsonBody(new Request("http://x/", { method: "POST", body: "x".repeat(101) }), 100)).rejects.toMatchObject({ status: 413 });
  });

  it("counts a chunked body as it streams and stops at the limit", async () => {
    expect(await readJsonBody(chunked(['{"a":', '"é"}']), 100)).toEqual({ a: "é" });
    await expect(readJsonBody(chunked(['{"a":"', "x".repeat(60), "x".repeat(60), '"}']), 100)).rejects.toMatchObject({ status: 413 });
  });

  it("answers an empty or broken body with 400", async () => {
    await expect(readJsonBody(new Request("http://x/", { method: "POST", body: "" }), 100)).rejects.toMatchObject({ status: 400, message: "the request body is empty: send a JSON object" });
    await expect(readJsonBody(new Request("http://x/", { method: "POST", body: "{" }), 100)).rejects.toMatchObject({ status: 400 });
  });
});

describe("readJsonBody's depth limit", () => {
  const nested = (levels: number) => `{"tools":[{"parameters":${"[".repeat(levels - 3)}${"]".repeat(levels - 3)}}]}`;
  const post = (body: string) => new Request("http://x/", { method: "POST", body });

  it("takes JSON nested 128 levels deep", async () => {
    await expect(readJsonBody(post(nested(128)), 1_000_000)).resolves.toBeTypeOf("object");
  });

  it("refuses 129 levels with 400 naming the field, without recursion (200 000 levels)", async () => {
    await expect(readJsonBody(post(nested(129)), 1_000_000)).rejects.toMatchObject({ status: 400, param: "tools[0].parameters[0][0][0]…" });
    await expect(readJsonBody(post(nested(200_000)), 1_000_000)).rejects.toMatchObject({ status: 400 });
  });
});
