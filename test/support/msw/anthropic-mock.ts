// msw stand-in for Anthropic's `POST /v1/messages` and `POST /v1/messages/count_tokens`, answering
// in the real wire format (see anthropic-wire-format.ts). Tests script replies with `enqueue` (and
// `enqueueCountTokens`) and read `requests` to see exactly what the gateway sent upstream.

import { http, HttpResponse } from "msw";
import {
  countWordsInContent,
  paced,
  thenStall,
  stalledJsonBody,
  recordRequest,
  ReplyQueue,
  sseBody,
  splitIntoPieces,
  splitIntoWordChunks,
  providerMock,
  untilAborted,
  type ProviderMock,
  type ProviderMockOptions,
  type RecordedRequest,
} from "./mock-support.ts";
import {
  refusedUserId,
  anthropicErrorBody,
  buildMessage,
  contentBlockStartEvent,
  contentBlockStopEvent,
  defaultAnthropicError,
  framePadding,
  inputJsonDeltaEvent,
  MESSAGE_STOP_EVENT,
  messageDeltaEvent,
  messageStartEvent,
  newAnthropicRequestId,
  newMessageId,
  newToolUseId,
  PING_FRAME,
  sseEvent,
  streamErrorBody,
  textDeltaEvent,
  thinkingDeltaEvent,
  signatureDeltaEvent,
  type AnthropicContentBlock,
  type AnthropicStop,
  type AnthropicToolUse,
  type AnthropicUsageInput,
} from "./anthropic-wire-format.ts";

/**
 * One scripted answer. Default token counts, used when `usage` is not given:
 * input_tokens = whitespace-separated words in all text of `system` and `messages` (no cache);
 * output_tokens = number of streamed text deltas (one word each unless `chunks` is given), plus,
 * per tool_use block, its 4-character input_json pieces and one more.
 */
export type AnthropicMockReply =
  | {
      kind: "text";
      /** Default "Hello from mock Anthropic." (or `chunks` joined). */
      text?: string;
      /**
       * Thinking before the text, in a thinking block streamed one word per thinking_delta, then
       * signed with `signature` (default "sig-" and the thinking's length). "" is thinking not
       * displayed: the block carries only its signature. Counts one output token per word.
       */
      thinking?: string;
      signature?: string;
      /** A redacted_thinking block (its encrypted `data`) before any other block. */
      redactedThinking?: string;
      /** How the text is split across text_delta events; default one word per delta. */
      chunks?: string[];
      stopReason?: "end_turn" | "max_tokens" | "stop_sequence" | "refusal";
      /** With stopReason "refusal": its stop_details (category, explanation). */
      refusal?: { category: string | null; explanation: string | null };
      /** What context editing did (`{applied_edits: […]}`), as the Message and message_delta report it. */
      contextManagement?: Record<string, unknown>;
      /** With stopReason "stop_sequence"; default: the request's first `stop_sequences` entry. */
      stopSequence?: string;
      usage?: AnthropicUsageInput;
      /** Default: the `model` of the request. */
      model?: string;
      delayMsBetweenChunks?: number;
    }
  | {
      kind: "tool-use";
      blocks: AnthropicToolUse[];
      /** Optional text block before the tool_use blocks (Claude often says what it is about to do). */
      text?: string;
      usage?: AnthropicUsageInput;
      model?: string;
      delayMsBetweenChunks?: number;
    }
  | {
      /** An HTTP error before any answer (e.g. 429 rate_limit_error, 529 overloaded_error, 500 api_error). */
      kind: "http-error";
      status: number;
      type?: string;
      message?: string;
      /** Seconds, sent as `retry-after`; 429 gets 1 by default. */
      retryAfter?: number;
    }
  | {
      /**
       * HTTP 200, message_start, one text block with `afterChunks` deltas ("chunk0", " chunk1", …), then
       * `event: error` (default overloaded_error "Overloaded") and the end of the body.
       * A non-streaming request gets the same error as an HTTP status (529 for overloaded, else 500).
       */
      kind: "stream-error";
      afterChunks: number;
      type?: string;
      message?: string;
      delayMsBetweenChunks?: number;
    }
  | {
      /**
       * Streams text deltas ("tick0", " tick1", …) until the request aborts. A non-streaming request
       * gets no answer at all until it aborts (a hung upstream).
       */
      kind: "endless";
      delayMsBetweenChunks: number;
    }
  | {
      /**
       * Starts a stream normally, sends `afterChunks` content chunks ("chunk0", " chunk1", …), then
       * sends nothing more, connection open, until the request aborts (a wedged provider). A
       * non-streaming request gets no answer at all until it aborts (see headersOnly).
       */
      kind: "stall";
      afterChunks: number;
      /**
       * Send the 200 and its headers, then not even the stream's opening event; a non-streaming
       * request gets its 200, headers and the first bytes of its JSON, then nothing.
       */
      headersOnly?: boolean;
    };

export type AnthropicMockOptions = ProviderMockOptions;

/** One scripted count_tokens answer: a count (default: the request's words, see the handler) or an HTTP error. */
/** `contextManagement`: what context editing (its beta) says beside the count, `{original_input_tokens}`. */
export type AnthropicCountTokensReply = { kind: "count"; inputTokens?: number; contextManagement?: Record<string, unknown> } | Extract<AnthropicMockReply, { kind: "http-error" }>;

export type AnthropicMock = ProviderMock<AnthropicMockReply> & {
  /** Queues count_tokens answers (a queue of their own: a count never takes a Messages reply). */
  enqueueCountTokens(...replies: AnthropicCountTokensReply[]): void;
};

/** Fields about the answer, which count_tokens refuses as extra inputs. */
const NOT_FOR_COUNTING = ["max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata"];

export const DEFAULT_ANTHROPIC_TEXT = "Hello from mock Anthropic.";

export function createAnthropicMock({
  baseUrl = "https://api.anthropic.com",
  apiKey = "sk-ant-test",
}: AnthropicMockOptions = {}): AnthropicMock {
  const requests: RecordedRequest[] = [];
  const replies = new ReplyQueue<AnthropicMockReply>(() => ({ kind: "text" }));
  const countReplies = new ReplyQueue<AnthropicCountTokensReply>(() => ({ kind: "count" }));
  const base = baseUrl.replace(/\/$/, "");

  /** An error answer in Anthropic's shape, with its request id. */
  const errorResponder = (requestId: string) => (status: number, type: string, message: string, extra: Record<string, string> = {}) =>
    HttpResponse.json(anthropicErrorBody(type, message, requestId), {
      status,
      headers: { "request-id": requestId, ...extra },
    });

  /**
   * The key and version every endpoint checks first, so a rejected request uses up no scripted
   * reply. Older clients send the key as `x-api-key`; @anthropic-ai/sdk 1.x sends `Authorization: Bearer <key>`.
   */
  const refuseHeaders = (request: Request, errorResponse: ReturnType<typeof errorResponder>) => {
    const viaHeader = request.headers.get("x-api-key");
    const viaBearer = /^Bearer\s+(.*)$/i.exec(request.headers.get("authorization") ?? "")?.[1]?.trim();
    if (!viaHeader && !viaBearer) return errorResponse(401, "authentication_error", "x-api-key header is required");
    if (viaHeader ? viaHeader !== apiKey : viaBearer !== apiKey) {
      return errorResponse(401, "authentication_error", viaHeader ? "invalid x-api-key" : "Invalid bearer token");
    }
    // Any non-empty version is accepted: @anthropic-ai/sdk 1.x sends 2026-10-21, older clients 2023-06-01.
    if (!request.headers.get("anthropic-version")) {
      return errorResponse(400, "invalid_request_error", "anthropic-version: header is required");
    }
    return undefined;
  };

  /**
   * What every endpoint does first: records the request, then checks its key, version and JSON
   * body. Either the refusal to send, or the body and how to answer an error.
   */
  const receive = async (request: Request) => {
    const record = await recordRequest(request, requests);
    const requestId = newAnthropicRequestId();
    const errorResponse = errorResponder(requestId);
    const refused =
      refuseHeaders(request, errorResponse) ??
      (!record.body || typeof record.body !== "object" ? errorResponse(400, "invalid_request_error", "There was an error parsing the body: invalid JSON") : undefined);
    return { refused, record, body: record.body, requestId, errorResponse };
  };

  /** A scripted HTTP error, in Anthropic's shape; a 429 says when to retry (1 s unless told). */
  const scriptedError = (reply: Extract<AnthropicMockReply, { kind: "http-error" }>, errorResponse: ReturnType<typeof errorResponder>) => {
    const fallback = defaultAnthropicError(reply.status);
    const retryAfter = reply.retryAfter ?? (reply.status === 429 ? 1 : undefined);
    return errorResponse(reply.status, reply.type ?? fallback.type, reply.message ?? fallback.message, retryAfter === undefined ? {} : { "retry-after": String(retryAfter) });
  };

  // count_tokens answers `{"input_tokens": N}` and nothing else. N defaults to the mock's token
  // unit over the prompt: the words of `system` and `messages`, plus one per tool definition.
  const countTokens = http.post(`${base}/v1/messages/count_tokens`, async ({ request }) => {
    const { refused, body, requestId, errorResponse } = await receive(request);
    if (refused) return refused;
    if (typeof body.model !== "string") return errorResponse(400, "invalid_request_error", "model: Field required");
    if (!Array.isArray(body.messages)) return errorResponse(400, "invalid_request_error", "messages: Field required");
    if (body.messages.length === 0) return errorResponse(400, "invalid_request_error", "messages: at least one message is required");
    const extra = NOT_FOR_COUNTING.find((field) => field in body);
    if (extra) return errorResponse(400, "invalid_request_error", `${extra}: Extra inputs are not permitted`);

    const reply = countReplies.next();
    if (reply.kind === "http-error") return scriptedError(reply, errorResponse);
    const words = countWordsInContent(body.system) + countWordsInContent(body.messages) + (Array.isArray(body.tools) ? body.tools.length : 0);
    const edits = reply.contextManagement ? { context_management: reply.contextManagement } : {};
    return HttpResponse.json({ input_tokens: reply.inputTokens ?? words, ...edits }, { headers: { "request-id": requestId } });
  });

  const messages = http.post(`${base}/v1/messages`, async ({ request }) => {
    const { refused, record, body, requestId, errorResponse } = await receive(request);
    if (refused) return refused;
    if (typeof body.max_tokens !== "number") return errorResponse(400, "invalid_request_error", "max_tokens: Field required");
    const userIdRefusal = refusedUserId(body.metadata);
    if (userIdRefusal) return errorResponse(400, "invalid_request_error", userIdRefusal);

    const reply = replies.next();
    const model = ("model" in reply && reply.model) || (typeof body.model === "string" ? body.model : "claude-sonnet-4-6");
    const stream = body.stream === true;
    const promptWords = countWordsInContent(body.system) + countWordsInContent(body.messages);
    const sse = (frames: Iterable<string>, delayMs = 0, stall = false) =>
      new HttpResponse(
        sseBody(stall ? thenStall(frames, request.signal) : paced(frames, delayMs, request.signal), request.signal, () => (record.aborted = true)),
        { status: 200, headers: { "request-id": requestId, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } },
      );

    switch (reply.kind) {
      case "http-error":
        return scriptedError(reply, errorResponse);

      case "stream-error": {
        const type = reply.type ?? "overloaded_error";
        const message = reply.message ?? (type === "overloaded_error" ? "Overloaded" : "Internal server error");
        if (!stream) return errorResponse(type === "overloaded_error" ? 529 : 500, type, message);
        const partial = Array.from({ length: reply.afterChunks }, (_, i) => `${i === 0 ? "" : " "}chunk${i}`);
        const frames = openingFrames({ id: newMessageId(), model }, { input_tokens: promptWords, output_tokens: 1, ...askedGeo(body) });
        frames.push(...partial.map((piece) => sseEvent("content_block_delta", textDeltaEvent(0, piece))));
        frames.push(sseEvent("error", streamErrorBody(type, message, requestId)));
        return sse(frames, reply.delayMsBetweenChunks);
      }

      case "stall": {
        if (!stream && reply.headersOnly) {
          const body = stalledJsonBody('{"id":"msg_', request.signal, () => (record.aborted = true));
          return new HttpResponse(body, { status: 200, headers: { "request-id": requestId, "content-type": "application/json" } });
        }
        if (!stream) {
          await untilAborted(request.signal);
          return HttpResponse.error();
        }
        const frames = openingFrames({ id: newMessageId(), model }, { input_tokens: promptWords, output_tokens: 1, ...askedGeo(body) });
        for (let i = 0; i < reply.afterChunks; i++) frames.push(sseEvent("content_block_delta", textDeltaEvent(0, `${i === 0 ? "" : " "}chunk${i}`)));
        return sse(reply.headersOnly ? [] : frames, 0, true);
      }

      case "endless": {
        if (!stream) {
          await untilAborted(request.signal);
          return HttpResponse.error();
        }
        return sse(endlessFrames({ id: newMessageId(), model }, { input_tokens: promptWords, output_tokens: 1, ...askedGeo(body) }), reply.delayMsBetweenChunks);
      }

      case "text":
      case "tool-use": {
        const answer = planAnswer(reply, body);
        const usage = { ...askedGeo(body), ...(reply.usage ?? { input_tokens: promptWords, output_tokens: answer.outputTokens }) };
        const identity = { id: newMessageId(), model };
        if (!stream) {
          return HttpResponse.json(buildMessage(identity, answer.blocks, answer.stop, usage), {
            headers: { "request-id": requestId },
          });
        }
        return sse(answerFrames(identity, answer, usage), reply.delayMsBetweenChunks);
      }
    }
  });

  const mock = providerMock([messages, countTokens], requests, replies);
  return {
    ...mock,
    enqueueCountTokens: (...next) => countReplies.enqueue(...next),
    reset: () => {
      mock.reset();
      countReplies.clear();
    },
  };
}

/** The content blocks of an answer, how each is streamed, and its stop reason. */
interface PlannedAnswer {
  blocks: AnthropicContentBlock[];
  /** Per block: text_delta texts, or input_json_delta pieces. */
  streamedPieces: string[][];
  stop: AnthropicStop;
  outputTokens: number;
}

function planAnswer(reply: Extract<AnthropicMockReply, { kind: "text" | "tool-use" }>, body: any): PlannedAnswer {
  const blocks: AnthropicContentBlock[] = [];
  const streamedPieces: string[][] = [];
  let outputTokens = 0;

  if (reply.kind === "text" && reply.redactedThinking !== undefined) {
    blocks.push({ type: "redacted_thinking", data: reply.redactedThinking });
    streamedPieces.push([]);
  }
  if (reply.kind === "text" && reply.thinking !== undefined) {
    const pieces = splitIntoWordChunks(reply.thinking);
    blocks.push({ type: "thinking", thinking: reply.thinking, signature: reply.signature ?? `sig-${reply.thinking.length}` });
    streamedPieces.push(pieces);
    outputTokens += pieces.length;
  }
  const text = reply.kind === "text" ? reply.text ?? reply.chunks?.join("") ?? DEFAULT_ANTHROPIC_TEXT : reply.text;
  if (text !== undefined) {
    const chunks = (reply.kind === "text" && reply.chunks) || splitIntoWordChunks(text);
    blocks.push({ type: "text", text });
    streamedPieces.push(chunks);
    outputTokens += chunks.length;
  }

  if (reply.kind === "tool-use") {
    for (const tool of reply.blocks) {
      // The real stream opens every tool_use block with an empty partial_json before the pieces.
      const pieces = ["", ...splitIntoPieces(JSON.stringify(tool.input), 4)];
      blocks.push({ type: "tool_use", id: tool.id ?? newToolUseId(), name: tool.name, input: tool.input });
      streamedPieces.push(pieces);
      outputTokens += pieces.length;
    }
    return { blocks, streamedPieces, stop: { reason: "tool_use", sequence: null }, outputTokens };
  }

  const reason = reply.stopReason ?? "end_turn";
  const firstStopSequence = Array.isArray(body.stop_sequences) ? body.stop_sequences[0] : undefined;
  const sequence = reason === "stop_sequence" ? reply.stopSequence ?? firstStopSequence ?? null : null;
  const reported = reply.kind === "text" && reply.contextManagement ? { contextManagement: reply.contextManagement } : {};
  return { blocks, streamedPieces, stop: { reason, sequence, ...(reason === "refusal" && reply.refusal ? { details: reply.refusal } : {}), ...reported }, outputTokens };
}

/** Usage says where inference ran: the request's inference_geo, unless the reply says (a workspace default). */
function askedGeo(body: Record<string, unknown>): { inference_geo?: string } {
  return typeof body.inference_geo === "string" ? { inference_geo: body.inference_geo } : {};
}

/** Opening of a one-text-block stream: message_start (its usage as given), content_block_start, ping. */
function openingFrames(identity: { id: string; model: string }, usage: AnthropicUsageInput): string[] {
  const pad = framePadding();
  return [
    sseEvent("message_start", messageStartEvent(identity, usage), pad()),
    sseEvent("content_block_start", contentBlockStartEvent(0, { type: "text", text: "" }), pad()),
    PING_FRAME,
  ];
}

function answerFrames(identity: { id: string; model: string }, answer: PlannedAnswer, usage: AnthropicUsageInput): string[] {
  const pad = framePadding();
  const frames = [sseEvent("message_start", messageStartEvent(identity, usage), pad())];
  answer.blocks.forEach((block, index) => {
    frames.push(sseEvent("content_block_start", contentBlockStartEvent(index, block), pad()));
    // The real API sends its first ping right after the first block opens.
    if (index === 0) frames.push(PING_FRAME);
    for (const piece of answer.streamedPieces[index] ?? []) {
      const delta = block.type === "text" ? textDeltaEvent(index, piece) : block.type === "thinking" ? thinkingDeltaEvent(index, piece) : inputJsonDeltaEvent(index, piece);
      frames.push(sseEvent("content_block_delta", delta, pad()));
    }
    if (block.type === "thinking") frames.push(sseEvent("content_block_delta", signatureDeltaEvent(index, block.signature), pad()));
    frames.push(sseEvent("content_block_stop", contentBlockStopEvent(index), pad()));
  });
  if (answer.blocks.length === 0) frames.push(PING_FRAME);
  frames.push(sseEvent("message_delta", messageDeltaEvent(answer.stop, usage), pad()));
  frames.push(sseEvent("message_stop", MESSAGE_STOP_EVENT, pad()));
  return frames;
}

function* endlessFrames(identity: { id: string; model: string }, usage: AnthropicUsageInput): Generator<string> {
  yield* openingFrames(identity, usage);
  for (let i = 0; ; i++) yield sseEvent("content_block_delta", textDeltaEvent(0, `${i === 0 ? "" : " "}tick${i}`));
}
