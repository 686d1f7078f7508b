// Shared by the wire tests: both mocks behind one msw server for the file, and small helpers.
import { afterAll, afterEach } from "vitest";
import { startMockProviders, type MockProviders } from "./index.ts";

/** Starts the mocks for this test file, resets them between tests and stops them after. */
export function useMockProviders(): MockProviders {
  const providers = startMockProviders();
  afterEach(() => {
    providers.openai.reset();
    providers.anthropic.reset();
  });
  afterAll(() => providers.close());
  return providers;
}

/** 6 words: the mocks' default input-token count for it is 6. */
export const userMessage = { role: "user" as const, content: "Say hello to the test suite" };

/** Runs `fn` and returns what it threw (failing the test if it did not throw). */
export async function thrownBy(fn: () => Promise<unknown>): Promise<any> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
