/**
 * provider_2's usage object (Anthropic Messages) → the one Usage value. Exported for every door
 * that speaks to provider_2 (the chat adapter here, the Messages route's native passthrough), so
 * cache reads and 5-minute / 1-hour writes are read the same way everywhere.
 */
import type { Usage } from '../../shared/chat-wire.ts';
import { reportedUsage, tokenCount } from '../../shared/usage.ts';

/** The fields of Anthropic's `usage` that billing reads (answers, `message_start`, `message_delta`). */
export interface AnthropicUsageWire {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_creation?: { ephemeral_5m_input_tokens?: unknown; ephemeral_1h_input_tokens?: unknown } | null;
}

/**
 * `input_tokens` excludes the cache, so prompt = input + cache writes + cache reads; output
 * includes thinking (not reported apart). Writes are split by `cache_creation` when it comes;
 * any write it does not account for is a 5-minute write (the default lifetime).
 */
export function anthropicUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as AnthropicUsageWire;
  if (typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return undefined;
  const split = typeof u.cache_creation === 'object' && u.cache_creation !== null ? u.cache_creation : {};
  const long = tokenCount(split.ephemeral_1h_input_tokens);
  const writes = Math.max(tokenCount(u.cache_creation_input_tokens), tokenCount(split.ephemeral_5m_input_tokens) + long);
  const read = tokenCount(u.cache_read_input_tokens);
  return reportedUsage({
    promptTokens: tokenCount(u.input_tokens) + writes + read,
    completionTokens: tokenCount(u.output_tokens),
    cacheReadTokens: read,
    cacheWrite5mTokens: writes - long,
    cacheWrite1hTokens: long,
  });
}
