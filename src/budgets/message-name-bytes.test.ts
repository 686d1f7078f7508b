import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../model/chat-request.ts";
import { promptBytes } from "./worst-case-cost.ts";

// A message's participant `name` reaches OpenAI-shaped targets, which bill it as input (OpenAI's
// token-counting recipe encodes every message value, the name included). The bound counted only
// the content: 500 turns named with 64 characters each were admitted at a third of their cost.

const turns = (name: string | undefined): ChatRequest => ({
  route: "gpt",
  stream: false,
  streamUsage: false,
  messages: Array.from({ length: 500 }, () => ({ role: "user" as const, content: [{ type: "text" as const, text: "a" }], ...(name ? { name } : {}) })),
});

describe("the input bound of named messages", () => {
  it("counts each name's bytes", () => {
    const name = "n".repeat(64);
    expect(promptBytes(turns(name)) - promptBytes(turns(undefined))).toBe(500 * 64);
  });

  it("counts a system message's name too", () => {
    const named: ChatRequest = { route: "gpt", stream: false, streamUsage: false, messages: [{ role: "system", content: "Be brief.", name: "house-rules" }] };
    const bare: ChatRequest = { ...named, messages: [{ role: "system", content: "Be brief." }] };
    expect(promptBytes(named) - promptBytes(bare)).toBe("house-rules".length);
  });
});
