import { metrics, propagation, trace, type TextMapPropagator } from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector, resourceFromAttributes, serviceInstanceIdDetector } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

// The Node server's OpenTelemetry SDK: OTLP over HTTP with the exporters' default JSON encoding,
// configured from the standard OTEL_* variables. Only the Node entry loads this; the gateway core
// talks to @opentelemetry/api alone, so the Workers build and embedders never pull in the SDK.
// Nothing starts unless an OTLP endpoint is configured: telemetry is opt-in.

export type TelemetryEnvironment = Record<string, string | undefined>;

export type TelemetryHandle = {
  /** Exports what is pending, stops the exporters and unregisters the global providers. */
  shutdown(): Promise<void>;
  /** Exports every finished span and the current metric values now. */
  forceFlush(): Promise<void>;
};

const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;
const DEFAULT_METRIC_EXPORT_TIMEOUT_MS = 30_000;

export async function setupTelemetry(environment: TelemetryEnvironment, log: (line: string) => void = () => {}): Promise<TelemetryHandle | undefined> {
  if (environment.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const tracesUrl = signalUrl(environment, "TRACES", "v1/traces");
  const metricsUrl = signalUrl(environment, "METRICS", "v1/metrics");
  if (tracesUrl === undefined && metricsUrl === undefined) return undefined;
  // The exporters speak OTLP/HTTP with JSON. A collector reached on its gRPC port (4317) would
  // refuse every export in silence; say so at start-up instead.
  for (const variable of ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"]) {
    const protocol = environment[variable]?.trim().toLowerCase();
    if (protocol && protocol !== "http/json") log(`[tollgate] warning: ${variable}=${protocol} is not what tollgate sends: it exports OTLP over HTTP as JSON (http/json), which a collector's HTTP port (4318) takes`);
  }

  // OTEL_RESOURCE_ATTRIBUTES (deployment.environment.name=prod,…) as the SDK's own detector reads
  // it, from the process environment; a fresh service.instance.id under it, so that several
  // instances' metric streams stay apart unless the operator names them. OTEL_SERVICE_NAME wins
  // over a service.name given there, as the SDK specification says.
  const detected = detectResources({ detectors: [serviceInstanceIdDetector, envDetector] });
  const serviceName = environment.OTEL_SERVICE_NAME?.trim() || String(detected.attributes["service.name"] ?? "") || "tollgate";
  const resource = defaultResource()
    .merge(detected)
    .merge(resourceFromAttributes({ "service.name": serviceName }));

  let tracerProvider: BasicTracerProvider | undefined;
  if (tracesUrl !== undefined) {
    // The URL is passed explicitly so `environment` decides, not whatever process.env holds.
    const exporter = new OTLPTraceExporter({ url: tracesUrl });
    tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  }

  let meterProvider: MeterProvider | undefined;
  if (metricsUrl !== undefined) {
    const exportIntervalMillis = positiveInteger(environment.OTEL_METRIC_EXPORT_INTERVAL) ?? DEFAULT_METRIC_EXPORT_INTERVAL_MS;
    // The reader refuses a timeout longer than its interval.
    const exportTimeoutMillis = Math.min(
      positiveInteger(environment.OTEL_METRIC_EXPORT_TIMEOUT) ?? DEFAULT_METRIC_EXPORT_TIMEOUT_MS,
      exportIntervalMillis,
    );
    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: metricsUrl }),
      exportIntervalMillis,
      exportTimeoutMillis,
    });
    meterProvider = new MeterProvider({ resource, readers: [reader] });
  }

  const shutdownProviders = async () => {
    await Promise.all([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
  };
  // A client's traceparent makes the gateway's spans part of the client's trace.
  const propagator = tracerProvider && propagatorFrom(environment, log);
  const propagatorRegistered = propagator !== undefined && propagation.setGlobalPropagator(propagator);
  const tracesRegistered = tracerProvider === undefined || trace.setGlobalTracerProvider(tracerProvider);
  const metricsRegistered = meterProvider === undefined || metrics.setGlobalMeterProvider(meterProvider);
  if (!tracesRegistered || !metricsRegistered) {
    // The API keeps the first registration and ignores later ones; running unexported providers
    // beside it would silently drop everything, so stop here and say why.
    if (tracesRegistered && tracerProvider) trace.disable();
    if (metricsRegistered && meterProvider) metrics.disable();
    if (propagatorRegistered) propagation.disable();
    await shutdownProviders();
    throw new Error("OpenTelemetry is already set up in this process: shut the earlier setup down first");
  }

  return {
    async forceFlush() {
      await Promise.all([tracerProvider?.forceFlush(), meterProvider?.forceFlush()]);
    },
    async shutdown() {
      try {
        await shutdownProviders();
      } finally {
        // Unregistering lets a later setupTelemetry in the same process (tests, reloads) register again.
        if (tracerProvider) trace.disable();
        if (meterProvider) metrics.disable();
        if (propagatorRegistered) propagation.disable();
      }
    },
  };
}

/**
 * OTEL_PROPAGATORS as the SDK configuration specifies it: a comma list, default
 * "tracecontext,baggage", "none" for none. Only the W3C two ship with tollgate; another name (b3,
 * jaeger, xray) is reported and left out rather than stopping the gateway.
 */
function propagatorFrom(environment: TelemetryEnvironment, log: (line: string) => void): TextMapPropagator | undefined {
  const names = (environment.OTEL_PROPAGATORS?.trim() || "tracecontext,baggage").split(",").map((name) => name.trim().toLowerCase()).filter(Boolean);
  if (names.includes("none")) return undefined;
  const propagators: TextMapPropagator[] = [];
  for (const name of new Set(names)) {
    if (name === "tracecontext") propagators.push(new W3CTraceContextPropagator());
    else if (name === "baggage") propagators.push(new W3CBaggagePropagator());
    else log(`[tollgate] warning: OTEL_PROPAGATORS names "${name}", which tollgate does not ship; it reads "tracecontext" and "baggage"`);
  }
  return propagators.length > 0 ? new CompositePropagator({ propagators }) : undefined;
}

/**
 * The OTLP/HTTP endpoint rule: a signal-specific variable is the full URL as written; the general
 * one is a base to which the signal's path is appended.
 */
function signalUrl(environment: TelemetryEnvironment, signal: "TRACES" | "METRICS", path: string): string | undefined {
  // OTEL_TRACES_EXPORTER=none (or OTEL_METRICS_EXPORTER=none) turns one signal off.
  if (environment[`OTEL_${signal}_EXPORTER`]?.trim().toLowerCase() === "none") return undefined;
  const specific = environment[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim();
  if (specific) return specific;
  const base = environment.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return base.endsWith("/") ? base + path : `${base}/${path}`;
}

function positiveInteger(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const number = Number(value);
  return Number.isInteger(number) && number > 0 ? number : undefined;
}
