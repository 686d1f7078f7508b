// The shared steps of the tests where Redis goes away under a gateway (a restart, a failover):
// a config with a budgeted route on Redis, and a budgeted stream that is admitted while Redis is
// up and finishes after it crashed, so its record and its settle both meet the outage.
import { join } from "node:path";
import { expect } from "vitest";
import type { MockProviders } from "./msw/index.ts";
import type { RestartableRedis } from "./redis-server.ts";
import { APP_KEY, testConfig } from "./gateway.ts";

/** The test config plus route `budgeted` (gpt-4o, $10 in total) and a store on `REDIS_URL`. */
export function budgetedOnRedis(prefix: string, dir: string) {
  const base = testConfig();
  return {
    ...base,
    routes: { ...base.routes, budgeted: { targets: [{ provider: "openai", model: "gpt-4o" }], budget: { usd: 10, window: "total" } } },
    // The embedded ledger's directory is where a stopped gateway keeps what it could not write.
    store: { redisUrl: { env: "REDIS_URL" }, keyPrefix: prefix, path: join(dir, "ledger.jsonl") },
  };
}

/**
 * Streams 1000 in / 1000 out tokens of gpt-4o ($0.0125) on `budgeted`, `chunks` chunks 300 ms
 * apart; Redis crashes right after the answer's headers, and the body is read to its end.
 * Resolves to the request id.
 */
export async function streamWhileRedisCrashes(gatewayUrl: string, mocks: MockProviders, redis: RestartableRedis, chunks: number): Promise<string> {
  const text = Array.from({ length: chunks }, (_, index) => (index === 0 ? "a" : ` ${String.fromCharCode(97 + index)}`));
  mocks.openai.enqueue({ kind: "text", chunks: text, delayMsBetweenChunks: 300, usage: { prompt_tokens: 1000, completion_tokens: 1000 } });
  const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${APP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "budgeted", stream: true, max_tokens: 1000, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(response.status).toBe(200);
  const requestId = response.headers.get("x-tollgate-request-id")!;
  await redis.crash();
  await response.text();
  return requestId;
}
