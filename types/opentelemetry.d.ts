// Types of `prism-tools-native/opentelemetry`: the API of `@arnilo/prism-observability-opentelemetry`
// 0.3.0, plus `secrets` / `redactor` on the options. See docs/observability.md.
import type { AgentEvent, SecretRedactor } from "./harness";

export type PrismSpanStatus = "ok" | "error";
export type PrismSpanKind = "internal" | "client";
/** An OpenTelemetry `Context` (or anything the host's tracer takes as the parent context). */
export type PrismContext = unknown;

export interface PrismSpan {
  setAttribute(key: string, value: string | number | boolean): void;
  setStatus(code: PrismSpanStatus, message?: string): void;
  addEvent?(name: string, attributes?: Readonly<Record<string, string | number | boolean>>): void;
  spanContext?(): { readonly traceId: string; readonly spanId: string };
  end(): void;
}

export interface PrismTracer {
  startSpan(
    name: string,
    options?: {
      readonly attributes?: Readonly<Record<string, string | number | boolean>>;
      readonly kind?: PrismSpanKind;
      readonly parent?: PrismSpan;
      readonly parentContext?: PrismContext;
    },
  ): PrismSpan;
}

export interface PrismCounter {
  add(value: number, attributes?: Readonly<Record<string, string>>): void;
}
export interface PrismHistogram {
  record(value: number, attributes?: Readonly<Record<string, string>>): void;
}
export interface PrismMeter {
  createCounter(name: string, options?: { readonly description?: string; readonly unit?: string }): PrismCounter;
  createHistogram(name: string, options?: { readonly description?: string; readonly unit?: string }): PrismHistogram;
}

export interface TraceReference {
  readonly runId: string;
  readonly traceId: string;
}

export interface TelemetryFieldPolicyInput {
  readonly path: string;
  readonly label?: string;
  readonly kind: "string" | "number" | "boolean" | "null" | "array" | "object";
  readonly destination: string;
  readonly direction: "inbound" | "outbound";
  readonly tenantId?: string;
  readonly purpose?: string;
}
export interface TelemetryFieldPolicyDecision {
  readonly action: "allow" | "redact" | "tokenize" | "deny";
  readonly reason?: string;
}
/** Decides each exported attribute: `allow` keeps it, `redact` masks it, `tokenize` hashes a string, `deny` drops it. */
export type TelemetryFieldPolicy = (input: TelemetryFieldPolicyInput) => TelemetryFieldPolicyDecision;

export interface OpenTelemetryInstrumentationOptions {
  /** `false`: a no-op adapter. Also a no-op without `tracer` and `meter`. */
  readonly enabled?: boolean;
  readonly tracer?: PrismTracer;
  readonly meter?: PrismMeter;
  /** The parent of each run's `invoke_agent prism` span (a value, or computed from `agent_started`). */
  readonly parentContext?: PrismContext | ((event: { type: "agent_started"; sessionId: string; runId: string }) => PrismContext | undefined);
  /** Called with each run's trace id when its span starts. */
  readonly onTraceReference?: (reference: TraceReference) => void;
  /** Run ids whose trace id `traceId(runId)` remembers (default 1 024, at most 10 000). */
  readonly maxTraceReferences?: number;
  /** Gets what a failing tracer, meter or exporter threw; the run never sees it. */
  readonly onExporterError?: (error: unknown) => void;
  readonly fieldPolicy?: TelemetryFieldPolicy;
  /** Strings replaced by `[REDACTED]` in every exported string attribute and status message. */
  readonly secrets?: readonly string[];
  /** Applied to every exported string attribute and status message (e.g. `createSecretRedactor(secrets)`). */
  readonly redactor?: SecretRedactor;
}

export interface RunFeedbackTelemetry {
  readonly runId: string;
  readonly rating?: number;
  readonly hasComment: boolean;
  readonly tagCount: number;
  readonly scorerCount: number;
  readonly evaluationCount: number;
}
export interface EvaluationTelemetry {
  readonly runId: string;
  readonly name?: string;
  readonly status: "scored" | "skipped" | "failed";
  readonly score?: number;
  readonly hasReason: boolean;
}
export type DelegationTelemetry =
  | { readonly type: "started"; readonly runId: string; readonly delegationId: string; readonly childId: string }
  | {
      readonly type: "finished" | "error" | "rejected";
      readonly runId: string;
      readonly delegationId: string;
      readonly childId: string;
      readonly message?: string;
    };

export interface OpenTelemetryInstrumentation {
  readonly enabled: boolean;
  handleAgentEvent(event: AgentEvent): void;
  handleDelegation(event: DelegationTelemetry): void;
  handleRunFeedback(feedback: RunFeedbackTelemetry): void;
  handleEvaluation(evaluation: EvaluationTelemetry): void;
  /** The trace id of a run whose span started (the last `maxTraceReferences` runs). */
  traceId(runId: string): string | undefined;
  /** Reads `session.subscribe()` until the returned function is called; that closes the session's open spans. */
  attachSession(session: { readonly id: string; subscribe(): AsyncIterable<AgentEvent> }): () => void;
}

export interface RecordedSpan {
  readonly name: string;
  readonly kind?: PrismSpanKind;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly attributes: Record<string, string | number | boolean>;
  readonly status?: { readonly code: PrismSpanStatus; readonly message?: string };
  readonly ended: boolean;
  readonly events: readonly { readonly name: string; readonly attributes: Record<string, string | number | boolean> }[];
}
export interface RecordedMetric {
  readonly name: string;
  readonly kind: "counter" | "histogram";
  readonly value: number;
  readonly attributes: Record<string, string>;
}
export interface InMemoryTelemetry {
  readonly tracer: PrismTracer;
  readonly meter: PrismMeter;
  readonly spans: readonly RecordedSpan[];
  readonly metrics: readonly RecordedMetric[];
  clear(): void;
}

export interface OpenTelemetryContextApi {
  active(): unknown;
}
export interface OpenTelemetryTraceApi {
  setSpan(context: unknown, span: any): unknown;
}

/** The shapes of `@opentelemetry/api`'s `Tracer`, `Span` and `Meter` that the adapter uses. */
export interface OpenTelemetrySpanLike {
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  addEvent?(name: string, attributes?: Record<string, string | number | boolean>): unknown;
  spanContext?(): { traceId: string; spanId: string };
  end(): void;
}
export interface OpenTelemetryTracerLike {
  startSpan(name: string, options?: { attributes?: Record<string, string | number | boolean>; kind?: number }, context?: any): OpenTelemetrySpanLike;
}
export interface OpenTelemetryMeterLike {
  createCounter(name: string, options?: { description?: string; unit?: string }): { add(value: number, attributes?: Record<string, string>): void };
  createHistogram(name: string, options?: { description?: string; unit?: string }): { record(value: number, attributes?: Record<string, string>): void };
}

export declare function createOpenTelemetryInstrumentation(options?: OpenTelemetryInstrumentationOptions): OpenTelemetryInstrumentation;
export declare function createInMemoryTelemetry(): InMemoryTelemetry;
/**
 * An `@opentelemetry/api` tracer (and meter) as a PrismTracer (PrismMeter). `api` (`{ context, trace }`) sets a child
 * span's parent; without it the installed `@opentelemetry/api` is used when it loads.
 */
export declare function wrapOpenTelemetryApi(
  tracer: OpenTelemetryTracerLike,
  meter?: OpenTelemetryMeterLike,
  api?: { readonly context: OpenTelemetryContextApi; readonly trace: OpenTelemetryTraceApi },
): { tracer: PrismTracer; meter?: PrismMeter };
