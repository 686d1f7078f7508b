import { CLAUDE_TOOL_ID, TOOL_ID_SUFFIX_BYTES } from "../../adapters/anthropic/convert-to-anthropic-request.ts";
import { ANTHROPIC_DEFINED_TOOL_BOUND } from "../model/anthropic-defined-tools.ts";
import { requestImages, type ChatRequest } from "../model/chat-request.ts";
import { computeCost } from "../pricing/compute-cost.ts";
import { utf8Length } from "../runtime/utf8-length.ts";
import type { ModelPrice } from "../pricing/rates.ts";

// What a request can cost at most, before it is sent. Input is bounded by its UTF-8 byte count:
// a byte-level BPE token is at least one byte, so no tokenizer can count more tokens than bytes,
// and counting bytes takes microseconds where tokenizing a huge prompt takes milliseconds. Output
// is bounded by the effective max_tokens. The route's most expensive target sets the bound.

/** When neither the request nor the model says how long an answer may be (a local decoder). */
export const DEFAULT_OUTPUT_BOUND = 4096;

export type PricedTarget = {
  price: ModelPrice | undefined;
  /** The most tokens this target would generate for the request. */
  outputBound: number;
  /** That bound is a default (the request named no max_tokens), which a larger max_tokens raises. */
  defaultBound?: boolean;
  /** The most input tokens one image can bill on this target, where above IMAGE_TOKEN_BOUND. */
  imageTokens?: number;
  /** Input may be billed as a cache write of this lifetime (1.25× input for 5 minutes, 2× for an hour). */
  cacheWrite?: "5m" | "1h";
};

export type WorstCase = {
  amountNano: number;
  /** Each target's own worst case, in the order given (0: unpriced). `amountNano` is the largest. */
  perTargetNano: number[];
  inputBound: number;
  /** The largest max_tokens whose worst case stays within `capNano` on every target (or -1: the prompt alone is over). */
  fittingMaxTokens(capNano: number): number;
};

export function worstCaseCost(request: ChatRequest, targets: PricedTarget[]): WorstCase {
  const prompt = promptSize(request);
  const inputBoundOf = (target: PricedTarget) => prompt.bytes + prompt.images * (target.imageTokens ?? IMAGE_TOKEN_BOUND);
  const inputCost = (target: PricedTarget, price: ModelPrice) => {
    const inputBound = inputBoundOf(target);
    const usage = target.cacheWrite === "1h" ? { cacheWrite1hTokens: inputBound } : target.cacheWrite === "5m" ? { cacheWrite5mTokens: inputBound } : { inputTokens: inputBound };
    return computeCost(usage, price).totalNano;
  };
  let amountNano = 0;
  let inputBound = prompt.bytes + prompt.images * IMAGE_TOKEN_BOUND;
  const perTargetNano: number[] = [];
  for (const target of targets) {
    inputBound = Math.max(inputBound, inputBoundOf(target));
    // Unpriced: recorded as such; a budget cannot weigh it.
    const cost = target.price ? inputCost(target, target.price) + computeCost({ inputTokens: inputBoundOf(target), outputTokens: target.outputBound }, target.price).outputNano : 0;
    perTargetNano.push(cost);
    amountNano = Math.max(amountNano, cost);
  }
  return {
    amountNano,
    perTargetNano,
    inputBound,
    fittingMaxTokens(capNano) {
      let fit = Number.MAX_SAFE_INTEGER;
      for (const target of targets) {
        if (!target.price) continue;
        const left = capNano - inputCost(target, target.price);
        if (left < 0) return -1;
        // A target that fits at its own bound does not limit max_tokens: that bound is its model's
        // most output (which no max_tokens raises), or a max_tokens above what some other target
        // allows (the request was refused, so one does not fit at its bound). A default bound is
        // neither: a larger max_tokens would raise it.
        const atBound = computeCost({ inputTokens: inputBoundOf(target), outputTokens: target.outputBound }, target.price).outputNano;
        if (!target.defaultBound && left >= atBound) continue;
        const outputNanoPerToken = computeCost({ inputTokens: inputBoundOf(target), outputTokens: 1_000_000 }, target.price).outputNano / 1_000_000;
        if (outputNanoPerToken > 0) fit = Math.min(fit, Math.floor(left / outputNanoPerToken));
      }
      return fit;
    },
  };
}

const IMAGE_TOKEN_BOUND = 6000;

/** The least one block of Claude's thinking sent back is bounded at (see promptSize). */
const THINKING_BLOCK_FLOOR = 6000;

/**
 * What a provider adds to a request with tools: Anthropic's own tool-use system prompt is 313–346
 * tokens on Claude 4 models (its pricing page), OpenAI formats the definitions into the prompt.
 */
const TOOL_PROMPT_BOUND = 500;

/** The words a failed tool's result is prefixed with for OpenAI-shaped targets, with room to spare. */
const TOOL_ERROR_BOUND = 16;

/** The format policy's instruction line around a schema (policies/format), with room to spare. */
const FORMAT_INSTRUCTION_BOUND = 256;

/** The input bound of a request whose images bill at most IMAGE_TOKEN_BOUND tokens each. */
export function promptBytes(request: ChatRequest): number {
  const { bytes, images } = promptSize(request);
  return bytes + images * IMAGE_TOKEN_BOUND;
}

/**
 * UTF-8 bytes of every text the request sends (no allocation: counted from UTF-16 code units),
 * and how many images it sends, which are billed by their pixels instead.
 */
function promptSize(request: ChatRequest): { bytes: number; images: number } {
  // Images are billed by their pixels, not their bytes: a large image is at most a few thousand
  // tokens on either provider (gpt-4o-mini aside, which says so in its limits).
  const images = requestImages(request).length;
  let bytes = 0;
  const add = (text: string) => {
    bytes += utf8Length(text);
  };
  // An id with characters Anthropic refuses grows on its way to Claude (claudeToolId).
  const addId = (id: string) => {
    add(id);
    if (!CLAUDE_TOOL_ID.test(id)) bytes += TOOL_ID_SUFFIX_BYTES;
  };
  for (const message of request.messages) {
    // A participant's name is sent, and billed, with its message (OpenAI-shaped targets).
    if (message.role !== "tool" && message.name) add(message.name);
    if (message.role === "system" || message.role === "tool") {
      add(message.content);
      if (message.role === "tool") {
        // The id is the client's to choose, of any length, and goes up with the result.
        addId(message.toolCallId);
        // OpenAI-shaped targets are told a tool failed in its result's text (TOOL_ERROR_PREFIX in
        // adapters/openai/convert-to-openai-request.ts, 7 bytes): room for it.
        if (message.isError) bytes += TOOL_ERROR_BOUND;
      }
    }
    else {
      for (const part of message.content) {
        if (part.type === "text") add(part.text);
        else if (part.type === "tool-call") {
          addId(part.id);
          add(part.name);
          add(part.arguments);
        }
        // Claude's thinking sent back in a tool-use turn is billed as input. Claude 4 models
        // answer with a summary of their thinking, so the summary's bytes may fall short of
        // what is billed; the opaque signature, which grows with the thinking, counts too, and
        // no block counts for less than THINKING_BLOCK_FLOOR (what the request says of the
        // thinking behind a summary is not documented to bound it).
        else if (part.type === "thinking") bytes += Math.max(utf8Length(part.text) + utf8Length(part.signature), THINKING_BLOCK_FLOOR);
        else if (part.type === "redacted-thinking") bytes += Math.max(utf8Length(part.data), THINKING_BLOCK_FLOOR);
      }
    }
  }
  if (request.tools?.length) {
    add(JSON.stringify(request.tools));
    bytes += TOOL_PROMPT_BOUND;
    // Anthropic's own tools are sent as a type and a name; Claude expands them into their schema.
    for (const tool of request.tools) if (tool.anthropicDefined) bytes += ANTHROPIC_DEFINED_TOOL_BOUND;
  }
  // A response schema is billed as input too: OpenAI counts it, and for Anthropic the format
  // policy writes it, with an instruction line, into the system prompt (after admission).
  if (request.responseFormat && request.responseFormat.type !== "text") {
    bytes += FORMAT_INSTRUCTION_BOUND;
    if (request.responseFormat.type === "json-schema") add(request.responseFormat.name + (request.responseFormat.description ?? "") + JSON.stringify(request.responseFormat.schema));
  }
  // Chat framing adds a few tokens per message; a byte-per-token bound leaves room, this is margin.
  return { bytes: bytes + 8 * request.messages.length + 8, images };
}
