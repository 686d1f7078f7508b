import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// Anthropic refuses stop sequences of whitespace alone; the stop policy leaves them out for an
// Anthropic target and says so in the record's warnings (an OpenAI client's "\n", its most common
// stop sequence, is then not honoured, and the caller can see why).
// Used to be wrong: the adapter dropped them silently, with no warning and no policy note.

const rig = useMockedGateway();

describe("a whitespace-only stop sequence on an Anthropic target", () => {
  it("is not sent, and the record's warnings say so", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: [{ role: "user", content: "list three" }], stop: ["\n", "END"] });
    expect(response.status).toBe(200);
    expect(rig.mocks.anthropic.requests.at(-1)!.body.stop_sequences).toEqual(["END"]);
    const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
    expect(record.warnings.join(" ")).toContain(JSON.stringify("\n"));
  });
});
