// A local OTLP/HTTP receiver, what a collector would be sent: it keeps every JSON body the
// exporters post (gunzipped when they compress) and answers 200. Decoding helpers turn the OTLP
// JSON shapes back into plain values for assertions.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { expect } from "vitest";

export type OtlpValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } };
export type OtlpAttribute = { key: string; value: OtlpValue };
export type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; startTimeUnixNano?: string | number; attributes?: OtlpAttribute[]; status?: { code?: number; message?: string } };
export type OtlpPoint = { attributes?: OtlpAttribute[]; count?: number | string; sum?: number; explicitBounds?: number[]; asDouble?: number; asInt?: number | string };
export type OtlpMetric = { name: string; unit?: string; histogram?: { dataPoints: OtlpPoint[] }; sum?: { dataPoints: OtlpPoint[]; isMonotonic?: boolean } };
export type OtlpResource = { resource?: { attributes?: OtlpAttribute[] } };
export type TracesBody = { resourceSpans: (OtlpResource & { scopeSpans: { spans: OtlpSpan[] }[] })[] };
export type MetricsBody = { resourceMetrics: (OtlpResource & { scopeMetrics: { metrics: OtlpMetric[] }[] })[] };

export type ReceivedExport = { path: string; body: unknown };

export type OtlpReceiver = {
  /** Every export received, in arrival order; empty it with `received.length = 0`. */
  readonly received: ReceivedExport[];
  /** Starts listening on a free port of 127.0.0.1; resolves to the origin (`http://127.0.0.1:PORT`). */
  listen(): Promise<string>;
  /** Every span posted to `path`, flattened across bodies, resources and scopes. */
  spans(path?: string): OtlpSpan[];
  /**
   * The metrics posted to `path` by name. Exports are cumulative, so where several bodies carry
   * the same metric the latest one wins.
   */
  metrics(path?: string): Map<string, OtlpMetric>;
  /** Polls until `ready()` is true; throws, naming `what`, after `timeoutMs`. */
  waitFor(ready: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

/** A receiver that is not listening yet: call `listen()` (usually in beforeAll). */
export function createOtlpReceiver(): OtlpReceiver {
  const received: ReceivedExport[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let bytes = Buffer.concat(chunks);
      if (request.headers["content-encoding"] === "gzip") bytes = gunzipSync(bytes);
      received.push({ path: request.url ?? "", body: JSON.parse(bytes.toString("utf8")) });
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
  });

  return {
    received,
    async listen() {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    spans(path = "/v1/traces") {
      return received
        .filter((item) => item.path === path)
        .flatMap((item) => (item.body as TracesBody).resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)));
    },
    metrics(path = "/v1/metrics") {
      const bodies = received.filter((item) => item.path === path).map((item) => item.body as MetricsBody);
      const all = bodies.flatMap((body) => body.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics)));
      return new Map(all.map((metric) => [metric.name, metric]));
    },
    async waitFor(ready, what, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!ready()) {
        if (Date.now() > deadline) throw new Error(`OTLP receiver: no ${what} after ${timeoutMs} ms (received: ${received.map((item) => item.path).join(", ") || "nothing"})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function decodeValue(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(decodeValue);
  return undefined;
}

export function decodeAttributes(attributes: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, decodeValue(value)]));
}

/** The one data point whose attributes are exactly `attributes` (fails the test otherwise). */
export function pointWith(points: OtlpPoint[], attributes: Record<string, unknown>): OtlpPoint {
  const matches = points.filter((point) => JSON.stringify(sortKeys(decodeAttributes(point.attributes))) === JSON.stringify(sortKeys(attributes)));
  expect(matches, `one data point with ${JSON.stringify(attributes)}`).toHaveLength(1);
  return matches[0]!;
}

export function sortKeys(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
}
