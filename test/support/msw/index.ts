// The cloud providers as tests see them: msw mocks of OpenAI and Anthropic behind one msw server.

import { setupServer, type SetupServer } from "msw/node";
import { createAnthropicMock, type AnthropicMock, type AnthropicMockOptions } from "./anthropic-mock.ts";
import { createOpenAIMock, type OpenAIMock, type OpenAIMockOptions } from "./openai-mock.ts";

export * from "./openai-mock.ts";
export * from "./anthropic-mock.ts";
export type { RecordedRequest } from "./mock-support.ts";
export type { OpenAIUsageInput, OpenAIToolCall } from "./openai-wire-format.ts";
export type { AnthropicUsageInput, AnthropicToolUse } from "./anthropic-wire-format.ts";

export interface MockProvidersOptions {
  openai?: OpenAIMockOptions;
  anthropic?: AnthropicMockOptions;
}

export interface MockProviders {
  openai: OpenAIMock;
  anthropic: AnthropicMock;
  server: SetupServer;
  /** Stops intercepting (msw restores the real fetch/http). */
  close(): void;
}

/**
 * Starts one msw server with both mocks. Unmatched requests pass through untouched, because tests
 * also reach real local servers (the gateway, llama-server, Redis-backed services) with fetch.
 */
export function startMockProviders(options: MockProvidersOptions = {}): MockProviders {
  const openai = createOpenAIMock(options.openai);
  const anthropic = createAnthropicMock(options.anthropic);
  const server = setupServer(...openai.handlers, ...anthropic.handlers);
  server.listen({ onUnhandledRequest: "bypass" });
  cancelUnreadClones(server);
  return { openai, anthropic, server, close: () => server.close() };
}

/**
 * msw tees every mocked response to hand a clone to its `response:mocked` event. Nobody reads that
 * clone, and a tee only cancels its source once BOTH branches are cancelled, so a client that
 * cancels a body would wait forever: the official SDKs cancel a streamed body when a caller
 * `break`s out of a stream, and a JSON error's body before they retry it (`maxRetries`), which
 * hung every retry. The same holds for responses msw lets through (`response:bypass`).
 * Cancelling every unread clone restores real-network behaviour. Call this on any server you
 * build yourself from the mocks' handlers.
 */
export function cancelUnreadClones(server: SetupServer): void {
  const cancelClone = ({ response }: { response: Response }) => {
    response.body?.cancel().catch(() => {});
  };
  server.events.on("response:mocked", cancelClone);
  // Bypassed responses (the tests' own calls to the gateway) are teed the same way.
  server.events.on("response:bypass", cancelClone);
}
