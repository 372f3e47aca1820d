/**
 * The run tracer over the official OpenTelemetry SDK, exporting over OTLP/HTTP (JSON) to
 * `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`. Loaded only when that variable is set.
 * Names follow the GenAI semantic conventions: a span `{operation} {model}`, attributes
 * gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model,
 * gen_ai.usage.input_tokens / output_tokens, error.type, server.address / server.port; the
 * gateway's own facts under `gateway.*` (key index, attempt number, retry reason).
 */
import { SpanKind, SpanStatusCode, trace, ROOT_CONTEXT, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { AttemptEnd, AttemptSpan, AttemptStart, RunEnd, RunSpan, RunStart, RunTracer } from './run-tracer.ts';

export interface OtlpOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL. */
  endpoint: string;
  serviceName: string;
  serviceVersion: string;
}

export function otlpTracer(options: OtlpOptions): RunTracer {
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('model-gateway', options.serviceVersion);
  return {
    startRun: (facts) => new OtlpRunSpan(tracer, facts),
    close: () => provider.shutdown(),
  };
}

class OtlpRunSpan implements RunSpan {
  private readonly span: Span;

  constructor(private readonly tracer: Tracer, private readonly start: RunStart) {
    this.span = tracer.startSpan(`${start.operation} ${start.requestedModel}`, {
      kind: SpanKind.SERVER,
      attributes: { 'gen_ai.operation.name': start.operation, 'gen_ai.request.model': start.requestedModel, 'gateway.job_id': start.jobId },
    });
  }

  attempt(facts: AttemptStart): AttemptSpan {
    const span = this.tracer.startSpan(`${facts.operation} ${facts.providerModelId}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': facts.operation,
        'gen_ai.provider.name': facts.providerName,
        'gen_ai.request.model': facts.providerModelId,
        'server.address': facts.serverAddress,
        'server.port': facts.serverPort,
        'gateway.model': facts.model,
        'gateway.provider': facts.provider,
        'gateway.key_index': facts.keyIndex,
        'gateway.attempt': facts.number,
      },
    }, trace.setSpan(ROOT_CONTEXT, this.span));
    return { end: (end) => endAttempt(span, facts, end) };
  }

  end(facts: RunEnd): void {
    const attributes: Attributes = {};
    if (facts.responseModel !== undefined) attributes['gen_ai.response.model'] = facts.responseModel;
    setUsage(attributes, facts);
    if (facts.errorType !== undefined) {
      attributes['error.type'] = facts.errorType;
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: facts.errorType });
    }
    this.span.setAttributes(attributes);
    this.span.end();
  }
}

function endAttempt(span: Span, start: AttemptStart, facts: AttemptEnd): void {
  const attributes: Attributes = {};
  if (facts.status > 0) attributes['http.response.status_code'] = facts.status;
  if (facts.errorType === undefined) attributes['gen_ai.response.model'] = start.providerModelId;
  setUsage(attributes, facts);
  if (facts.retryReason !== undefined) attributes['gateway.retry_reason'] = facts.retryReason;
  if (facts.errorType !== undefined) {
    attributes['error.type'] = facts.errorType;
    span.setStatus({ code: SpanStatusCode.ERROR, message: facts.errorType });
  }
  span.setAttributes(attributes);
  span.end();
}

function setUsage(attributes: Attributes, facts: { inputTokens?: number; outputTokens?: number }): void {
  if (facts.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = facts.inputTokens;
  if (facts.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = facts.outputTokens;
}
