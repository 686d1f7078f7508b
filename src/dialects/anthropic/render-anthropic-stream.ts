import type { GatewayError } from "../../errors/gateway-error.ts";
import type { FinishReason, RefusalDetails, StreamPart } from "../../model/stream-part.ts";
import type { Usage } from "../../model/usage.ts";
import { mergeUsage } from "../../model/usage.ts";
import { newAnswerId } from "../answer-id.ts";
import { toAnthropicStopReasonWith } from "../finish-reasons.ts";
import { billedUsage, summaryComment, type StreamSummary } from "../stream-summary.ts";
import { renderAnthropicError } from "./render-anthropic-error.ts";
import { parseToolArguments, renderAnthropicUsage, renderStopDetails, usageExtras } from "./render-anthropic-response.ts";

// Renders stream parts as Messages events, framed as Anthropic frames them (`event: NAME` then
// `data: JSON`). message_start is held back until the first content part so that, when the
// upstream reports input usage up front (Anthropic does), the client's message_start carries it.

export class AnthropicStreamRenderer {
  private id = "";
  private model = "";
  private started = false;
  private usage: Usage | undefined;
  private nextBlockIndex = 0;
  private openBlock: { index: number; kind: "text" | "tool" | "thinking" } | undefined;
  private readonly blockByToolIndex = new Map<number, number>();
  private readonly toolInputByBlock = new Map<number, StreamedToolInput>();
  private finishReason: FinishReason = "stop";
  private stopSequence: string | null = null;
  private refusalDetails: RefusalDetails | undefined;
  private contextManagement: Record<string, unknown> | undefined;
  /** Where inference ran and the tier that served it, as the provider said at the start. */
  private servedAs: { inferenceGeo?: string; anthropicServiceTier?: string } = {};
  private failed = false;

  render(part: StreamPart): string {
    switch (part.type) {
      case "start":
        this.id = part.id || newAnswerId("msg_"); // a decoder may send none
        this.model = part.model;
        this.servedAs = { inferenceGeo: part.inferenceGeo, anthropicServiceTier: part.anthropicServiceTier };
        return "";
      case "usage":
        this.usage = mergeUsage(this.usage, part.usage);
        return "";
      case "text-delta": {
        let out = this.ensureStarted();
        if (this.openBlock?.kind !== "text" || part.newBlock) {
          out += this.closeBlock();
          out += this.openNewBlock("text", { type: "text", text: "" });
        }
        return out + event("content_block_delta", { type: "content_block_delta", index: this.openBlock!.index, delta: { type: "text_delta", text: part.text } });
      }
      case "tool-call-start": {
        let out = this.ensureStarted() + this.closeBlock();
        out += this.openNewBlock("tool", { type: "tool_use", id: part.id, name: part.name, input: {} });
        this.blockByToolIndex.set(part.index, this.openBlock!.index);
        this.toolInputByBlock.set(this.openBlock!.index, new StreamedToolInput());
        return out;
      }
      case "tool-call-delta": {
        const index = this.blockByToolIndex.get(part.index);
        if (index === undefined || part.argumentsDelta === "") return "";
        return inputJsonDelta(index, this.toolInputByBlock.get(index)!.add(part.argumentsDelta));
      }
      case "finish":
        this.finishReason = part.reason;
        this.stopSequence = part.stopSequence ?? null;
        this.refusalDetails = part.refusalDetails;
        this.contextManagement = part.contextManagement;
        return this.ensureStarted() + this.closeBlock();
      // Claude's thinking goes on as Claude sent it: a `thinking` block per signed run of
      // thinking, closed by its signature. A local decoder's thinking is unsigned: an Anthropic
      // client gets thinking only as `thinking` blocks, which need a signature tollgate cannot
      // make, so it is left out (it still keeps the stream's deadlines alive, and is billed).
      case "reasoning-delta": {
        if (!part.signed) return "";
        const out = this.ensureThinkingBlock();
        return out + event("content_block_delta", { type: "content_block_delta", index: this.openBlock!.index, delta: { type: "thinking_delta", thinking: part.text } });
      }
      case "reasoning-signature": {
        // Alone when the thinking is not displayed: the block opens, is signed, and closes.
        let out = this.ensureThinkingBlock();
        out += event("content_block_delta", { type: "content_block_delta", index: this.openBlock!.index, delta: { type: "signature_delta", signature: part.signature } });
        return out + this.closeBlock();
      }
      case "redacted-reasoning": {
        let out = this.ensureStarted() + this.closeBlock();
        out += this.openNewBlock("thinking", { type: "redacted_thinking", data: part.data });
        return out + this.closeBlock();
      }
      // Anthropic's citations need its own search's encrypted index: OpenAI's have no place here
      // (the record notes them dropped).
      case "annotations":
      case "decoder-timings":
        return "";
      case "error":
        return this.error(part.error);
    }
  }

  end(summary: StreamSummary): string {
    // After `event: error` no Messages event may follow (the SDK has thrown); the comment may.
    if (this.failed) return summaryComment(summary);
    // The SDK takes the final input and output counts from message_delta.
    const usage = renderAnthropicUsage(this.usage ?? billedUsage(summary));
    return (
      this.ensureStarted() +
      this.closeBlock() +
      event("message_delta", {
        type: "message_delta",
        delta: { stop_reason: toAnthropicStopReasonWith(this.finishReason, this.blockByToolIndex.size > 0), stop_sequence: this.stopSequence, stop_details: renderStopDetails(this.refusalDetails) },
        usage,
        // Where Anthropic's context editing said what it did (the SDK's stream copies it).
        ...(this.contextManagement ? { context_management: this.contextManagement } : {}),
      }) +
      event("message_stop", { type: "message_stop" }) +
      summaryComment(summary)
    );
  }

  /** Anthropic's own keep-alive event, which its SDK skips. */
  keepAlive(): string {
    return event("ping", { type: "ping" });
  }

  /** `event: error` is how Anthropic itself fails a stream after HTTP 200; the SDK throws on it. */
  error(error: GatewayError): string {
    this.failed = true;
    return event("error", renderAnthropicError(error));
  }

  private ensureStarted(): string {
    if (this.started) return "";
    this.started = true;
    const usage = renderAnthropicUsage(this.usage ?? {});
    return event("message_start", {
      type: "message_start",
      message: {
        id: this.id || (this.id = newAnswerId("msg_")),
        type: "message",
        role: "assistant",
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        usage: { ...usage, output_tokens: usage.output_tokens || 1, ...usageExtras(this.servedAs) },
        container: null,
        context_management: null,
      },
    });
  }

  private ensureThinkingBlock(): string {
    if (this.openBlock?.kind === "thinking") return "";
    return this.ensureStarted() + this.closeBlock() + this.openNewBlock("thinking", { type: "thinking", thinking: "", signature: "" });
  }

  private openNewBlock(kind: "text" | "tool" | "thinking", contentBlock: Record<string, unknown>): string {
    const index = this.nextBlockIndex++;
    this.openBlock = { index, kind };
    return event("content_block_start", { type: "content_block_start", index, content_block: contentBlock });
  }

  private closeBlock(): string {
    if (!this.openBlock) return "";
    const { index, kind } = this.openBlock;
    this.openBlock = undefined;
    const heldInput = kind === "tool" ? this.toolInputByBlock.get(index)!.end() : "";
    return inputJsonDelta(index, heldInput) + event("content_block_stop", { type: "content_block_stop", index });
  }
}

/**
 * A tool call's arguments on their way to an Anthropic client, whose SDK parses what it has after
 * every piece (partial JSON) and throws on text that cannot begin an object: the stream then
 * fails in the client's hands, where the same answer not streamed reads fine (parseToolArguments).
 *
 * Arguments that open as an object (`{"` or `{}`) pass through piece by piece, as Claude's own do,
 * for as long as they read as JSON (outside strings only JSON's own characters) and up to the
 * object's closing brace. What comes after that brace, or from where they stop reading as JSON,
 * is never sent, so the client keeps the object up to that point: two calls' arguments run
 * together, `{"city":"Paris"}{"city":"Rome"}`, read as the first (not streamed, the answer holds
 * both as `{"_raw": …}`). Anything else (`[1,2]`, `null`, `{'city': 'Paris'}` from a small local
 * model) is held whole and sent at the end as the object the answer not streamed holds.
 */
class StreamedToolInput {
  /** Received and not sent, while deciding or held whole. */
  private held = "";
  private mode: "deciding" | "passing" | "stopped" | "whole" = "deciding";
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** The JSON to send now for this piece: the piece itself, a part of it, what was held with it, or "". */
  add(piece: string): string {
    if (this.mode === "stopped") return "";
    if (this.mode === "whole") {
      this.held += piece;
      return "";
    }
    if (this.mode === "passing") return this.pass(piece);
    this.held += piece;
    const text = this.held.trimStart();
    if (text === "") return "";
    const second = text.slice(1).trimStart()[0];
    if (text[0] !== "{" || (second !== undefined && second !== '"' && second !== "}")) {
      this.mode = "whole";
      return "";
    }
    if (second === undefined) return ""; // `{` alone: its next character decides
    this.mode = "passing";
    return this.pass(this.held);
  }

  /** What is still owed when the block closes: the held arguments as an object, or "". */
  end(): string {
    if (this.mode === "passing" || this.mode === "stopped") return "";
    const input = parseToolArguments(this.held);
    return Object.keys(input).length > 0 ? JSON.stringify(input) : "";
  }

  /** The part of `piece` that still reads as JSON, up to the object's closing brace. */
  private pass(piece: string): string {
    for (let i = 0; i < piece.length; i++) {
      const char = piece[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (char === "\\") this.escaped = true;
        else if (char === '"') this.inString = false;
        continue;
      }
      if (char === '"') this.inString = true;
      else if (char === "{" || char === "[") this.depth++;
      else if (char === "}" || char === "]") {
        if (--this.depth === 0) return this.stop(piece, i + 1); // the object is whole
      } else if (!JSON_OUTSIDE_STRINGS.has(char)) {
        return this.stop(piece, i); // not JSON: nothing from here on is sent
      }
    }
    return piece;
  }

  private stop(piece: string, at: number): string {
    this.mode = "stopped";
    return piece.slice(0, at);
  }
}

/** The characters JSON has outside strings: structure, whitespace, numbers and true/false/null. */
const JSON_OUTSIDE_STRINGS = new Set("{}[],: \t\r\n-+.0123456789eEtrufalsn");

function inputJsonDelta(index: number, json: string): string {
  return json === "" ? "" : event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } });
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
