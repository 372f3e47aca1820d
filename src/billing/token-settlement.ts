/**
 * How a token-priced run closes, the same on every door (chat, Messages, Responses): the
 * provider's usage (or about 4 characters per token where it reports none) billed at the
 * answering model's prices, reported to the metrics and the request's log line; a failed run
 * refunded with its code noted and a provider failure counted.
 */
import type { TokenPrices } from '../catalog/pricing.ts';
import type { Usage } from '../shared/chat-wire.ts';
import type { GatewayError } from '../shared/errors.ts';
import { noteOutcome, type RunLabels, type RunMetrics } from '../shared/run-metrics.ts';
import { cacheWriteTokens, uncachedTokens, usageUnits } from '../shared/usage.ts';
import type { PaidRun } from './paid-run.ts';
import { tokenCost } from './tokens.ts';

/** Where a run reports: its metrics and the request's raw response (the log line reads what is noted on it). */
export interface RunReport {
  metrics: RunMetrics;
  res: object;
}

/** Uncached input, cache reads, each lifetime of cache writes and output, each at its own price (a null cache price is the input price). */
export function costOf(prices: TokenPrices, usage: Usage): number {
  return tokenCost(prices, {
    input: uncachedTokens(usage),
    cacheRead: usage.cacheReadTokens,
    cacheWrite: usage.cacheWrite5mTokens,
    cacheWrite1h: usage.cacheWrite1hTokens,
    output: usage.completionTokens,
  });
}

/** About 4 characters per token (the spec's estimate where a provider reports no usage). */
export function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** Usage from the provider, or the input estimate and about 4 characters per output token where it reports none. */
export function usageOrEstimate(usage: Usage | undefined, inputTokens: number, outputChars: number): Usage {
  return usage ?? { promptTokens: inputTokens, completionTokens: charsToTokens(outputChars) };
}

/**
 * What a stream has used: the provider's last counts (provider_2 reports the input, cache parts apart, before
 * any text, so a stream the client closes bills them) plus the output sent after them (`outputChars` in all,
 * `charsCounted` of them when the counts came), about 4 characters a token; without counts, the estimate.
 */
export function usageSoFar(usage: Usage | undefined, inputTokens: number, outputChars: number, charsCounted: number): Usage {
  const after = charsToTokens(outputChars - charsCounted);
  if (usage === undefined || after === 0) return usageOrEstimate(usage, inputTokens, outputChars);
  return { ...usage, completionTokens: usage.completionTokens + after };
}

/** Bills the usage at `prices` and reports it (metrics, the request's log line); the charge in micro-credits. */
export async function settleTokens(
  run: PaidRun,
  report: RunReport,
  labels: RunLabels,
  prices: TokenPrices,
  usage: Usage,
  status: 'succeeded' | 'canceled',
  upstreamMs: number,
): Promise<number> {
  const charged = await run.settle(costOf(prices, usage), usageUnits(usage), status);
  const tokens = { inputTokens: usage.promptTokens, outputTokens: usage.completionTokens, cacheReadTokens: usage.cacheReadTokens, reasoningTokens: usage.reasoningTokens };
  report.metrics.runSettled({ ...labels, ...tokens, cacheWriteTokens: cacheWriteTokens(usage), microCredits: charged });
  noteOutcome(report.res, { ...tokens, cacheWrite5mTokens: usage.cacheWrite5mTokens, cacheWrite1hTokens: usage.cacheWrite1hTokens, microCredits: charged, upstreamMs });
  return charged;
}

const UPSTREAM_CODES = new Set(['upstream_error', 'upstream_rate_limited', 'provider_timeout', 'provider_rejected_request', 'model_unavailable']);

/** A failed run: refunded, its code noted, a provider failure counted against `provider`. */
export async function refundFailedRun(run: PaidRun, report: RunReport, provider: string, error: GatewayError): Promise<void> {
  await run.refund(error.code);
  noteOutcome(report.res, { code: error.code, ...(error.logCause === undefined ? {} : { cause: error.logCause }) });
  if (UPSTREAM_CODES.has(error.code)) report.metrics.upstreamError(provider, error.code);
}
