import "server-only";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type TextMapGetter, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";

export interface TracingSettings {
  /** OTLP/HTTP traces endpoint; absent, nothing is exported (trace ids of incoming `traceparent`s are still recorded). */
  endpoint?: string;
  headers: Record<string, string>;
  serviceName: string;
  sampleRatio: number;
  exportDelayMs: number;
}

/** One span of a run's trace, or a stand-in when tracing is off. */
export interface TraceSpan {
  /** The trace this span belongs to (a caller's `traceparent`, or a new one); null when tracing is off and none came in. */
  readonly traceId: string | null;
  /** This span as a W3C `traceparent`, to continue the trace later (queued runs, callback deliveries). */
  readonly traceparent: string | null;
  child(name: string, attributes?: Attributes, kind?: "client" | "internal"): TraceSpan;
  set(attributes: Attributes): void;
  /** Marks the span failed with a stable error code (`error.type`). */
  fail(code: string, message: string): void;
  end(): void;
}

const propagator = new W3CTraceContextPropagator();
const getter: TextMapGetter<Record<string, string>> = { keys: (carrier) => Object.keys(carrier), get: (carrier, key) => carrier[key] };

/** The parent a `traceparent` names, if it is well formed. */
function parentOf(traceparent: string | null | undefined) {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, getter);
}

class OtelSpan implements TraceSpan {
  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {}
  get traceId() {
    return this.span.spanContext().traceId;
  }
  get traceparent() {
    const c = this.span.spanContext();
    return `00-${c.traceId}-${c.spanId}-${c.traceFlags.toString(16).padStart(2, "0")}`;
  }
  child(name: string, attributes?: Attributes, kind: "client" | "internal" = "internal"): TraceSpan {
    const span = this.tracer.startSpan(name, { attributes, kind: kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL }, trace.setSpan(ROOT_CONTEXT, this.span));
    return new OtelSpan(this.tracer, span);
  }
  set(attributes: Attributes) {
    this.span.setAttributes(attributes);
  }
  fail(code: string, message: string) {
    this.span.setAttribute("error.type", code);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  end() {
    this.span.end();
  }
}

/** Tracing off: no spans, but the trace a caller sent is still known (logs and runs record it). */
class Untraced implements TraceSpan {
  constructor(readonly traceId: string | null, readonly traceparent: string | null) {}
  child(): TraceSpan {
    return this;
  }
  set() {}
  fail() {}
  end() {}
}

/**
 * OpenTelemetry traces of runs, exported over OTLP/HTTP when configured. The provider is this
 * module's own (not registered globally): spans are parented explicitly, so Next.js's and other
 * libraries' instrumentation is neither needed nor disturbed.
 */
export class Tracing {
  private readonly provider: BasicTracerProvider | null;
  private readonly tracer: Tracer | null;

  constructor(settings: TracingSettings, version: string) {
    if (!settings.endpoint) {
      this.provider = null;
      this.tracer = null;
      return;
    }
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": settings.serviceName, "service.version": version }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.endpoint, headers: settings.headers }), { scheduledDelayMillis: settings.exportDelayMs }),
      ],
    });
    this.tracer = this.provider.getTracer("genserve", version);
  }

  get enabled(): boolean {
    return this.tracer !== null;
  }

  /** A span continuing `traceparent` (a caller's header, or one recorded earlier), or starting a trace. */
  start(name: string, traceparent: string | null | undefined, attributes?: Attributes, kind: "server" | "client" | "internal" = "internal"): TraceSpan {
    const parent = parentOf(traceparent);
    if (!this.tracer) {
      const context = trace.getSpanContext(parent);
      return new Untraced(context?.traceId ?? null, traceparent && context ? traceparent : null);
    }
    const spanKind = kind === "server" ? SpanKind.SERVER : kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return new OtelSpan(this.tracer, this.tracer.startSpan(name, { attributes, kind: spanKind }, parent));
  }

  /** Sends what is buffered and stops. */
  async shutdown(): Promise<void> {
    await this.provider?.shutdown().catch(() => undefined);
  }
}
