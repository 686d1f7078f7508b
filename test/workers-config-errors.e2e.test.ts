import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "./support/gateway.ts";
import { bundleWorker, type WorkerBundle, workerLog } from "./support/workers.ts";

// A Worker whose config cannot be used: where the Node server refuses to start, the Worker
// answers every request with a 503 in the client's dialect and says why in its log, once.
// Was: JSON.parse and resolveConfig threw out of fetch, on every request: a plain-text 500 (which
// the official SDKs retry although it never clears), without x-tollgate-request-id. The 503 says
// `x-should-retry: false` (it never clears either: both SDKs sent each request three times), and
// its dialect is chosen as the gateway's, by path first (a client without anthropic-version).

const EDGE_KEY = "tg_edge_key_0123456789";
const keys = [{ id: "edge", team: "edge", hash: sha256(EDGE_KEY) }];
let bundle: WorkerBundle;

beforeAll(async () => {
  bundle = await bundleWorker();
});
afterAll(() => bundle?.remove());

/** Two requests to a Worker with these bindings (OpenAI's dialect, then Anthropic's), and its log. */
async function askTwice(bindings: Record<string, string>) {
  const log = workerLog({ stderr: "collect" });
  const miniflare = new Miniflare({
    ...bundle.options,
    bindings,
    handleRuntimeStdio: log.handleRuntimeStdio,
  });
  try {
    const post = (path: string, headers: Record<string, string>) =>
      miniflare.dispatchFetch(`http://gateway${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${EDGE_KEY}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "gpt", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
      });
    const openai = await post("/v1/chat/completions", {});
    const anthropic = await post("/v1/messages", {});
    const answer = async (response: Awaited<ReturnType<Miniflare["dispatchFetch"]>>) => ({
      status: response.status,
      requestId: response.headers.get("x-tollgate-request-id"),
      shouldRetry: response.headers.get("x-should-retry"),
      body: await response.json(),
    });
    return { openai: await answer(openai), anthropic: await answer(anthropic), log: log.text };
  } finally {
    await miniflare.dispose();
  }
}

const INVALID = "tollgate cannot start: its config (TOLLGATE_CONFIG, or a secret it names) is invalid; the Worker's log says what to fix";

describe("a Worker whose config cannot be used", () => {
  it.each([
    {
      problem: "a provider key secret that is not set",
      config: JSON.stringify({ providers: { openai: { type: "openai", apiKey: { env: "OPENAI_API_KEY" } } }, routes: { gpt: { targets: [{ provider: "openai", model: "gpt-4o" }] } }, keys }),
      logged: "OPENAI_API_KEY",
    },
    { problem: "TOLLGATE_CONFIG that is not JSON", config: "{ providers: oops", logged: "TOLLGATE_CONFIG is not JSON" },
    {
      problem: "a config that fails validation",
      config: JSON.stringify({ providers: { local: { type: "openai-compatible", baseUrl: 42 } }, routes: {}, keys }),
      logged: "providers.local.baseUrl",
    },
  ])("$problem: a 503 invalid_config in each dialect, with a request id; the reason in the log once", async ({ config, logged }) => {
    const { openai, anthropic, log } = await askTwice({ TOLLGATE_CONFIG: config });
    expect(openai).toEqual({
      status: 503,
      requestId: expect.stringMatching(/^req_[0-9a-f]{32}$/),
      shouldRetry: "false",
      body: { error: { message: INVALID, type: "server_error", param: null, code: "invalid_config" } },
    });
    expect(anthropic).toMatchObject({ status: 503, requestId: expect.stringMatching(/^req_/), shouldRetry: "false", body: { type: "error", error: { message: INVALID } } });
    // The details are for the operator: in the log, not in the answer to whoever asked.
    expect(JSON.stringify([openai.body, anthropic.body])).not.toContain(logged);
    expect(log().split(logged).length - 1).toBe(1);
  });

  it("no config at all: the not-configured 503 carries a request id too", async () => {
    const { openai } = await askTwice({});
    expect(openai).toMatchObject({ status: 503, requestId: expect.stringMatching(/^req_/), shouldRetry: "false", body: { error: { code: "not_configured" } } });
  });
});
