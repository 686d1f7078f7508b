// The rig of the OpenTelemetry end-to-end tests: msw stand-ins for the clouds, a local OTLP/HTTP
// receiver as the collector, and a real gateway with the SDK switched on by
// OTEL_EXPORTER_OTLP_ENDPOINT. Each test starts its own gateway and closes it before asserting:
// close() shuts the SDK down, which exports every ended span and the cumulative metrics once more.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { startGateway, type RunningGateway } from "../../src/node/serve.ts";
import { ANTHROPIC_KEY, APP_KEY, OPENAI_KEY, testConfig } from "./gateway.ts";
import { startMockProviders, type MockProviders } from "./msw/index.ts";
import { createOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.ts";

export type TelemetryRig = {
  mocks: MockProviders;
  receiver: OtlpReceiver;
  /** The running gateway's log lines, from this test only. */
  log: string[];
  gateway: RunningGateway | undefined;
  /** Starts a gateway on `config` (the test config by default) and an OpenAI client for it. */
  start(config?: object): Promise<{ gateway: RunningGateway; openai: OpenAI; ledgerPath: string }>;
  /** Closes the running gateway, which flushes the SDK to the receiver. */
  close(): Promise<void>;
};

export function useTelemetryGateway(): TelemetryRig {
  let receiverUrl = "";
  let directory = "";
  const rig: TelemetryRig = {
    mocks: undefined as unknown as MockProviders,
    receiver: createOtlpReceiver(),
    log: [],
    gateway: undefined,
    async start(config = testConfig()) {
      const ledgerPath = join(directory, `ledger-${randomUUID()}.jsonl`);
      const gateway = await startGateway({
        config: { ...config, store: { path: ledgerPath } },
        port: 0,
        upstreamTransport: "fetch",
        env: {
          OPENAI_API_KEY: OPENAI_KEY,
          ANTHROPIC_API_KEY: ANTHROPIC_KEY,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
          // No periodic export during the test: the metrics arrive once, from the shutdown flush.
          OTEL_METRIC_EXPORT_INTERVAL: "600000",
        },
        log: (line) => rig.log.push(line),
      });
      rig.gateway = gateway;
      return { gateway, openai: new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: APP_KEY, maxRetries: 0 }), ledgerPath };
    },
    async close() {
      const running = rig.gateway;
      rig.gateway = undefined;
      await running?.close();
    },
  };
  beforeAll(async () => {
    rig.mocks = startMockProviders();
    receiverUrl = await rig.receiver.listen();
    directory = await mkdtemp(join(tmpdir(), "tollgate-telemetry-"));
  });
  beforeEach(() => {
    rig.receiver.received.length = 0;
    rig.log.length = 0;
  });
  afterEach(async () => {
    // A test that failed before closing its gateway must still unregister the global providers,
    // or the next gateway's SDK in this process would refuse to start.
    await rig.close();
    rig.mocks.openai.reset();
    rig.mocks.anthropic.reset();
  });
  afterAll(async () => {
    rig.mocks?.close();
    await rig.receiver.close();
    await rm(directory, { recursive: true, force: true });
  });
  return rig;
}
