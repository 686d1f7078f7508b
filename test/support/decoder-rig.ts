// A gateway in front of a scripted fake local decoder, and raw HTTP/1.x over TCP for what the
// clients cannot send (HTTP/1.0, Expect: 100-continue).
import net from "node:net";
import { afterAll, beforeAll } from "vitest";
import { startTestGateway, testConfig, type TestGateway } from "./gateway.ts";
import { startMockProviders, type MockProviders } from "./msw/index.ts";
import { startFakeDecoder, chunk, completion, sendJson, type FakeDecoder } from "./fake-decoder.ts";

export { APP_KEY, ledgerRecords, waitForRecord } from "./gateway.ts";
export { chunk, completion, sendJson };

export type Rig = { gateway: TestGateway; decoder: FakeDecoder; close(): Promise<void> };

type Routes = Record<string, { targets: { provider: string; model: string }[] }>;

/**
 * A config whose every adapter calls one node:http stand-in at `baseUrl` (an OpenAI-style `/v1`):
 * the local decoder as usual, Anthropic's SDK at its root, and the OpenAI SDK as provider
 * "openai-here" (route "gpt-here"), so a fault the stand-in makes (a reset, a body that never
 * ends) is read by each adapter for real. `routes` are added to the test config's.
 */
export function everyAdapterAt(baseUrl: string, routes: Routes = {}) {
  const base = testConfig(baseUrl);
  return {
    ...base,
    providers: {
      ...base.providers,
      anthropic: { ...base.providers.anthropic, baseUrl: baseUrl.replace(/\/v1$/, "") },
      "openai-here": { type: "openai", apiKey: { env: "OPENAI_API_KEY" }, baseUrl },
    },
    routes: { ...base.routes, "gpt-here": { targets: [{ provider: "openai-here", model: "gpt-4o" }] }, ...routes },
  };
}

export async function startRig(): Promise<Rig> {
  const decoder = await startFakeDecoder();
  decoder.handle = (body, res) => {
    if (!(body as { stream?: boolean }).stream) return sendJson(res, completion("x", { content: "hi" }, "stop", { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("c", { role: "assistant", content: "hi" }));
    res.write(chunk("c", {}, "stop"));
    res.write(chunk("c", null, null, { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    res.end("data: [DONE]\n\n");
  };
  const gateway = await startTestGateway(testConfig(decoder.baseUrl));
  return { gateway, decoder, close: async () => { await gateway.close({ drainMs: 100 }); await decoder.close(); } };
}

/**
 * A test file's gateway in front of a fake decoder whose answers each test scripts (`decoder.handle`),
 * over undici as in production; `configure` adjusts the config made for the decoder. Fields are
 * filled in by beforeAll; everything is closed after the file.
 */
export function useDecoderRig(configure: (base: ReturnType<typeof testConfig>) => unknown = (base) => base): Omit<Rig, "close"> {
  const rig = {} as Omit<Rig, "close">;
  beforeAll(async () => {
    rig.decoder = await startFakeDecoder();
    rig.gateway = await startTestGateway(configure(testConfig(rig.decoder.baseUrl)), "undici");
  });
  afterAll(async () => {
    await rig.gateway?.close();
    await rig.decoder?.close();
  });
  return rig;
}

/**
 * A fake decoder and the msw stand-ins for the clouds behind one gateway, for routes that mix a
 * local target with a cloud one. `handle` is the decoder's first script; tests may replace it.
 */
export function useDecoderWithClouds(
  configure: (base: ReturnType<typeof testConfig>) => unknown,
  handle: FakeDecoder["handle"],
): { gateway: TestGateway; decoder: FakeDecoder; mocks: MockProviders } {
  const rig = {} as { gateway: TestGateway; decoder: FakeDecoder; mocks: MockProviders };
  beforeAll(async () => {
    rig.mocks = startMockProviders();
    rig.decoder = await startFakeDecoder();
    rig.decoder.handle = handle;
    rig.gateway = await startTestGateway(configure(testConfig(rig.decoder.baseUrl)));
  });
  afterAll(async () => {
    await rig.gateway?.close();
    await rig.decoder?.close();
    rig.mocks?.close();
  });
  return rig;
}

/** Writes `data` on a fresh TCP connection; resolves with what came back and whether the server closed it within `waitMs`. */
/**
 * For a file whose tests run against one node:http stand-in (everyAdapterAt): the stand-in,
 * started before them, and in each `describe.each` of transports, a gateway over that transport
 * whose route "local-then-claude" falls back from the local decoder to Claude, both at the stand-in.
 */
export function useStandIn(): { readonly fake: FakeDecoder; gatewayOver(transport: "undici" | "fetch"): { readonly gateway: TestGateway } } {
  let fake: FakeDecoder | undefined;
  beforeAll(async () => {
    fake = await startFakeDecoder();
  });
  afterAll(async () => {
    await fake?.close();
  });
  return {
    get fake() {
      return fake!;
    },
    gatewayOver(transport) {
      let gateway: TestGateway | undefined;
      beforeAll(async () => {
        const routes = { "local-then-claude": { targets: [{ provider: "local", model: "tiny-local" }, { provider: "anthropic", model: "claude-sonnet-4-6" }] } };
        gateway = await startTestGateway(everyAdapterAt(fake!.baseUrl, routes), transport);
      });
      afterAll(async () => {
        await gateway?.close();
      });
      return {
        get gateway() {
          return gateway!;
        },
      };
    },
  };
}

export function rawHttp(port: number, data: string | Buffer, waitMs = 2000): Promise<{ text: string; closedByServer: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closedByServer, ms: Date.now() - started });
    };
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("error", () => finish(true));
    socket.on("close", () => finish(true));
    socket.write(data);
    const timer = setTimeout(() => finish(false), waitMs);
  });
}

export const head = (text: string) => text.split("\r\n\r\n")[0]!.toLowerCase();
