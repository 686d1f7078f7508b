import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { afterAll } from "vitest";

/** A reader that exports nothing: a test calls `collect()` when it wants the points. */
class CollectOnlyReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/**
 * The OpenTelemetry metrics SDK registered globally for a test file (before the gateway's
 * telemetry takes its meter), and taken down after it.
 */
export function useTestMeterProvider(): MetricReader {
  const reader = new CollectOnlyReader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  afterAll(async () => {
    await provider.shutdown();
    metrics.disable();
  });
  return reader;
}
