import { describe, expect, it } from "vitest";
import { postJson, useMockedGateway } from "./support/gateway.ts";

// Anthropic refuses text of whitespace alone, so the adapter drops such turns. An OpenAI client's
// LAST user turn of whitespace ("\n") dropped that way would leave the conversation ending with
// the assistant's previous turn, which Anthropic reads as a prefill to continue (older models
// carry on their own text; 4.6 and later refuse prefills). Such a request is refused for the
// Anthropic target instead: the route tries its next target, or the client is told to send text.
// Used to be wrong: the request went to Anthropic ending with the assistant turn, answered 200.

const conversation = [
  { role: "user", content: "Tell me a joke" },
  { role: "assistant", content: "Why did the chicken cross the road?" },
  { role: "user", content: "\n" },
];

describe("an OpenAI client's last user turn of whitespace only", () => {
  const rig = useMockedGateway({
    "claude-then-gpt": { targets: [{ provider: "anthropic", model: "claude-sonnet-4-6" }, { provider: "openai", model: "gpt-4o" }] },
  });

  it("is refused for an Anthropic route with a 400 naming messages, and Anthropic is never called", async () => {
    const before = rig.mocks.anthropic.requests.length;
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude", messages: conversation });
    const body = (await response.json()) as { error: { param: string; message: string } };
    expect(response.status).toBe(400);
    expect(body.error.param).toBe("messages");
    expect(body.error.message).toContain("only whitespace");
    expect(rig.mocks.anthropic.requests.length).toBe(before);
  });

  it("goes to the route's next target, which takes it as it is", async () => {
    rig.mocks.openai.enqueue({ kind: "text", text: "To get to the other side." });
    const response = await postJson(rig.gateway, "/v1/chat/completions", { model: "claude-then-gpt", messages: conversation });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-tollgate-provider")).toBe("openai");
    expect(rig.mocks.openai.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: "user", content: "\n" });
  });

  it("a blank turn that is not the last is dropped as before, and the answer comes from Anthropic", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "Sure." });
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: " " }, ...conversation.slice(0, 2), { role: "user", content: "Another one?" }],
    });
    expect(response.status).toBe(200);
    const sent = rig.mocks.anthropic.requests.at(-1)!.body.messages as { role: string }[];
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
  });

  it("is not refused when the assistant turn before it is blank too, and the user's turn before that ends the conversation", async () => {
    rig.mocks.anthropic.enqueue({ kind: "text", text: "Hello." });
    const response = await postJson(rig.gateway, "/v1/chat/completions", {
      model: "claude",
      messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "" }, { role: "user", content: " " }],
    });
    expect(response.status).toBe(200);
    expect((rig.mocks.anthropic.requests.at(-1)!.body.messages as { role: string }[]).map((message) => message.role)).toEqual(["user"]);
  });
});
