// msw stand-in for OpenAI's `POST /v1/chat/completions`, answering in the real wire format
// (see openai-wire-format.ts). Tests script replies with `enqueue` and read `requests` to see
// exactly what the gateway sent upstream.

import { http, HttpResponse, type JsonBodyType } from "msw";
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
  buildChatCompletion,
  buildChunk,
  buildUsage,
  defaultOpenAIError,
  FIRST_TEXT_DELTA,
  incorrectApiKeyBody,
  INVALID_JSON_BODY,
  MISSING_API_KEY_BODY,
  newOpenAIRequestId,
  newResponseIdentity,
  newToolCallId,
  openAIErrorBody,
  pieceLogprobs,
  sseData,
  SSE_DONE,
  streamChoice,
  type OpenAIResponseIdentity,
  type OpenAIStreamShape,
  type OpenAITokenLogprob,
  type OpenAIToolCall,
  type OpenAIUsageInput,
} from "./openai-wire-format.ts";

/**
 * One scripted answer. Default token counts, used when `usage` is not given:
 * prompt_tokens = whitespace-separated words in all text of `messages`;
 * completion_tokens = number of streamed content chunks (one word each unless `chunks` is given),
 * or for tool calls, the number of 4-character argument pieces plus one per call.
 */
export type OpenAIMockReply =
  | {
      kind: "text";
      /** Default "Hello from mock OpenAI." (or `chunks` joined). */
      text?: string;
      /** How the text is split across stream chunks; default one word per chunk. */
      chunks?: string[];
      finishReason?: "stop" | "length" | "content_filter";
      usage?: OpenAIUsageInput;
      /** Default: the `model` of the request. */
      model?: string;
      /** The tier the answer says served it; default "default" (a project's settings may make it "priority"). */
      serviceTier?: string;
      delayMsBetweenChunks?: number;
    }
  | {
      kind: "tool-calls";
      calls: OpenAIToolCall[];
      usage?: OpenAIUsageInput;
      model?: string;
      delayMsBetweenChunks?: number;
    }
  | {
      /** An HTTP error before any answer; 429 gets a `retry-after` header (default 1 s). */
      kind: "http-error";
      status: number;
      type?: string;
      code?: string | null;
      message?: string;
      retryAfter?: number;
    }
  | {
      /**
       * HTTP 200, the role chunk, `afterChunks` content chunks ("chunk0", " chunk1", …), then
       * `data: {"error":{...}}` and the end of the body (no finish chunk, no usage, no [DONE]).
       * A non-streaming request gets HTTP 500 instead.
       */
      kind: "stream-error";
      afterChunks: number;
      message?: string;
      type?: string;
      code?: string | null;
      delayMsBetweenChunks?: number;
    }
  | {
      /**
       * Streams content chunks ("tick0", " tick1", …) until the request aborts. A non-streaming
       * request gets no answer at all until it aborts (a hung upstream).
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

export type OpenAIMockOptions = ProviderMockOptions;

export type OpenAIMock = ProviderMock<OpenAIMockReply>;

export const DEFAULT_OPENAI_TEXT = "Hello from mock OpenAI.";

export function createOpenAIMock({
  baseUrl = "https://api.openai.com/v1",
  apiKey = "sk-test-openai",
}: OpenAIMockOptions = {}): OpenAIMock {
  const requests: RecordedRequest[] = [];
  const replies = new ReplyQueue<OpenAIMockReply>(() => ({ kind: "text" }));

  const chatCompletions = http.post(`${baseUrl.replace(/\/$/, "")}/chat/completions`, async ({ request }) => {
    const record = await recordRequest(request, requests);
    const startedAt = Date.now();
    const requestId = newOpenAIRequestId();
    const headers = (): Record<string, string> => ({
      "x-request-id": requestId,
      "openai-processing-ms": String(Date.now() - startedAt + 1),
      "openai-version": "2020-10-01",
    });
    const jsonError = (status: number, body: JsonBodyType, extra: Record<string, string> = {}) =>
      HttpResponse.json(body, { status, headers: { ...headers(), ...extra } });

    // Auth comes first on the real API, before the body is even parsed; no scripted reply is used up.
    const presentedKey = /^Bearer\s+(.*)$/i.exec(request.headers.get("authorization") ?? "")?.[1]?.trim();
    if (!presentedKey) return jsonError(401, MISSING_API_KEY_BODY);
    if (presentedKey !== apiKey) return jsonError(401, incorrectApiKeyBody(presentedKey));

    const body = record.body;
    if (!body || typeof body !== "object") return jsonError(400, INVALID_JSON_BODY);
    // The real API refuses an assistant turn whose content is null without tool calls.
    const nullTurn = Array.isArray(body.messages)
      ? (body.messages as { role?: unknown; content?: unknown; tool_calls?: unknown }[]).findIndex((m) => m?.role === "assistant" && m.content === null && !m.tool_calls)
      : -1;
    if (nullTurn >= 0) return jsonError(400, openAIErrorBody("Invalid value for 'content': expected a string, got null.", "invalid_request_error", null, `messages.[${nullTurn}].content`));

    const reply = replies.next();
    const model = ("model" in reply && reply.model) || (typeof body.model === "string" ? body.model : "gpt-4o");
    const stream = body.stream === true;
    const shape: OpenAIStreamShape = {
      includeUsage: body.stream_options?.include_usage === true,
      includeObfuscation: body.stream_options?.include_obfuscation !== false,
    };
    const sse = (frames: Iterable<string>, delayMs = 0, stall = false) =>
      new HttpResponse(
        sseBody(stall ? thenStall(frames, request.signal) : paced(frames, delayMs, request.signal), request.signal, () => (record.aborted = true)),
        { status: 200, headers: { ...headers(), "content-type": "text/event-stream; charset=utf-8" } },
      );

    switch (reply.kind) {
      case "http-error": {
        const retryAfter = reply.retryAfter ?? (reply.status === 429 ? 1 : undefined);
        const fallback = defaultOpenAIError(reply.status, model, retryAfter);
        const extra: Record<string, string> = retryAfter === undefined ? {} : { "retry-after": String(retryAfter) };
        return jsonError(
          reply.status,
          openAIErrorBody(reply.message ?? fallback.message, reply.type ?? fallback.type, reply.code !== undefined ? reply.code : fallback.code),
          extra,
        );
      }

      case "stream-error": {
        const error = openAIErrorBody(
          reply.message ?? "The server had an error while processing your request. Sorry about that!",
          reply.type ?? "server_error",
          reply.code ?? null,
        );
        if (!stream) return jsonError(500, error);
        const identity = newResponseIdentity(model);
        const frames = [sseData(buildChunk(identity, shape, [streamChoice(FIRST_TEXT_DELTA)]))];
        for (let i = 0; i < reply.afterChunks; i++) frames.push(contentFrame(identity, shape, `${i === 0 ? "" : " "}chunk${i}`));
        frames.push(sseData(error));
        return sse(frames, reply.delayMsBetweenChunks);
      }

      case "stall": {
        if (!stream && reply.headersOnly) {
          const body = stalledJsonBody('{"id":"chatcmpl-', request.signal, () => (record.aborted = true));
          return new HttpResponse(body, { status: 200, headers: { ...headers(), "content-type": "application/json" } });
        }
        if (!stream) {
          await untilAborted(request.signal);
          return HttpResponse.error();
        }
        const identity = newResponseIdentity(model);
        const frames = [sseData(buildChunk(identity, shape, [streamChoice(FIRST_TEXT_DELTA)]))];
        for (let i = 0; i < reply.afterChunks; i++) frames.push(contentFrame(identity, shape, `${i === 0 ? "" : " "}chunk${i}`));
        return sse(reply.headersOnly ? [] : frames, 0, true);
      }

      case "endless": {
        if (!stream) {
          await untilAborted(request.signal);
          return HttpResponse.error();
        }
        return sse(endlessFrames(newResponseIdentity(model), shape), reply.delayMsBetweenChunks);
      }

      case "text": {
        const chunks = reply.chunks ?? splitIntoWordChunks(reply.text ?? DEFAULT_OPENAI_TEXT);
        const text = reply.text ?? chunks.join("");
        const usage = reply.usage ?? { prompt_tokens: countWordsInContent(body.messages), completion_tokens: chunks.length };
        const finishReason = reply.finishReason ?? "stop";
        const identity = { ...newResponseIdentity(model), ...(reply.serviceTier ? { serviceTier: reply.serviceTier } : {}) };
        // Asked for (`logprobs: true`), each piece's log probability comes with it.
        const logprobs = body.logprobs === true ? pieceLogprobs(chunks, typeof body.top_logprobs === "number" ? body.top_logprobs : 0) : undefined;
        if (!stream) {
          return HttpResponse.json(buildChatCompletion(identity, { content: text, finishReason, ...(logprobs ? { logprobs } : {}) }, usage), { headers: headers() });
        }
        const frames = [
          sseData(buildChunk(identity, shape, [streamChoice(FIRST_TEXT_DELTA)])),
          ...chunks.map((piece, index) => contentFrame(identity, shape, piece, logprobs?.slice(index, index + 1))),
          ...closingFrames(identity, shape, finishReason, usage),
        ];
        return sse(frames, reply.delayMsBetweenChunks);
      }

      case "tool-calls": {
        const calls = reply.calls.map((call) => ({ ...call, id: call.id ?? newToolCallId() }));
        const argumentPieces = calls.map((call) => splitIntoPieces(call.arguments, 4));
        const usage = reply.usage ?? {
          prompt_tokens: countWordsInContent(body.messages),
          completion_tokens: argumentPieces.reduce((sum, pieces) => sum + pieces.length + 1, 0),
        };
        const identity = newResponseIdentity(model);
        if (!stream) {
          return HttpResponse.json(
            buildChatCompletion(identity, { content: null, toolCalls: calls, finishReason: "tool_calls" }, usage),
            { headers: headers() },
          );
        }
        const frames = [
          ...toolCallFrames(identity, shape, calls, argumentPieces),
          ...closingFrames(identity, shape, "tool_calls", usage),
        ];
        return sse(frames, reply.delayMsBetweenChunks);
      }
    }
  });

  return providerMock(chatCompletions, requests, replies);
}

function contentFrame(identity: OpenAIResponseIdentity, shape: OpenAIStreamShape, content: string, logprobs?: OpenAITokenLogprob[]): string {
  return sseData(buildChunk(identity, shape, [streamChoice({ content }, null, logprobs)]));
}

/** The finish chunk (empty delta), the usage chunk when it was asked for, then `[DONE]`. */
function closingFrames(
  identity: OpenAIResponseIdentity,
  shape: OpenAIStreamShape,
  finishReason: "stop" | "length" | "content_filter" | "tool_calls",
  usage: OpenAIUsageInput,
): string[] {
  const frames = [sseData(buildChunk(identity, shape, [streamChoice({}, finishReason)]))];
  if (shape.includeUsage) frames.push(sseData(buildChunk(identity, shape, [], buildUsage(usage))));
  frames.push(SSE_DONE);
  return frames;
}

/**
 * Tool calls as the real API streams them: the first call's opening delta doubles as the role delta
 * (`content: null`); each call opens with index/id/type/name and empty arguments, then the arguments
 * follow in pieces carrying only `index` and `function.arguments`.
 */
function toolCallFrames(
  identity: OpenAIResponseIdentity,
  shape: OpenAIStreamShape,
  calls: Required<OpenAIToolCall>[],
  argumentPieces: string[][],
): string[] {
  const frames: string[] = [];
  calls.forEach((call, index) => {
    const opening = { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } };
    const delta = index === 0
      ? { role: "assistant", content: null, tool_calls: [opening], refusal: null }
      : { tool_calls: [opening] };
    frames.push(sseData(buildChunk(identity, shape, [streamChoice(delta)])));
    for (const piece of argumentPieces[index] ?? []) {
      const pieceDelta = { tool_calls: [{ index, function: { arguments: piece } }] };
      frames.push(sseData(buildChunk(identity, shape, [streamChoice(pieceDelta)])));
    }
  });
  return frames;
}

function* endlessFrames(identity: OpenAIResponseIdentity, shape: OpenAIStreamShape): Generator<string> {
  yield sseData(buildChunk(identity, shape, [streamChoice(FIRST_TEXT_DELTA)]));
  for (let i = 0; ; i++) yield contentFrame(identity, shape, `${i === 0 ? "" : " "}tick${i}`);
}
