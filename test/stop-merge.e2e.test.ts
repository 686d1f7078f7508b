import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway, waitForRecord } from "./support/gateway.ts";

// The stop policy adds the route's sequences after the client's, de-duplicated.
// Used to be wrong: a client list that repeats a sequence (["END", "END"]) had the same length as
// the merge, so the route's sequence was silently dropped.

const rig = useMockedGateway({
  stopped: { targets: [{ provider: "openai", model: "gpt-4o" }], policies: { stop: { sequences: ["\n\nUser:"] } } },
});

describe("stop policy merge", () => {
  it("adds the route's sequence even when the client repeats one of its own", async () => {
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "stopped", messages: [{ role: "user", content: "hi" }], stop: ["END", "END"] });
    expect(response.status).toBe(200);
    expect(rig.mocks.openai.requests.at(-1)!.body.stop).toContain("\n\nUser:");
  });

  it("sends a repeated sequence once, so repeats do not push distinct ones past OpenAI's 4", async () => {
    // Was: ["A", "A", "B", "C", "D"] was trimmed to its first four, and D was "not sent".
    for (const route of ["gpt", "stopped"]) {
      const response = await postJson(rig.gateway, "/v1/chat/completions", { model: route, messages: [{ role: "user", content: "hi" }], stop: ["A", "A", "B", "C", "D"] });
      expect(response.status).toBe(200);
      const sent = rig.mocks.openai.requests.at(-1)!.body.stop;
      // The route's own sequence comes after the client's four, so OpenAI's limit leaves it out.
      expect(sent).toEqual(["A", "B", "C", "D"]);
      const record = await waitForRecord(rig.gateway, response.headers.get("x-tollgate-request-id")!);
      expect(record.warnings.filter((warning) => warning.includes('"D"'))).toEqual([]);
    }
  });
});
