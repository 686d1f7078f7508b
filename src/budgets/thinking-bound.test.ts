import { describe, expect, it } from "vitest";
import { promptBytes } from "./worst-case-cost.ts";
import type { ChatRequest } from "../model/chat-request.ts";

// Claude's thinking blocks, sent back in a tool-use turn, are billed as input. The bound counted
// them as images (6,000 tokens each), so a long block of thinking left the budget short. A block
// now counts its bytes (text and signature, or redacted data), and never less than 6,000: Claude
// 4 sends back a summary, and what the request carries is not documented to bound what it stands for.

const thinking = "Let me weigh the options. ".repeat(2_000); // 52,000 bytes
const signature = "EqQBCkYIBxgCKkBX".repeat(100); // 1,600 bytes
const redacted = "RWN0ZWQgdGhpbmtpbmc=".repeat(50); // 1,000 bytes

const turn = (content: Extract<ChatRequest["messages"][number], { role: "assistant" }>["content"]): ChatRequest => ({
  route: "claude",
  stream: false,
  streamUsage: false,
  messages: [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content },
    { role: "tool", toolCallId: "toolu_1", content: "42" },
  ],
});

describe("the input bound of thinking sent back", () => {
  const bare = promptBytes(turn([{ type: "tool-call", id: "toolu_1", name: "calc", arguments: "{}" }]));

  it("counts a thinking block's text and signature, byte for byte", () => {
    const withThinking = promptBytes(turn([{ type: "thinking", text: thinking, signature }, { type: "tool-call", id: "toolu_1", name: "calc", arguments: "{}" }]));
    expect(withThinking - bare).toBe(52_000 + 1_600);
  });

  it("counts a redacted block's data, and a short block (or redacted one) as 6,000", () => {
    const long = "RWN0ZWQgdGhpbmtpbmc=".repeat(400); // 8,000 bytes
    const redactedBound = (data: string) => promptBytes(turn([{ type: "redacted-thinking", data }, { type: "tool-call", id: "toolu_1", name: "calc", arguments: "{}" }])) - bare;
    expect(redactedBound(long)).toBe(8_000);
    expect(redactedBound(redacted)).toBe(6_000);
    const summary = promptBytes(turn([{ type: "thinking", text: "Add them.", signature: "EqQBCkYIBxgC" }, { type: "tool-call", id: "toolu_1", name: "calc", arguments: "{}" }]));
    expect(summary - bare).toBe(6_000);
  });
});
