import { z } from "zod";
import { sha256Hex } from "../../src/auth/key-hash.ts";
import type { ChatRequest } from "../../src/model/chat-request.ts";
import type { ChatResponse } from "../../src/model/chat-response.ts";
import type { Caller } from "../../src/auth/authenticate.ts";
import type { KeyValueStore } from "../../src/store/key-value-store.ts";

// The cheapest request is the one not sent. A route may keep whole answers for a while and give
// them again to the identical request, but only for deterministic requests (temperature 0, or a
// seed): for sampled ones a cached answer would quietly take away the variety the client asked
// for. The key is the request after every other policy, so a changed policy is a new key.
//
// Who may be answered from whose answers is part of the key too. A hit is faster and says
// `x-tollgate-cache: hit`, so a caller who gets one learns that somebody sent that exact prompt
// within the TTL; across tenants that is a leak (the prompt-cache timing attacks on provider
// APIs are the same thing). So answers are shared within a team by default, and a route that
// serves one tenant can open the cache to every key (`share: "route"`).

export const responseCacheOptionsSchema = z.strictObject({
  ttlSeconds: z.number().int().positive({ error: "how long an answer is kept, in seconds, such as 3600" }),
  share: z
    .enum(["key", "team", "route"], { error: 'who is answered from one another\'s cached answers: "key", "team" (the default) or "route"' })
    .default("team"),
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

  /**
   * The cache key of a request on a route for this caller; streamed or not is the same answer.
   * The route's models are part of it: a route moved to another model answers from that model,
   * not from the old one's answers until they expire (which a Redis shared across deploys kept).
   */
  async keyFor(route: string, targets: readonly { provider: string; model: string }[], request: ChatRequest, caller: Caller): Promise<string> {
    // Which field carried max_tokens changes no answer: clients sending either share it.
    const { stream: _stream, streamUsage: _streamUsage, maxTokensField: _maxTokensField, ...answerShaping } = request;
    // Sorted: a "cheapest" route orders its targets anew for each request.
    const models = targets.map((target) => `${target.provider}/${target.model}`).sort();
    return `answer:${await sha256Hex(JSON.stringify([route, models, this.sharedBy(caller), answerShaping]))}`;
  }

  /** The callers who share answers with this one, as one name. */
  private sharedBy(caller: Caller): string {
    if (this.options.share === "route") return "*";
    if (caller.kind === "admin") return "admin";
    if (this.options.share === "team") return `team:${caller.key.team}`;
    return `key:${caller.key.id}`;
  }

  async lookup(key: string): Promise<CachedAnswer | undefined> {
    const text = await this.store.get(key);
    return text ? (JSON.parse(text) as CachedAnswer) : undefined;
  }

  async save(key: string, answer: CachedAnswer): Promise<void> {
    await this.store.set(key, JSON.stringify(answer), this.options.ttlSeconds);
  }
}
