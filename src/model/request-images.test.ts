import { describe, expect, it } from "vitest";
import { messageImages, requestImages, type ChatRequest, type ImageContent } from "./chat-request.ts";

// One walk for every place that counts, prices or checks a request's images (count_tokens'
// estimate, the worst case, Claude's image types, a decoder's image URLs). Was: five loops, each
// its own reading of where images are.

const shot: ImageContent = { type: "image", source: "url", url: "https://example.com/shot.png" };
const chart: ImageContent = { type: "image", source: "base64", mediaType: "image/png", data: "iVBORw0KGgo=", detail: "low" };
const logo: ImageContent = { type: "image", source: "url", url: "https://example.com/logo.png", detail: "high" };

describe("requestImages", () => {
  it("finds a user's images and a tool result's, in order, and none elsewhere", () => {
    const request: ChatRequest = {
      route: "r",
      stream: false,
      streamUsage: false,
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "what is this?" }, shot] },
        { role: "assistant", content: [{ type: "tool-call", id: "call_1", name: "render", arguments: "{}" }] },
        { role: "tool", toolCallId: "call_1", content: "rendered", parts: [{ type: "text", text: "rendered" }, chart] },
        { role: "tool", toolCallId: "call_2", content: "no parts" },
        { role: "user", content: [logo] },
      ],
    };
    expect(requestImages(request)).toEqual([shot, chart, logo]);
    expect(request.messages.map((message) => messageImages(message).length)).toEqual([0, 1, 0, 1, 0, 1]);
  });
});
