/**
 * The one Usage value (chat-wire.ts) built from a provider's reported counts, and read back as
 * its billed parts. Every adapter and door goes through `reportedUsage`, so a count is present
 * only when the provider reported some, and the parts never add up to more than their whole.
 */
import type { Usage } from './chat-wire.ts';

export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens?: unknown;
  cacheWrite5mTokens?: unknown;
  cacheWrite1hTokens?: unknown;
  reasoningTokens?: unknown;
}

/** A provider's count: a non-negative integer, else none. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * Usage from a provider's counts. Cache parts are kept only when positive and are clamped,
 * reads first, to the input they are part of (a provider's inconsistent report never bills
 * a token twice); reasoning likewise within the output.
 */
export function reportedUsage(counts: UsageCounts): Usage {
  const usage: Usage = { promptTokens: counts.promptTokens, completionTokens: counts.completionTokens };
  let left = counts.promptTokens;
  const part = (value: unknown): number => {
    const n = Math.min(tokenCount(value), left);
    left -= n;
    return n;
  };
  const read = part(counts.cacheReadTokens);
  const long = part(counts.cacheWrite1hTokens);
  const short = part(counts.cacheWrite5mTokens);
  if (read > 0) usage.cacheReadTokens = read;
  if (short > 0) usage.cacheWrite5mTokens = short;
  if (long > 0) usage.cacheWrite1hTokens = long;
  const reasoning = Math.min(tokenCount(counts.reasoningTokens), counts.completionTokens);
  if (reasoning > 0) usage.reasoningTokens = reasoning;
  return usage;
}

/** The input tokens neither read from nor written to a cache: billed at the plain input price. */
export function uncachedTokens(usage: Usage): number {
  return usage.promptTokens - (usage.cacheReadTokens ?? 0) - cacheWriteTokens(usage);
}

/**
 * A token run's usage as the job record keeps it (UsageUnits): prompt and completion tokens, and
 * the cache and reasoning parts the provider reported (named after their catalog prices).
 */
export function usageUnits(usage: Usage): Record<string, number> {
  const units: Record<string, number> = { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens };
  if (usage.cacheReadTokens !== undefined) units.cache_read_tokens = usage.cacheReadTokens;
  if (usage.cacheWrite5mTokens !== undefined) units.cache_write_tokens = usage.cacheWrite5mTokens;
  if (usage.cacheWrite1hTokens !== undefined) units.cache_write_1h_tokens = usage.cacheWrite1hTokens;
  if (usage.reasoningTokens !== undefined) units.reasoning_tokens = usage.reasoningTokens;
  return units;
}

/** Every cache write of a run, whatever its lifetime. */
export function cacheWriteTokens(usage: Usage): number {
  return (usage.cacheWrite5mTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
}
