import { z } from "zod";
import { sha256Hex } from "../../src/auth/key-hash.ts";
import { hasCacheMarks, type ChatMessage, type ChatRequest } from "../../src/model/chat-request.ts";
import { documentedToolTokens } from "../../src/model/anthropic-defined-tools.ts";
import { findModelLimits } from "../../src/pricing/find-model-price.ts";
import type { Policy, PolicyContext, PolicyLog, PolicyTarget } from "../policy.ts";

// Cached input is billed at a tenth of the input price, but Anthropic charges 1.25x (5 min) or 2x
// (1 h) to WRITE the cache. Writing pays off only for a prefix that will be read again, so by
// default ("auto") a breakpoint is placed only on a prefix seen before within the TTL, counted by
// prefix hash in the shared store, per team: the system prompt (with the tools before it) once it repeats,
// and the conversation up to the latest user turn once it repeats or once the conversation it
// continues was seen. Below the model's minimum cacheable length nothing is placed.
// OpenAI caches prefixes on its own; `prompt_cache_key` sends requests with one prefix to the
// same cache. llama-server reuses its KV cache with `cache_prompt`.

export const promptCacheOptionsSchema = z.strictObject({
  /** `auto`: write only prefixes seen before; `always`: whenever long enough; `off`. */
  mode: z.enum(["auto", "always", "off"], { error: 'write "auto", "always" or "off"' }).default("auto"),
  ttl: z.enum(["5m", "1h"], { error: 'write "5m" or "1h"' }).default("5m"),
  /** Sightings within the TTL (this one included) before a prefix is written in `auto` mode. */
  minRepeats: z.number().int().min(1).default(2),
});

export type PromptCacheOptions = z.output<typeof promptCacheOptionsSchema>;

const TTL_SECONDS = { "5m": 300, "1h": 3600 } as const;
/** Used for Anthropic models the price list has no minimum for. */
const DEFAULT_MIN_CACHE_TOKENS = 1024;

export function promptCachePolicy(options: PromptCacheOptions): Policy {
  return {
    name: "promptCache",
    async adaptToTarget(request, target, log, context) {
      // Breakpoints change what a call costs, not how many tokens it holds: a count needs none,
      // and must not count as a sighting.
      if (options.mode === "off" || context.countOnly) return request;
      if (target.providerType === "openai-compatible") {
        log.notes.push("prompt_cache=reuse-prefix");
        return { ...request, promptCache: { reusePrefix: true } };
      }
      const prefix = splitPrefix(request);
      if (target.providerType === "openai") {
        // The app's own key goes as sent: it knows which of its requests share a prefix.
        if (request.promptCacheKey !== undefined) {
          log.notes.push("prompt_cache=client");
          return request;
        }
        // Routing hint only: OpenAI caches on its own; the request's order stays as it is.
        const key = `tg-${(await sha256Hex(`${context.route}\u0000${prefix.stable}`)).slice(0, 32)}`;
        log.notes.push("prompt_cache=key");
        return { ...request, promptCache: { openAIKey: key } };
      }
      // A client that places its own breakpoints knows its prompt best; they go as sent.
      if (hasCacheMarks(request)) {
        log.notes.push("prompt_cache=client");
        return request;
      }
      return placeAnthropicBreakpoints(request, target, prefix, options, log, context);
    },
  };
}

type Prefix = {
  /** Tools and system prompt: what every request of an app shares. */
  stable: string;
  /** Index of the latest user (or tool result) turn, or -1. */
  latestUserTurn: number;
  /** Index of the last user (or tool result) message before the assistant's answer that precedes the latest turn, or -1. */
  previousUserTurn: number;
};

function splitPrefix(request: ChatRequest): Prefix {
  const { messages } = request;
  const system = messages.filter((message) => message.role === "system").map((message) => message.content);
  const fromUser = (message: ChatMessage) => message.role === "user" || message.role === "tool";
  const latestUserTurn = messages.findLastIndex(fromUser);
  // The earlier request of this conversation ended where the assistant's last answer began. Not
  // simply the user message before the latest: parallel tool calls come back as several tool
  // results in a row, and the earlier request ended before all of them.
  const lastAnswer = messages.findLastIndex((message, index) => index < latestUserTurn && message.role === "assistant");
  return {
    stable: JSON.stringify([request.tools ?? [], system]),
    latestUserTurn,
    previousUserTurn: lastAnswer < 0 ? -1 : messages.findLastIndex((message, index) => index < lastAnswer && fromUser(message)),
  };
}

async function placeAnthropicBreakpoints(
  request: ChatRequest,
  target: PolicyTarget,
  prefix: Prefix,
  options: PromptCacheOptions,
  log: PolicyLog,
  context: PolicyContext,
): Promise<ChatRequest> {
  const minimum = findModelLimits("anthropic", target.model).minCacheTokens ?? DEFAULT_MIN_CACHE_TOKENS;
  const hasSystem = request.messages.some((message) => message.role === "system");
  // Anthropic's own tools are read expanded: a prefix they carry over the minimum is cached (a
  // breakpoint below it costs nothing, one never placed loses the savings).
  const stableTokens = (await context.counter.count(prefix.stable)) + documentedToolTokens(request);
  const conversation = request.messages.slice(0, prefix.latestUserTurn + 1);
  const conversationTokens = stableTokens + (await context.counter.count(textOf(conversation.filter((message) => message.role !== "system"))));
  if (conversationTokens < minimum) {
    log.notes.push(`prompt_cache=below-min:${conversationTokens}<${minimum}`);
    return request;
  }

  let cacheStable = stableTokens >= minimum && (hasSystem || Boolean(request.tools?.length));
  let cacheConversation = prefix.latestUserTurn >= 0;
  if (options.mode === "auto") {
    // Sightings are counted per team: whether a breakpoint is placed shows in x-tollgate-policies,
    // so a store shared across teams would tell one tenant what another sent within the TTL.
    // And per provider and model: each has a cache of its own (two Anthropic accounts do not share).
    const sightingsOf = context.team === undefined ? "admin" : `team:${context.team}`;
    const hash = async (messages: ChatMessage[]) => sha256Hex(JSON.stringify([sightingsOf, target.providerName, target.model, prefix.stable, messages]));
    const keys = [`prefix:${await hash([])}`, `prefix:${await hash(conversation)}`];
    // The conversation up to the previous user turn is the prefix an earlier request of this
    // conversation sent whole: seeing it again means the conversation goes on. A first turn has
    // none (its key would be the stable prefix's, counted twice per request).
    if (prefix.previousUserTurn >= 0) keys.push(`prefix:${await hash(request.messages.slice(0, prefix.previousUserTurn + 1))}`);
    // Counted once per request: a retry of the same target (after a 529) is not a second sighting.
    const memoKey = `promptCache:${keys.join(",")}`;
    let counting = context.perRequest?.get(memoKey) as Promise<number[] | Error> | undefined;
    if (!counting) {
      counting = context.store.countSightings(keys, TTL_SECONDS[options.ttl]).catch((error: Error) => error);
      context.perRequest?.set(memoKey, counting);
    }
    const counts = await counting;
    if (counts instanceof Error) {
      // Caching only saves money: without the store, send the request as it is.
      log.warnings.push(`prompt cache: the store is unreachable (${counts.message}); no breakpoints placed`);
      return request;
    }
    const [stableSeen, conversationSeen, continuedSeen] = counts;
    cacheStable &&= stableSeen! >= options.minRepeats;
    cacheConversation &&= conversationSeen! >= options.minRepeats || (prefix.previousUserTurn >= 0 && continuedSeen! >= options.minRepeats);
  }
  if (!cacheStable && !cacheConversation) {
    log.notes.push("prompt_cache=first-sighting");
    return request;
  }
  const places = [cacheStable ? "system" : "", cacheConversation ? "conversation" : ""].filter(Boolean).join("+");
  log.notes.push(`prompt_cache=${places}:${options.ttl}`);
  return {
    ...request,
    promptCache: {
      anthropic: {
        ttl: options.ttl,
        tools: cacheStable && Boolean(request.tools?.length),
        system: cacheStable && hasSystem,
        ...(cacheConversation ? { throughMessages: conversationBreakpoints(prefix) } : {}),
      },
    },
  };
}

/**
 * The conversation is cached through its latest user turn, and, where it continues an earlier
 * request, also through that request's end, where the earlier request wrote it. Anthropic looks
 * for an earlier write only about 20 blocks back from a breakpoint: an agent step of 10 parallel
 * tool calls adds 21 (the answer, 10 tool_use, 10 tool_result), and with the latest breakpoint
 * alone every such turn wrote the whole conversation again at 1.25x input instead of reading it
 * at 0.1x. The earlier end is a read where it was written, and costs nothing where it was not
 * (the same tokens are written either way). Four breakpoints at most: tools, system and these two.
 */
function conversationBreakpoints(prefix: Prefix): number[] {
  return prefix.previousUserTurn >= 0 ? [prefix.previousUserTurn, prefix.latestUserTurn] : [prefix.latestUserTurn];
}

function textOf(messages: ChatMessage[]): string {
  return messages
    .map((message) => {
      if (message.role === "system" || message.role === "tool") return message.content;
      return message.content.map((part) => (part.type === "text" ? part.text : part.type === "tool-call" ? part.arguments : "")).join("");
    })
    .join("\n");
}
