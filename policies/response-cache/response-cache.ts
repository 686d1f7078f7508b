import { z } from "zod";
import { sha256Hex } from "../../src/auth/key-hash.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { KeyValueStore } from "../../src/store/key-value-store.ts";

// The cheapest request is the one not sent. A route may keep whole answers for a while and give
// them again to the identical request, but only for deterministic requests (temperature 0, or a
// seed): for sampled ones a cached answer would quietly take away the variety the client asked
// for. The key is the request after every other policy, so a changed policy is a new key.

export const responseCacheOptionsSchema = z.strictObject({
  ttlSeconds: z.number().int().positive({ error: "how long an answer is kept, in seconds, such as 3600" }),
});

export type ResponseCacheOptions = z.output<typeof responseCacheOptionsSchema>;

/** What is kept: the answer, and what it cost when it was made (a hit saves that much). */
export type CachedAnswer = { response: ChatResponse; provider: string; model: string; costNano: number };

export function isDeterministic(request: ChatRequest): boolean {
  return request.temperature === 0 || request.seed !== undefined;
}

export class ResponseCache {
  constructor(
    private readonly store: KeyValueStore,
    private readonly options: ResponseCacheOptions,
  ) {}

  /** The cache key of a request on a route; streamed or not is the same answer. */
  async keyFor(route: string, request: ChatRequest): Promise<string> {
    const { stream: _stream, streamUsage: _streamUsage, ...answerShaping } = request;
    return `answer:${await sha256Hex(JSON.stringify([route, answerShaping]))}`;
  }

  async lookup(key: string): Promise<CachedAnswer | undefined> {
    const text = await this.store.get(key);
    return text ? (JSON.parse(text) as CachedAnswer) : undefined;
  }

  async save(key: string, answer: CachedAnswer): Promise<void> {
    await this.store.set(key, JSON.stringify(answer), this.options.ttlSeconds);
  }
}
