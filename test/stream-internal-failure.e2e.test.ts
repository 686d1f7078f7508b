import { describe, expect, it, vi } from "vitest";
import { RequestMeter } from "../src/metering/request-meter.ts";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// A bug of tollgate's own mid-stream (rendering, metering) is caught: the client gets an error
// event, the upstream is stopped, and the request is recorded as an error. Whether the client
// left is known apart from the upstream's abort, which this failure uses too. (Was, briefly:
// recorded as "aborted", as if the client had left.)

const rig = useMockedGateway();

describe("a tollgate bug mid-stream", () => {
  it("is recorded as an error, not as a client that left", async () => {
    const original = RequestMeter.prototype.observe;
    const spy = vi.spyOn(RequestMeter.prototype, "observe").mockImplementation(function (this: RequestMeter, part) {
      if (part.type === "text-delta" && part.text.includes("three")) throw new Error("a metering bug");
      return original.call(this, part);
    });
    try {
      rig.mocks.openai.enqueue({ kind: "text", chunks: ["one ", "two ", "three ", "four"] });
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "gpt", stream: true, messages: [{ role: "user", content: "hi" }] });
      const body = await response.text();
      // The client hears of it in its dialect, and the stream never ends as if complete.
      expect(body).toContain('{"error":{"message":"tollgate hit an internal error; see the gateway log"');
      expect(body).not.toContain("[DONE]");
      const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
      expect(record.status).toBe("error");
    } finally {
      spy.mockRestore();
    }
  });
});
