import type { GatewayError } from "../../errors/gateway-error.ts";
import type { OpenAIUsageDetails, StreamPart, TokenLogprob } from "../../model/stream-part.ts";
import type { Usage } from "../../model/usage.ts";
import { mergeUsage } from "../../model/usage.ts";
import { newAnswerId } from "../answer-id.ts";
import { toOpenAIFinishReason } from "../finish-reasons.ts";
import { billedUsage, summaryComment, type StreamSummary } from "../stream-summary.ts";
import { renderOpenAIError } from "./render-openai-error.ts";
import { renderOpenAIUsage } from "./render-openai-response.ts";

// Renders stream parts as Chat Completions chunks, framed exactly as OpenAI frames them:
// `data: <json>\n\n` per chunk and `data: [DONE]` at the end. The usage chunk (`choices: []`) is
// sent only when the client asked for it with `stream_options.include_usage`.

export class OpenAIStreamRenderer {
  private id = "";
  private model = "";
  /** The upstream's service_tier and system_fingerprint, as OpenAI repeats them on every chunk. */
  private identity: Record<string, string> = {};
  /** OpenAI's, from its first chunk; the gateway's clock for a provider that gives none. */
  private created = Math.floor(Date.now() / 1000);
  private usage: Usage | undefined;
  private usageDetails: OpenAIUsageDetails | undefined;
  private failed = false;
  /** The serialized start of every chunk of this stream, up to its delta. */
  private head: string | undefined;

  constructor(private readonly includeUsage: boolean) {}

  render(part: StreamPart): string {
    switch (part.type) {
      case "start":
        this.id = part.id || newAnswerId("chatcmpl-"); // a decoder may send none
        this.model = part.model;
        if (part.created !== undefined) this.created = part.created;
        this.identity = {
          ...(part.serviceTier ? { service_tier: part.serviceTier } : {}),
          ...(part.systemFingerprint ? { system_fingerprint: part.systemFingerprint } : {}),
        };
        this.head = undefined;
        return this.chunk({ role: "assistant", content: "" });
      case "text-delta":
        return this.chunk(part.refusal ? { refusal: part.text } : { content: part.text }, null, part.logprobs, part.refusal);
      case "annotations":
        // As OpenAI streams them: a delta of their own, which the SDK's stream helper puts on the
        // final message.
        return this.chunk({ annotations: part.annotations });
      case "reasoning-delta":
        // As llama-server sends it: the openai SDK passes the field through, clients that do not
        // know it ignore it.
        return this.chunk({ reasoning_content: part.text });
      case "tool-call-start":
        return this.chunk({
          tool_calls: [{ index: part.index, id: part.id, type: "function", function: { name: part.name, arguments: "" } }],
        });
      case "tool-call-delta":
        return this.chunk({ tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] });
      case "usage":
        this.usage = mergeUsage(this.usage, part.usage);
        if (part.openAIDetails) this.usageDetails = part.openAIDetails;
        return "";
      case "finish":
        return this.chunk({}, toOpenAIFinishReason(part.reason));
      // A thinking block's signature, and thinking Anthropic encrypted: nothing an OpenAI client reads.
      case "reasoning-signature":
      case "redacted-reasoning":
      case "decoder-timings":
        return "";
      case "error":
        return this.error(part.error);
    }
  }

  /**
   * The usage chunk (if asked for), `[DONE]`, then tollgate's summary where the SDK no longer
   * reads. After an error chunk, the summary alone: no `[DONE]` (the SDK has thrown on the error).
   */
  end(summary: StreamSummary): string {
    if (this.failed) return summaryComment(summary);
    let out = "";
    if (this.includeUsage) {
      out += frame({
        id: this.id || (this.id = newAnswerId("chatcmpl-")),
        object: "chat.completion.chunk",
        created: this.created,
        model: this.model,
        ...this.identity,
        choices: [],
        usage: this.usage ? renderOpenAIUsage(this.usage, this.usageDetails) : renderOpenAIUsage(billedUsage(summary)),
      });
    }
    return out + "data: [DONE]\n\n" + summaryComment(summary);
  }

  /** An SSE comment: the OpenAI SDK's decoder skips lines that start with a colon. */
  keepAlive(): string {
    return ": keep-alive\n\n";
  }

  /** OpenAI reports a mid-stream failure as a data event with an `error` object; the SDK throws on it. */
  error(error: GatewayError): string {
    this.failed = true;
    return frame(renderOpenAIError(error));
  }

  /**
   * `{id, object, created, model, choices: [{index: 0, delta, logprobs: null, finish_reason}], usage?}`.
   * Only the delta and the finish reason change from chunk to chunk, so the rest is serialized
   * once per stream: JSON.stringify of the whole chunk for every token was 3–4% of a streamed
   * request's CPU profile. The bytes are the same (render-openai-stream.test.ts).
   */
  private chunk(delta: Record<string, unknown>, finishReason: string | null = null, logprobs?: TokenLogprob[], ofRefusal?: true): string {
    this.head ??= `data: {"id":${JSON.stringify(this.id || (this.id = newAnswerId("chatcmpl-")))},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.model)},${identityFields(this.identity)}"choices":[{"index":0,"delta":`;
    const tail = this.includeUsage ? '}],"usage":null}\n\n' : "}]}\n\n";
    const probabilities = logprobs ? JSON.stringify(ofRefusal ? { content: null, refusal: logprobs } : { content: logprobs, refusal: null }) : "null";
    return `${this.head}${JSON.stringify(delta)},"logprobs":${probabilities},"finish_reason":${JSON.stringify(finishReason)}${tail}`;
  }
}

/** `"service_tier":…,"system_fingerprint":…,` where known, in OpenAI's order. */
function identityFields(identity: Record<string, string>): string {
  let fields = "";
  for (const [name, value] of Object.entries(identity)) fields += `${JSON.stringify(name)}:${JSON.stringify(value)},`;
  return fields;
}

function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}
