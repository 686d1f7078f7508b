import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../model/chat-request.ts";
import { promptBytes } from "./worst-case-cost.ts";

// A tool call's id is the client's to choose, with no length limit in either dialect, and it goes
// up twice: on the assistant's call and on the tool's result. The bound counted neither, so a
// request could carry megabytes of id text its reservation and per-request cap never saw (found
// by review: a 5,000-byte id raised the bound by 0).

const toolTurn = (id: string): ChatRequest => ({
  route: "claude",
  stream: false,
  streamUsage: false,
  messages: [
    { role: "user", content: [{ type: "text", text: "What is the weather?" }] },
    { role: "assistant", content: [{ type: "tool-call", id, name: "weather", arguments: '{"city":"Oslo"}' }] },
    { role: "tool", toolCallId: id, content: "4 °C" },
  ],
});

describe("the input bound of a tool call's id", () => {
  it("counts the id's bytes on the call and on its result", () => {
    expect(promptBytes(toolTurn("x".repeat(5_001))) - promptBytes(toolTurn("x"))).toBe(2 * 5_000);
  });

  it("counts them as UTF-8", () => {
    expect(promptBytes(toolTurn("éé")) - promptBytes(toolTurn("é"))).toBe(2 * 2);
  });

  it("counts what an id Claude refuses grows by on its way there (`_` and an 8-digit hash)", () => {
    expect(promptBytes(toolTurn("functions.weather:0")) - promptBytes(toolTurn("functions_weather_0"))).toBe(2 * 9);
  });
});
